# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled core of respeval (private: use the public API in ``respeval``).

Entry points validate every buffer and offset they are given, then run C
kernels with the GIL released.  Anything that could index out of bounds is
rejected here with a ValueError, so the kernels carry no checks.

One .pxi per kernel family, each mirrored by a module of the pure-Python twin
``respeval/_core_py/``; the C declarations they share are in kernels.pxd.  A new
family adds a header, a .pxi and one include line below.
"""
from cpython.bytes cimport PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.long cimport PyLong_FromLongLong
from cpython.unicode cimport PyUnicode_Check, PyUnicode_DecodeUTF8
from cpython.version cimport PY_VERSION_HEX
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset

from kernels cimport *

from respeval.limits import RowTooLongError as _RowTooLongError

include "common.pxi"
include "texts.pxi"
include "rouge.pxi"
include "bleu.pxi"
include "chrf.pxi"
include "squad.pxi"
include "ter.pxi"
include "bootstrap.pxi"
include "trajectory.pxi"
include "jsonl.pxi"
include "csvline.pxi"
include "minhash.pxi"
include "adk.pxi"
