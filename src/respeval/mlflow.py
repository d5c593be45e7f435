"""respeval in MLflow (implementation: ``respeval/_adapters/mlflow.py``).

::

    import mlflow, respeval, respeval.mlflow
    with mlflow.start_run():
        respeval.mlflow.log_run(respeval.score_table(table, metrics=["rougeL", "bleu"]))
    mlflow.models.evaluate(data=df, predictions="response", targets="reference",
                           extra_metrics=[respeval.mlflow.metric("bleu")])
    mlflow.genai.evaluate(data=rows, scorers=[respeval.mlflow.scorer("rougeL")])

Needs ``pip install 'respeval[mlflow]'``.
"""

from respeval._adapters.mlflow import ARTIFACT_DIR, log_run, metric, metric_key, score_rows, scorer, summary_contents

__all__ = ["ARTIFACT_DIR", "log_run", "metric", "metric_key", "score_rows", "scorer", "summary_contents"]
