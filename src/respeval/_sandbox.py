"""Running untrusted user code: the worker side of the sandbox, and what the in-process path shares.

This module imports nothing from respeval (only the standard library): a sandboxed worker is a
fresh interpreter that runs this file by path, so it never loads respeval's own modules, which
in the parent hold the judge's clients and keys.  The parent side (the pool that starts the
workers, feeds them rows and enforces the time limit) is :mod:`respeval.evaluate.isolation`.

What crosses between the two:

* parent -> worker: frames of pickle (the parent is trusted: the worker's set-up, then lists of
  ``(key, payload)``);
* worker -> parent: frames of JSON only, at most :data:`MAX_RESULT_BYTES` each, decoded in the
  parent with :func:`json.loads` and nothing else, so a result cannot run code there.  Values are
  *plain data* (:func:`to_plain`): None, bools, numbers, strings, lists and dicts with string keys.

A frame is an 8-byte big-endian length followed by that many bytes.

On Linux the worker confines itself before it imports the user's module (see :func:`confine`):
no new privileges, every capability dropped, a seccomp filter that refuses sockets (unless the
network is allowed), process creation, program execution, namespaces, ptrace and signals to other
processes, Landlock rules (read-only access to the code Python needs, writes only to a private
temporary directory; the parent cannot be inspected), and a network namespace of its own where
the kernel allows one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import pickle
import platform
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

MAX_RESULT_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
_HEADER = struct.Struct("!Q")


# --------------------------------------------------------------------------- plain data


class NotPlain(TypeError):
    """A value that is not plain data (its type name is the message)."""


def to_plain(value: Any, *, arrays: bool = False, _depth: int = 0) -> Any:
    """``value`` as plain data: None, bool, int, float, str, list, dict with str keys.

    NumPy scalars and arrays become Python numbers and lists, pyarrow arrays and scalars their
    Python values, tuples lists; subclasses of the built-in types become the built-in types.
    ``arrays=True`` (in process, where nothing crosses a process boundary) keeps NumPy arrays of
    numbers and pyarrow arrays as they are.  Anything else raises :class:`NotPlain`.
    """
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str or kind is int or kind is float:
        return value
    if _depth > MAX_DEPTH:
        raise NotPlain(f"a value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__getitem__(value, slice(None))
    module = getattr(kind, "__module__", "") or ""
    if module == "numpy" or module.startswith("numpy."):
        if arrays and kind.__name__ == "ndarray" and value.dtype.kind in "biuf":
            return value
        if hasattr(value, "tolist"):
            return to_plain(value.tolist(), _depth=_depth + 1)
    if module.startswith("pyarrow"):
        if arrays and hasattr(value, "to_numpy") and hasattr(value, "to_pylist"):
            return value
        if hasattr(value, "to_pylist"):
            return to_plain(value.to_pylist(), _depth=_depth + 1)
        if hasattr(value, "as_py"):
            return to_plain(value.as_py(), _depth=_depth + 1)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotPlain(f"a dict with a {type(key).__name__} key")
            out[str.__getitem__(key, slice(None))] = to_plain(item, arrays=arrays, _depth=_depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [to_plain(item, arrays=arrays, _depth=_depth + 1) for item in value]
    raise NotPlain(_type_name(value))


def _type_name(value: Any) -> str:
    try:
        name = type(value).__name__
    except BaseException:  # noqa: BLE001 - a metaclass may do anything
        return "object"
    return name if type(name) is str else "object"


# --------------------------------------------------------------------------- user code, guarded


def describe_exception(exc: BaseException) -> str:
    """One line saying how a call failed; never raises (a message that cannot be read is said so)."""
    if isinstance(exc, MemoryError):
        return "out of memory (the function went past the memory limit)"
    name = _type_name(exc)
    if isinstance(exc, SystemExit):
        try:
            code = exc.code
            shown = repr(code) if code is None or type(code) in (int, str) else _type_name(code)
        except BaseException:  # noqa: BLE001
            shown = "..."
        return f"called sys.exit({shown[:60]})"
    try:
        text = str(exc)
        if type(text) is not str:
            raise TypeError
    except BaseException:  # noqa: BLE001 - a __str__ that raises must not lose the row's reason
        return f"raised {name} (its message could not be read)"
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    return f"raised {name}: {first}"[:500] if first else f"raised {name}"


_redirect_lock = threading.Lock()
_redirect_depth = 0
_redirect_saved: Any = None


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While user code runs in this process, Python's ``sys.stdout`` is ``sys.stderr``: what it
    prints never reaches the stream a command writes its result to.  Nested and concurrent uses
    (threads, tasks of one event loop) restore the real stream only when the last one ends."""
    global _redirect_depth, _redirect_saved
    with _redirect_lock:
        if _redirect_depth == 0:
            _redirect_saved = sys.stdout
            sys.stdout = sys.stderr
        _redirect_depth += 1
    try:
        yield
    finally:
        with _redirect_lock:
            _redirect_depth -= 1
            if _redirect_depth == 0:
                sys.stdout = _redirect_saved
                _redirect_saved = None


_REFUSAL_HINT = " (refused by the sandbox: no sockets without the network, no new processes, no programs)"


def call(
    fn: Callable[[Any], Any], payload: Any, *, arrays: bool = False, in_process: bool = False, sandboxed: bool = False
) -> tuple[bool, Any]:
    """``fn(payload)`` as ``(True, plain value)`` or ``(False, reason)``, whatever ``fn`` does
    short of ending the process: exceptions of every kind (``SystemExit`` too) and values that are
    not plain data become the reason.  In process, Ctrl-C (``KeyboardInterrupt``) still stops.
    ``sandboxed``: an EPERM says it came from the sandbox."""
    try:
        value = fn(payload)
    except KeyboardInterrupt:
        if in_process:
            raise
        return False, "raised KeyboardInterrupt"
    except BaseException as exc:  # noqa: BLE001 - every failure becomes the row's reason
        reason = describe_exception(exc)
        if sandboxed and isinstance(exc, OSError) and exc.errno == errno.EPERM and "sandbox" not in reason:
            reason = reason[:400] + _REFUSAL_HINT
        return False, reason
    try:
        return True, to_plain(value, arrays=arrays)
    except NotPlain as exc:
        return False, f"returned {exc}, which is not plain data (numbers, strings, bools, None, lists, dicts)"
    except KeyboardInterrupt:
        if in_process:
            raise
        return False, "raised KeyboardInterrupt"
    except BaseException as exc:  # noqa: BLE001 - reading the value ran user code that failed
        return False, f"returned a value that could not be read: {describe_exception(exc)}"


# --------------------------------------------------------------------------- frames


def encode_frame(data: bytes) -> bytes:
    return _HEADER.pack(len(data)) + data


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        try:
            chunk = os.read(fd, min(n, 1 << 20))
        except InterruptedError:
            continue
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes | None:
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exact(fd, size)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[written:]


def encode_answer(key: Any, ok: bool, value: Any) -> bytes:
    """One result as a JSON frame; a value too large (or an integer too long) to send becomes the
    row's reason instead."""
    message = {"k": key, "ok": True, "v": value} if ok else {"k": key, "ok": False, "e": value}
    try:
        data = json.dumps(message, allow_nan=True).encode("ascii")
    except (ValueError, TypeError, RecursionError) as exc:
        reason = "returned an integer too long to send back" if "digits" in str(exc) else f"cannot be sent back: {exc}"
        data = json.dumps({"k": key, "ok": False, "e": reason[:300]}).encode("ascii")
    if len(data) > MAX_RESULT_BYTES:
        reason = f"returned {len(data) / 1e6:.0f} MB of results, past the {MAX_RESULT_BYTES >> 20} MiB limit"
        data = json.dumps({"k": key, "ok": False, "e": reason}).encode("ascii")
    return encode_frame(data)


# --------------------------------------------------------------------------- Linux: the confinement

_PR_SET_PDEATHSIG = 1
_PR_GET_SECCOMP = 21
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2
_SECCOMP_GET_ACTION_AVAIL = 2
_SECCOMP_RET_KILL_PROCESS = 0x80000000
_SECCOMP_RET_ERRNO = 0x00050000
_SECCOMP_RET_ALLOW = 0x7FFF0000
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_CLONE_THREAD = 0x00010000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
# securebits: NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each with its lock
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80

_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_NR_LANDLOCK_CREATE_RULESET, _NR_LANDLOCK_ADD_RULE, _NR_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 14, 1 << 15
_FS_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_REFER = 1 << 13
_FS_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2

# System calls by architecture: (AUDIT_ARCH_*, {name: number}).  Numbers from 403 up are the
# same on every architecture.
_COMMON = {
    "pidfd_send_signal": 424,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_open": 434,
    "clone3": 435,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "mount_setattr": 442,
}
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "ioctl": 16,
            "socket": 41,
            "socketpair": 53,
            "clone": 56,
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "kill": 62,
            "ptrace": 101,
            "rt_sigqueueinfo": 129,
            "vhangup": 153,
            "pivot_root": 155,
            "chroot": 161,
            "acct": 163,
            "mount": 165,
            "umount2": 166,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "iopl": 172,
            "ioperm": 173,
            "init_module": 175,
            "delete_module": 176,
            "tkill": 200,
            "tgkill": 234,
            "kexec_load": 246,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "rt_tgsigqueueinfo": 297,
            "perf_event_open": 298,
            "open_by_handle_at": 304,
            "setns": 308,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "finit_module": 313,
            "seccomp": 317,
            "kexec_file_load": 320,
            "bpf": 321,
            "execveat": 322,
            "userfaultfd": 323,
            **_COMMON,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "ioctl": 29,
            "umount2": 39,
            "mount": 40,
            "pivot_root": 41,
            "chroot": 51,
            "vhangup": 58,
            "acct": 89,
            "unshare": 97,
            "kexec_load": 104,
            "init_module": 105,
            "delete_module": 106,
            "ptrace": 117,
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "reboot": 142,
            "socket": 198,
            "socketpair": 199,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "clone": 220,
            "execve": 221,
            "swapon": 224,
            "swapoff": 225,
            "rt_tgsigqueueinfo": 240,
            "perf_event_open": 241,
            "open_by_handle_at": 265,
            "setns": 268,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kcmp": 272,
            "finit_module": 273,
            "seccomp": 277,
            "bpf": 280,
            "execveat": 281,
            "userfaultfd": 282,
            "kexec_file_load": 294,
            **_COMMON,
        },
    ),
}
_X32_SYSCALL_BIT = 0x40000000

# Refused outright (EPERM): program execution, namespaces, mounts, tracing and reading other
# processes, kernel keyrings, modules and other administration, io_uring (it creates sockets and
# files without the system calls this filter sees).
_REFUSED = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "setns",
    "unshare",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "tkill",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "vhangup",
    "iopl",
    "ioperm",
    "open_by_handle_at",
)
_SOCKETS = ("socket", "socketpair")


def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _args(args: tuple[Any, ...]) -> list[Any]:
    # variadic C arguments: an int must travel as a full register (long), not as a C int
    return [ctypes.c_ulong(a & 0xFFFFFFFFFFFFFFFF) if isinstance(a, int) else a for a in args]


def _syscall(libc: Any, nr: int, *args: Any) -> int:
    return int(libc.syscall(ctypes.c_long(nr), *_args(args)))


def _prctl(libc: Any, option: int, *args: Any) -> int:
    return int(libc.prctl(ctypes.c_int(option), *_args(args + (0,) * (4 - len(args)))))


def _arch() -> tuple[int, dict[str, int]] | None:
    if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    return _ARCHES.get(platform.machine())


def probe() -> dict[str, Any]:
    """What this machine can confine (asked without changing anything): ``seccomp`` (bool),
    ``landlock`` (the Landlock ABI version, 0 if none) and ``why`` (why seccomp is not there)."""
    arch = _arch()
    if arch is None:
        return {"seccomp": False, "landlock": 0, "why": f"{sys.platform} {platform.machine()} has no seccomp filter"}
    libc = _libc()
    seccomp_ok, why = True, ""
    if _prctl(libc, _PR_GET_SECCOMP) < 0:
        seccomp_ok, why = False, f"the kernel has no seccomp ({os.strerror(ctypes.get_errno())})"
    else:
        action = ctypes.c_uint32(_SECCOMP_RET_KILL_PROCESS)
        nr = arch[1]["seccomp"]
        if _syscall(libc, nr, _SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(action)) != 0:
            seccomp_ok, why = False, f"the kernel has no seccomp filters ({os.strerror(ctypes.get_errno())})"
    abi = _syscall(libc, _NR_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return {"seccomp": seccomp_ok, "landlock": max(0, abi), "why": why}


class ConfinementError(OSError):
    """A step of the confinement the plan asked for could not be applied."""


def _check(result: int, what: str) -> None:
    if result < 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"{what}: {os.strerror(err)}")


def _seccomp_program(numbers: dict[str, int], arch_id: int, pid: int, network: bool) -> bytes:
    """The BPF filter: a foreign architecture kills the process; the refused calls get EPERM,
    ``clone3`` ENOSYS (so the C library falls back to ``clone``, whose flags can be checked);
    ``clone`` only makes threads; signals go only to this process; no terminal input injection."""
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog: list[tuple[int, int, int, int]] = []

    def deny(err: int) -> tuple[int, int, int, int]:
        return (ret, 0, 0, _SECCOMP_RET_ERRNO | err)

    allow = (ret, 0, 0, _SECCOMP_RET_ALLOW)
    prog += [(ld, 0, 0, 4), (jeq, 1, 0, arch_id), (ret, 0, 0, _SECCOMP_RET_KILL_PROCESS), (ld, 0, 0, 0)]
    if arch_id == _ARCHES["x86_64"][0]:
        prog += [(jge, 0, 1, _X32_SYSCALL_BIT), deny(errno.EPERM)]
    refused = [n for n in _REFUSED if n in numbers] + ([] if network else list(_SOCKETS))
    for name in refused:
        prog += [(jeq, 0, 1, numbers[name]), deny(errno.EPERM)]
    prog += [(jeq, 0, 1, numbers["clone3"]), deny(errno.ENOSYS)]
    arg0, arg1 = 16, 24  # offsetof(struct seccomp_data, args[i]), low 32 bits (little-endian)
    # clone: threads only (CLONE_THREAD set); a new process is refused
    prog += [(jeq, 0, 4, numbers["clone"]), (ld, 0, 0, arg0), (jset, 0, 1, _CLONE_THREAD), allow, deny(errno.EPERM)]
    # signals: to this process only (kill(0) is its own process group, which holds it alone)
    prog += [(jeq, 0, 5, numbers["kill"]), (ld, 0, 0, arg0), (jeq, 2, 0, pid), (jeq, 1, 0, 0), deny(errno.EPERM)]
    prog += [allow]
    for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        prog += [(jeq, 0, 4, numbers[name]), (ld, 0, 0, arg0), (jeq, 0, 1, pid), allow, deny(errno.EPERM)]
    # ioctl: no typing into a terminal (TIOCSTI) and no TIOCLINUX
    prog += [(jeq, 0, 5, numbers["ioctl"]), (ld, 0, 0, arg1), (jeq, 1, 0, _TIOCSTI), (jeq, 0, 1, _TIOCLINUX)]
    prog += [deny(errno.EPERM), allow]
    prog += [allow]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


def _install_seccomp(libc: Any, numbers: dict[str, int], arch_id: int, network: bool) -> None:
    code = _seccomp_program(numbers, arch_id, os.getpid(), network)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(code, len(code))
    prog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _check(_prctl(libc, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog)), "seccomp filter")


def _landlock(libc: Any, abi: int, read: list[str], write: list[str], devices: list[str], network: bool) -> None:
    handled = _FS_V1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    handled |= _FS_IOCTL_DEV if abi >= 5 else 0
    handled_net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 and not network else 0
    scoped = (_SCOPE_SIGNAL | (0 if network else _SCOPE_ABSTRACT_UNIX_SOCKET)) if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled, handled_net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _syscall(libc, _NR_LANDLOCK_CREATE_RULESET, buf, size, 0)
    _check(ruleset, "landlock ruleset")
    try:
        reading = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
        for rights, paths in (
            (reading, read),
            (handled, write),
            (_FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE, devices),
        ):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a path that does not exist here grants nothing
                try:
                    allowed = rights & handled
                    if not os.path.isdir(path):
                        allowed &= _FS_FILE_RIGHTS
                    rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd), 12)
                    result = _syscall(libc, _NR_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, rule, 0)
                    _check(result, f"landlock rule for {path}")
                finally:
                    os.close(fd)
        _check(_prctl(libc, _PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
        _check(_syscall(libc, _NR_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock restrict")
    finally:
        os.close(ruleset)


def _leave_network(libc: Any) -> str:
    """A network namespace of its own: as root directly, else inside a user namespace that maps
    only this user.  Returns how, or "" when the kernel refuses (the seccomp filter still holds)."""
    if libc.unshare(_CLONE_NEWNET) == 0:
        return "netns"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return ""
    try:  # map this user to itself, so files it creates in its temporary directory have an owner
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError:
        pass
    return "userns+netns"


def _drop_capabilities(libc: Any) -> None:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    _prctl(libc, _PR_SET_SECUREBITS, _SECUREBITS)  # refused without CAP_SETPCAP: nothing to keep then
    for cap in range(last + 1):
        _prctl(libc, _PR_CAPBSET_DROP, cap)
    _prctl(libc, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable x 2: all empty
    _check(libc.capset(header, data), "capset")


def capabilities() -> dict[str, int]:
    """This process's capability sets from /proc/self/status (``CapEff``, ``CapPrm``, ...)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Cap"):
                    key, _, value = line.partition(":")
                    out[key] = int(value.strip(), 16)
    except (OSError, ValueError):
        pass
    return out


def confine(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Apply ``plan`` (made by the parent from :func:`probe`) to this process; returns what
    applied.  A step the plan requires that fails raises :class:`ConfinementError`."""
    facts: dict[str, Any] = {"network": "allowed" if plan["network"] else "blocked"}
    arch = _arch()
    if arch is None:
        return facts
    libc = _libc()
    if plan.get("pdeathsig") and _prctl(libc, _PR_SET_PDEATHSIG, 9) == 0 and os.getppid() != plan["parent"]:
        os._exit(0)  # the parent is gone already
    if not plan["network"]:
        facts["netns"] = _leave_network(libc)
    if plan["landlock"]:
        _landlock(libc, plan["landlock"], plan["read"], plan["write"], plan["devices"], plan["network"])
        facts["landlock"] = plan["landlock"]
    _check(_prctl(libc, _PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
    _drop_capabilities(libc)
    caps = capabilities()
    if any(caps.get(k, 0) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        raise ConfinementError(errno.EPERM, f"capabilities left after dropping them: {caps}")
    facts["capabilities"] = "none"
    if plan["seccomp"]:
        _install_seccomp(libc, arch[1], arch[0], plan["network"])
        facts["seccomp"] = True
    return facts


_PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "pty.spawn"}
)
_NETWORK_EVENTS = frozenset({"socket.__new__", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"})


def _explain_refusals(network: bool) -> None:
    """An audit hook that only *explains*: the kernel refuses these calls whatever the hook does
    (removing or fooling it gains nothing); it turns the common ones into a message that says why."""
    me = os.getpid()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _PROCESS_EVENTS:
            raise PermissionError(errno.EPERM, f"the sandbox runs no other programs or processes ({event})")
        if not network and event in _NETWORK_EVENTS:
            raise PermissionError(errno.EPERM, f"the sandbox has no network (network: false; {event})")
        if event in ("os.kill", "os.killpg") and args and args[0] not in (me, 0):
            raise PermissionError(errno.EPERM, f"the sandbox sends signals to no other process ({event})")

    sys.addaudithook(hook)


# --------------------------------------------------------------------------- the worker


def _load_function(ref: Mapping[str, Any]) -> Callable[[Any], Any]:
    import importlib
    import importlib.util

    if "pickle" in ref:
        return pickle.loads(ref["pickle"])
    name, qualname = ref["module"], ref["qualname"]
    if ref.get("path"):
        module_name = "__respeval_main__" if name == "__main__" else name
        spec = importlib.util.spec_from_file_location(module_name, ref["path"])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {ref['path']}")
        module: Any = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(module_name, module)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(name)
    obj: Any = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _vm_size() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _watch_parent(fd: int) -> None:
    """Ends this worker when the parent goes away (its end of the pipe closes), even mid-call."""
    import select

    poller = select.poll()
    poller.register(fd, 0)  # no events asked: POLLHUP and POLLERR are always reported
    while True:
        try:
            if poller.poll():
                os._exit(0)
        except InterruptedError:
            continue


def _send(fd: int, message: Mapping[str, Any]) -> None:
    _write_all(fd, encode_frame(json.dumps(message).encode("ascii")))


def main(rfd: int, wfd: int) -> None:
    """The worker: read the set-up, confine, load the function, then answer rows until told to stop."""
    import resource
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
    raw = read_frame(rfd)
    if raw is None:
        return
    setup = pickle.loads(raw)
    sys.path[:] = setup["sys_path"]
    for finder in sys.meta_path:  # an editable install's rebuild-on-import runs a build (a new process)
        if hasattr(finder, "rebuild_flag"):
            finder.rebuild_flag = False
    plan = setup["plan"]
    try:
        facts = confine(plan)
        if plan.get("seccomp"):
            _explain_refusals(plan["network"])
    except (ConfinementError, OSError) as exc:
        _send(wfd, {"fatal": f"the sandbox could not be set up: {exc}"})
        return
    try:
        fn = _load_function(setup["function"])
    except BaseException as exc:  # noqa: BLE001 - the user's module failed to import
        _send(
            wfd, {"fatal": f"cannot load {setup['function'].get('label', 'the function')}: {describe_exception(exc)}"}
        )
        return
    memory_mb = setup.get("memory_mb")
    if memory_mb is not None:
        cap = _vm_size() + int(memory_mb) * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    threading.Thread(target=_watch_parent, args=(rfd,), daemon=True, name="respeval-watch-parent").start()
    _send(wfd, {"ready": facts})
    arrays = bool(setup.get("arrays"))
    sandboxed = bool(plan.get("seccomp"))
    while True:
        raw = read_frame(rfd)
        if raw is None:
            return
        batch = pickle.loads(raw)
        if batch is None:
            return
        for key, payload in batch:
            ok, value = call(fn, payload, arrays=arrays, sandboxed=sandboxed)
            _write_all(wfd, encode_answer(key, ok, value))
