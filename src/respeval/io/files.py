"""Output files that are never half-written, never shared by two runs, never an input.

* :class:`OutputLock` -- an exclusive OS lock (``lockf``) on ``OUT.lock`` beside an output,
  held for a whole run; a second run stops at once, naming the holder (pid, host, start).
* :func:`check_outputs` -- refuse, before anything is touched, an output that is one of the
  inputs (same device and inode: symlinks, hard links and other spellings are caught) or
  the same file as another output.
* :func:`atomic_output` / :func:`create_temporary` / :func:`commit` -- results go to a
  temporary file beside the output and are renamed into place only when complete (after an
  ``fsync``), so an existing file is never truncated by a run that has not replaced it.
* :func:`open_new` / :func:`replace_with_new` -- the one way a file is opened for writing:
  created exclusively (``O_EXCL | O_NOFOLLOW``: never through a symbolic link or into an
  existing file planted at the name), with the permissions ``open()`` gives (``0o666``
  less the umask).  Temporary files get a unique random name in the output's directory.
* :func:`check_readable` and :func:`describe_os_error` -- what went wrong with a file, in
  words that say what to do (a symbolic link loop is not "No such file or directory";
  a full disk names the file and says how to continue).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import secrets
import socket
import stat
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from respeval.errors import RespevalError

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PathLike = str | os.PathLike
SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation below the file object
LOCK_SUFFIX = ".lock"


def describe_os_error(exc: OSError, path: str | None = None, *, writing: bool = False, rerun: str = "") -> str:
    """One line naming the file and the cause, with what to do for the causes users can fix.

    ``rerun`` completes "free some space and rerun the same command" (e.g. " with --resume").
    """
    where = path if path is not None else (exc.filename or "a file")
    what = "write" if writing else "read"
    code = exc.errno
    if code == errno.ENOSPC:
        return f"cannot write {where}: no space left on device; free some space and rerun the same command{rerun}"
    if code == errno.EDQUOT:
        return f"cannot write {where}: disk quota exceeded; free some space and rerun the same command{rerun}"
    if code == errno.ELOOP:
        return f"cannot {what} {where}: symbolic link loop (a link that points, directly or not, to itself)"
    if code == errno.EACCES or code == errno.EPERM:
        return f"cannot {what} {where}: permission denied"
    return f"cannot {what} {where}: {exc.strerror or exc}"


def check_readable(path: PathLike) -> os.stat_result:
    """``os.stat(path)``, or a ValueError saying exactly why the file cannot be read."""
    try:
        return os.stat(path)
    except OSError as exc:
        raise FileError(describe_os_error(exc, os.fspath(path))) from exc


class FileError(RespevalError, ValueError):
    """A file that cannot be used as asked (missing, a loop, the input as output, locked...)."""


class OutputError(RespevalError, OSError):
    """Writing an output failed (disk full, permissions...): ``str()`` is the whole message."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @classmethod
    def wrap(cls, exc: OSError, path: PathLike, rerun: str = "") -> OutputError:
        if isinstance(exc, OutputError):
            return exc
        return cls(exc.errno, describe_os_error(exc, os.fspath(path), writing=True, rerun=rerun))


def is_regular(path: PathLike) -> bool:
    """True for a regular file; False for pipes, FIFOs, character devices (``/dev/stdin``)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _identity(path: PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether two paths name one existing file (device and inode; links and spellings alike)."""
    ia, ib = _identity(a), _identity(b)
    return ia is not None and ia == ib


def lock_name(output: PathLike) -> str:
    """The lock file beside an output (:class:`OutputLock`)."""
    return os.fspath(output) + LOCK_SUFFIX


def _inside(path: str, folder: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real != base and real.startswith(base.rstrip(os.sep) + os.sep)


def check_outputs(
    inputs: Iterable[tuple[str, PathLike | None]],
    outputs: Iterable[tuple[str, PathLike | None]],
    *,
    unlocked: Iterable[tuple[str, PathLike | None]] = (),
    scratch: Iterable[tuple[str, PathLike | None]] = (),
) -> None:
    """Refuse an output that is an input, or two outputs that are one file, checking every
    path the run writes: each output, its lock file (``OUT.lock``; not for ``unlocked``
    outputs, such as a SQLite cache, which does its own locking), and the ``scratch`` paths a
    command writes or removes beside them (the judge's ``OUT.partial``, a parts folder: an
    input inside such a folder is refused too).

    ``inputs`` and ``outputs`` are ``(option, path)`` pairs (``("--pred", "x.jsonl")``), so the
    message names the options the user typed.  Called before anything is opened for writing.
    """
    ins = [(name, os.fspath(p)) for name, p in inputs if p is not None]
    locked = [(name, os.fspath(p)) for name, p in outputs if p is not None]
    outs = locked + [(name, os.fspath(p)) for name, p in unlocked if p is not None]
    extra = [(name, os.fspath(p)) for name, p in scratch if p is not None]
    written = [
        *((name, out, name) for name, out in outs),
        *((f"{name}'s lock file", lock_name(out), name) for name, out in locked),
        *((name, path, name.split("'")[0]) for name, path in extra),
    ]
    for label, out, option in written:
        for in_name, src in ins:
            if same_file(out, src):
                raise FileError(
                    f"{label} {out} is the same file as {in_name} {src}: writing it would destroy the "
                    f"input; give {option} another file"
                )
            if os.path.isdir(out) and _inside(src, out):
                raise FileError(
                    f"{in_name} {src} is inside {label} {out}, which the run writes and removes: move the "
                    f"input elsewhere or give {option} another file"
                )
    for i, (name_a, a) in enumerate(outs):
        for name_b, b in outs[i + 1 :]:
            if same_file(a, b) or os.path.realpath(a) == os.path.realpath(b):
                raise FileError(f"{name_a} {a} and {name_b} {b} are the same file: give each its own file")


# --------------------------------------------------------------------------- locks


class LockedError(FileError):
    """Another run holds the lock on an output."""


_HELD: dict[str, OutputLock] = {}  # locks this process holds (POSIX locks do not see them)
_HELD_GUARD = threading.Lock()


class OutputLock:
    """An exclusive OS lock on ``<output>.lock`` for the lifetime of a run.

    A POSIX record lock (``fcntl.lockf``): it belongs to this process, vanishes with it (a run
    killed with SIGKILL never leaves a stale lock: the next run takes it at once) and, unlike
    ``flock``, is not inherited by the worker processes a run forks (which may outlive it).
    A second lock on the same output within this process is refused too.  The holder's pid,
    host and start time are written into the lock file so that a second run can name it.
    The lock file is removed on release.
    """

    def __init__(self, output: PathLike) -> None:
        self.output = os.fspath(output)
        self.path = self.output + ".lock"
        self._fd: int | None = None
        self._key: str | None = None

    def acquire(self) -> OutputLock:
        if fcntl is None:  # pragma: no cover - Windows: no POSIX locks; nothing else to lean on
            return self
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(directory, exist_ok=True)  # an output's folder is created, as for any output
        except OSError as exc:
            raise FileError(describe_os_error(exc, self.output, writing=True)) from exc
        # the folder resolved, not the name: a link planted at OUT.lock is refused, not followed
        key = os.path.join(os.path.realpath(directory), os.path.basename(self.path))
        with _HELD_GUARD:
            if key in _HELD:
                raise LockedError(
                    f"{self.output} is being written by another run in this process ({_holder_text(os.getpid())})"
                )
            _HELD[key] = self
        try:
            self._fd = self._lock_file()
        except BaseException:
            with _HELD_GUARD:
                _HELD.pop(key, None)
            raise
        self._key = key
        return self

    def _lock_file(self) -> int:
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666)
            except OSError as exc:
                if os.path.islink(self.path):
                    raise FileError(_link_refused(self.path, "lock file")) from None
                raise FileError(describe_os_error(exc, self.path, writing=True)) from exc
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                os.close(fd)
                raise FileError(
                    f"{self.path} is not a lock file of respeval's (it is not a plain file, or has other names, "
                    "hard links): remove it and rerun"
                )
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_holder(fd)
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise LockedError(
                        f"{self.output} is being written by another respeval run ({holder}); wait for it to "
                        f"finish or stop it, then rerun (lock: {self.path})"
                    ) from None
                raise FileError(describe_os_error(exc, self.path, writing=True)) from exc
            # The previous holder may have removed the file between our open and our lock:
            # then we hold a lock on an unlinked inode, which protects nothing.  Try again.
            if _identity(self.path) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, _holder_json().encode() + b"\n", 0)
        return fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        # Unlink while still holding the lock, so nobody can lock the file we are removing.
        with contextlib.suppress(OSError):
            if _identity(self.path) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                os.unlink(self.path)
        os.close(fd)
        with _HELD_GUARD:
            _HELD.pop(self._key or "", None)

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _link_refused(path: str, what: str) -> str:
    return (
        f"{path} is a symbolic link: respeval never writes a {what} through one (it could overwrite any file); "
        "remove the link and rerun"
    )


def _holder_json() -> str:
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started})


def _holder_text(pid: int) -> str:
    return f"pid {pid} on {socket.gethostname()}"


def _read_holder(fd: int) -> str:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8") or "{}")
    except (OSError, ValueError):
        data = {}
    if not data:
        return "holder unknown"
    return f"pid {data.get('pid')} on {data.get('host')}, started {data.get('started')}"


@contextlib.contextmanager
def lock_outputs(paths: Iterable[PathLike | None]) -> Iterator[list[OutputLock]]:
    """Lock every output (in a fixed order) for the duration of the block."""
    unique = sorted({os.path.abspath(os.fspath(p)) for p in paths if p is not None})
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(OutputLock(p)) for p in unique]


@contextlib.contextmanager
def guarded_outputs(
    inputs: Iterable[tuple[str, PathLike | None]],
    outputs: Iterable[tuple[str, PathLike | None]],
    *,
    unlocked: Iterable[tuple[str, PathLike | None]] = (),
    scratch: Iterable[tuple[str, PathLike | None]] = (),
) -> Iterator[None]:
    """What every command does before writing: refuse an output that is an input (or two
    outputs that are one file), every path the run writes checked (:func:`check_outputs`),
    then hold the lock on each output for the block.  ``unlocked`` outputs (a SQLite cache,
    which does its own locking) are checked only; ``scratch`` paths are the files and folders
    the command writes beside its outputs."""
    outputs = list(outputs)
    check_outputs(inputs, outputs, unlocked=unlocked, scratch=scratch)
    with lock_outputs([p for _, p in outputs]):
        yield


def partial_name(final: PathLike) -> str:
    """Where a command that writes rows as they finish keeps them until the run completes."""
    return os.fspath(final) + ".partial"


# --------------------------------------------------------------------------- atomic files


def _fsync_directory(directory: str) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def commit(tmp: PathLike, final: PathLike, *, durable: bool = True) -> None:
    """Rename a complete temporary file into place (after flushing it to disk)."""
    tmp, final = os.fspath(tmp), os.fspath(final)
    if durable:
        with contextlib.suppress(OSError):
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    try:
        os.replace(tmp, final)
    except OSError as exc:
        raise OutputError.wrap(exc, final) from exc
    if durable:
        _fsync_directory(os.path.dirname(os.path.abspath(final)))


def open_new(path: PathLike, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None) -> IO[Any]:
    """Create ``path`` and open it for writing; the one way respeval opens a file to write.

    The file must not exist: ``O_CREAT | O_EXCL | O_NOFOLLOW``, so neither a symbolic link
    nor a file (or hard link) planted at the name is ever written through.  Its permissions
    are ``open()``'s, ``0o666`` less the umask.  ``mode`` is ``"w"`` or ``"wb"``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_new writes a new file: mode 'w' or 'wb', not {mode!r}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, 0o666)
    try:
        if "b" in mode:
            return os.fdopen(fd, mode)
        return os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def replace_with_new(
    path: PathLike, mode: str = "w", *, encoding: str | None = "utf-8", newline: str | None = None
) -> IO[Any]:
    """Open a file at a fixed name (the judge's ``OUT.partial``) for writing from scratch:
    whatever is at the name (a previous file, a symbolic link) is removed, never written
    through, and the file is created anew with :func:`open_new`."""
    path = os.fspath(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OutputError.wrap(exc, path) from exc
    try:
        return open_new(path, mode, encoding=encoding, newline=newline)
    except FileExistsError:  # planted again between the two steps
        raise OutputError(errno.EEXIST, f"cannot write {path}: another process keeps creating it") from None
    except OSError as exc:
        raise OutputError.wrap(exc, path) from exc


def create_temporary(
    final: PathLike,
    mode: str = "w",
    *,
    tag: str = "tmp",
    encoding: str | None = "utf-8",
    newline: str | None = None,
) -> tuple[str, IO[Any]]:
    """A new temporary file beside ``final`` (same directory, so the rename is atomic), under
    a unique random name (``.NAME.<random>.TAG``), created with :func:`open_new`: its name and
    the open file."""
    directory, name = os.path.split(os.path.abspath(os.fspath(final)))
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.{tag}")
        try:
            return tmp, open_new(tmp, mode, encoding=encoding, newline=newline)
        except FileExistsError:
            continue
    raise OutputError(errno.EEXIST, f"cannot write {final}: no free temporary name in {directory}")


def refuse_link(path: PathLike, what: str = "output") -> None:
    """A FileError when ``path`` is a symbolic link (a folder a run writes into, a lock)."""
    if os.path.islink(path):
        raise FileError(_link_refused(os.fspath(path), what))


@contextlib.contextmanager
def atomic_output(
    final: PathLike,
    mode: str = "w",
    *,
    encoding: str | None = "utf-8",
    newline: str | None = None,
    durable: bool = True,
) -> Iterator[IO[Any]]:
    """Write ``final`` through a temporary file (:func:`create_temporary`) renamed into place
    when the block succeeds (``durable``: after an ``fsync`` of the file and its folder).

    On an exception the temporary file is removed and ``final`` is left as it was.
    """
    final = os.fspath(final)
    try:
        tmp, fh = create_temporary(final, mode, encoding=encoding, newline=newline)
    except OSError as exc:
        raise OutputError.wrap(exc, final) from exc
    try:
        try:
            with fh:
                yield fh
        except OSError as exc:
            if exc.errno in SPACE_ERRNOS:  # the block's writes (or the close) failed for lack of space
                raise OutputError.wrap(exc, final) from exc
            raise
        commit(tmp, final, durable=durable)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(final: PathLike, text: str) -> Path:
    """``Path(final).write_text(text)``, atomically."""
    with atomic_output(final) as fh:
        fh.write(text)
    return Path(final)


def remove_quietly(paths: Sequence[PathLike]) -> None:
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)
