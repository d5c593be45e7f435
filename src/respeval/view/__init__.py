"""``respeval view``: a local, read-only web viewer over any run's outputs.

Runs (:mod:`respeval.view.runs`): run summaries (the one schema ``respeval report`` renders),
the per-row files they name (``score``, ``judge``, ``gate``, ``evaluate``), agent results.
Rows (:mod:`respeval.view.store`): queried through DuckDB, so a million-row run pages at once.
Pages (:mod:`respeval.view.pages`): the run list, a run's summary and first rows, the row
table (filter, sort, search), one row with everything known about it (texts, verdicts, the
judge's prompt and raw reply, both orders of a pairwise call, an agent's expected and actual
tool calls), two runs side by side with the flipped rows first.  The app
(:mod:`respeval.view.app`) is a minimal ASGI application; :func:`serve` runs it with uvicorn
(``pip install 'respeval[view]'``), bound to 127.0.0.1 by default.
"""

from respeval.view.app import Viewer
from respeval.view.runs import Run, find_runs
from respeval.view.server import serve

__all__ = ["Run", "Viewer", "find_runs", "serve"]
