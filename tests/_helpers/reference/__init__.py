"""The tests' oracles: slow, readable re-statements of the peers (rouge-score, sacreBLEU's
BLEU, chrF and TER, the official SQuAD scripts).  They share no code with respeval: their
arithmetic is their own and their text rules are the peers' (``tokenizers.py``), so an
agreement between an oracle and the product is evidence, not a tautology
(``tests/typing/test_layout.py`` keeps them so).  Not part of the wheel."""
