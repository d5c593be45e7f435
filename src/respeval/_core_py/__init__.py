"""Pure-Python twin of the compiled core, one module per kernel family, mirrored name for name."""

from respeval._core_py.trajectory import *  # noqa: F403
from respeval._core_py.trajectory import __all__ as _trajectory_all

__all__ = list(_trajectory_all)
