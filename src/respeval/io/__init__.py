"""Files in and out: one module per concern.

* :mod:`~respeval.io.formats` -- the one extension map (text, JSONL, CSV, Parquet, JSON);
* :mod:`~respeval.io.errors` -- :class:`InputError`, :class:`RowError` and ``ON_ERROR``;
* :mod:`~respeval.io.readers` -- chunked, checked readers (:func:`read_columns`) and the one
  JSONL reader every command uses (:func:`read_jsonl`); whole records of JSONL, CSV or
  Parquet (:func:`read_records`);
* :mod:`~respeval.io.writers` -- :class:`ResultWriter` and the Parquet helpers;
* :mod:`~respeval.io.nested` -- nested Parquet values read as the JSON they were written from.
"""

from respeval.io.errors import ON_ERROR, InputError, RowError
from respeval.io.formats import EXTENSIONS, format_of, input_format, resolve_format
from respeval.io.readers import Chunk, count_rows, read_columns, read_jsonl, read_records
from respeval.io.writers import ResultWriter, join_parquet, parquet_writer

__all__ = [
    "EXTENSIONS",
    "ON_ERROR",
    "Chunk",
    "InputError",
    "ResultWriter",
    "RowError",
    "count_rows",
    "format_of",
    "input_format",
    "join_parquet",
    "parquet_writer",
    "read_columns",
    "read_jsonl",
    "read_records",
    "resolve_format",
]
