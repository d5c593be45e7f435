"""Drop-in for rouge-score 0.1.2: change ``rouge_score`` to ``respeval.compat.rouge_score``.

Modules as in rouge-score: ``rouge_scorer`` (``RougeScorer``), ``scoring`` (``Score``,
``AggregateScore``, ``BaseScorer``, ``BootstrapAggregator``, ``fmeasure``), ``tokenizers``
(``Tokenizer``, ``DefaultTokenizer``), ``tokenize`` (``tokenize``) and ``io``
(``compute_scores_and_write_to_csv``).
"""
