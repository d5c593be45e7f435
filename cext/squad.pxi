# SQuAD's answer normalization (evaluate-v1.1's normalize_answer on lowercased
# text).  Twin: respeval/_core_py/squad.py.


def squad_normalize_tokens(texts):
    """SQuAD v1.1 ``normalize_answer(t).split()`` for texts ALREADY lowercased.

    Pass ``[t.lower() for t in texts]``: the C code does not lowercase.  Returns
    ``list[list[str]]``; ``" ".join(tokens)`` is ``normalize_answer(t)``.
    """
    return _mt_token_lists(texts, _MT_SQUAD)


def squad_normalize_ids(Vocab vocab, texts):
    """``normalize_answer(text).split()`` of every (already lowercased) text, as ids."""
    return _mt_ids(vocab, texts, _MT_SQUAD)
