"""Drop-in replacements for the APIs people already use (rouge-score, sacrebleu)."""
