"""Custom metrics for docs/custom_metrics.md."""

import json


def has_answer_field(row):
    """1 when the response is a JSON object with a non-empty "answer"."""
    try:
        value = json.loads(row["response"])
    except ValueError:
        return 0.0
    return isinstance(value, dict) and bool(value.get("answer"))


def mentions_reference(row):
    """Whether the response mentions the reference, with an explanation."""
    found = row["reference"].lower() in row["response"].lower()
    return {"score": found, "explanation": "found" if found else f"no {row['reference']!r} in the response"}


def scripted_judge(request):
    """An offline judge for the examples: a pairwise verdict or a 1-5 score."""
    system = request.messages[0].content
    if '"winner"' in system:
        return {"reasoning": "B is more precise", "winner": "B"}
    return {"reasoning": "mostly supported", "score": 4}
