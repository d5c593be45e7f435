"""The root of respeval's exception tree.

Every error respeval raises on purpose derives from :class:`RespevalError`, and also from the
built-in class its callers have always caught (``ValueError`` for bad input, ``OSError`` for
files, ``ImportError`` for a missing extra), so ``except respeval.errors.RespevalError`` catches
all of them and older ``except ValueError`` code keeps working.  A leaf: imports nothing."""

from __future__ import annotations

__all__ = ["RespevalError"]


class RespevalError(Exception):
    """Raised by respeval on purpose: bad input, a refused resume, a file that cannot be
    written, a judge that stopped, a sandbox that cannot be set up.  Anything else escaping
    respeval is a bug."""
