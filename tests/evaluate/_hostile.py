"""Hostile custom-metric functions for tests/evaluate/test_sandbox.py.

``attempt({"probe": NAME, ...})`` tries one way out of the sandbox and says, as plain data, what
happened: ``"escaped: ..."`` when it got out, ``"refused: ..."`` with the error when it did not.
Standard library only (a worker imports this module, and starts fast).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SYS = {"x86_64": {"clone": 56, "fork": 57, "io_uring_setup": 425}, "aarch64": {"clone": 220, "io_uring_setup": 425}}


def _machine() -> dict[str, int]:
    return _SYS.get(os.uname().machine, {})


def _c(result: int) -> str:
    """A libc call's outcome: ``escaped: N`` when it succeeded, ``refused: ERRNO`` when not."""
    if result >= 0:
        return f"escaped: {result}"
    return f"refused: {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}"


def _tried(action: Any) -> str:
    try:
        value = action()
    except OSError as exc:  # PermissionError, ConnectionRefusedError, socket.gaierror, ...
        return f"refused: {type(exc).__name__}: {exc}"
    return f"escaped: {value!r}"[:300]


def _connect(family: int, address: Any) -> Any:
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect(address)
        return "connected"


def _fork_and_leave(detach: bool) -> str:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - only if the sandbox failed
        if detach:
            os.setsid()
            time.sleep(30)
        os._exit(0)
    return f"forked {pid}"


def _raw_fork() -> int:
    pid = int(_libc.fork())
    if pid == 0:  # pragma: no cover - only if the sandbox failed
        _libc._exit(0)
    return pid


def _fork_bomb(n: int) -> str:
    made = 0
    for _ in range(n):
        if _raw_fork() > 0:
            made += 1
    return f"escaped: {made} processes" if made else f"refused: {n} forks, {errno.errorcode.get(ctypes.get_errno())}"


def _setns_parent() -> str:
    fd = os.open(f"/proc/{os.getppid()}/ns/net", os.O_RDONLY)
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        return _c(-1)
    return "escaped: back on the parent's network"


def _capabilities() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key.startswith("Cap"):
                out[key] = int(value.strip(), 16)
            elif key in ("NoNewPrivs", "Seccomp"):
                out[key] = int(value.strip())
    return out


def _tamper() -> dict[str, str]:
    """Switch off every Python-level guard there is, then try again: the kernel still refuses."""
    module = sys.modules.get("_respeval_sandbox")
    if module is not None:
        module._PROCESS_EVENTS = frozenset()
        module._NETWORK_EVENTS = frozenset()
    for name in ("respeval.evaluate.isolation", "respeval._sandbox"):
        other = sys.modules.get(name)
        if other is not None:
            other._BLOCKED_EVENTS = frozenset()
    return {
        "socket": _tried(lambda: socket.socket()),
        "fork": _tried(lambda: _fork_and_leave(False)),
        "subprocess": _tried(lambda: subprocess.run(["/bin/true"]).returncode),
        "system": "escaped" if os.system("exit 3") == 3 << 8 else "refused: the command did not run",
    }


def _frame(data: bytes) -> bytes:
    return struct.pack("!Q", len(data)) + data


def _answers_fd() -> int:
    return int(sys.argv[3])  # the worker's command line: -c BOOT SANDBOX RFD WFD


class Gadget:
    """An object whose unpickling runs code: it writes ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (exec, (f"open({self.path!r}, 'w').write('the gadget ran')",))


def _raw_pickle(path: str) -> str:
    import pickle

    os.write(_answers_fd(), _frame(pickle.dumps((0, True, Gadget(path)))))
    time.sleep(30)  # the parent stops this worker for what it sent
    return "not stopped"


def _raw(data: bytes) -> str:
    os.write(_answers_fd(), data)
    time.sleep(30)
    return "not stopped"


PROBES: dict[str, Any] = {
    "tcp": lambda p: _tried(lambda: _connect(socket.AF_INET, ("127.0.0.1", p["port"]))),
    "tcp_raw": lambda p: _c(_libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0)),
    "unix": lambda p: _tried(lambda: _connect(socket.AF_UNIX, p["path"])),
    "unix_raw": lambda p: _c(_libc.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0)),
    "abstract": lambda p: _tried(lambda: _connect(socket.AF_UNIX, "\0" + p["name"])),
    "socketpair": lambda p: _tried(lambda: socket.socketpair()),
    "resolve": lambda p: _tried(lambda: socket.getaddrinfo("localhost", 80)),
    "setns": lambda p: _tried(_setns_parent),
    "unshare": lambda p: _c(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET)),
    "capabilities": lambda p: _capabilities(),
    "tamper": lambda p: _tamper(),
    "subprocess": lambda p: _tried(lambda: subprocess.run([sys.executable, "-c", "print(1)"]).returncode),
    "system": lambda p: _tried(lambda: os.system("/bin/true")),
    "posix_spawn": lambda p: _tried(lambda: os.posix_spawn("/bin/true", ["true"], {})),
    "exec": lambda p: _tried(lambda: os.execv("/bin/true", ["true"])),
    "fork": lambda p: _tried(lambda: _fork_and_leave(False)),
    "detached_fork": lambda p: _tried(lambda: _fork_and_leave(True)),
    "fork_raw": lambda p: _c(_raw_fork()),
    "clone_raw": lambda p: _c(
        _libc.syscall(ctypes.c_long(_machine()["clone"]), ctypes.c_long(signal.SIGCHLD), 0, 0, 0, 0)
    ),
    "fork_bomb": lambda p: _fork_bomb(p["n"]),
    "ptrace": lambda p: _c(_libc.ptrace(ctypes.c_long(16), ctypes.c_long(os.getppid()), None, None)),  # ATTACH
    "kill_parent": lambda p: _tried(lambda: os.kill(os.getppid(), 0)),
    "kill_parent_raw": lambda p: _c(_libc.kill(os.getppid(), 0)),
    "kill_everyone_raw": lambda p: _c(_libc.kill(-1, 0)),
    "tiocsti": lambda p: _c(_libc.ioctl(2, 0x5412, ctypes.c_char_p(b"x"))),
    "io_uring": lambda p: _c(_libc.syscall(ctypes.c_long(_machine()["io_uring_setup"]), 1, None)),
    "parent_environ": lambda p: _tried(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read()),
    "parent_mem": lambda p: _tried(lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(1)),
    "parent_cmdline": lambda p: _tried(lambda: open(f"/proc/{os.getppid()}/cmdline", "rb").read()),
    "environ": lambda p: dict(os.environ),
    "fds": lambda p: sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "read_fd": lambda p: _tried(lambda: os.read(p["fd"], 100)),
    "read": lambda p: _tried(lambda: open(p["path"], "rb").read()),
    "write": lambda p: _tried(lambda: open(p["path"], "w").write("written from the sandbox")),
    "own_temp": lambda p: _tried(lambda: _own_temp()),
    "threads": lambda p: _threads(),
    "pickle_gadget": lambda p: Gadget(p["path"]),
    "raw_pickle": lambda p: _raw_pickle(p["path"]),
    "json_bomb": lambda p: _raw(_frame(b"[" * 200_000)),
    "huge_frame": lambda p: _raw(struct.pack("!Q", 1 << 40)),
    "wrong_row": lambda p: _raw(_frame(json.dumps({"k": 10**6, "ok": True, "v": 1.0}).encode())),
    "big_result": lambda p: "x" * (40 * 1024 * 1024),
    "pid": lambda p: os.getpid(),
    "hang": lambda p: time.sleep(60),
}


def _own_temp() -> str:
    path = os.path.join(os.environ["TMPDIR"], "scratch.txt")
    with open(path, "w") as fh:
        fh.write("scratch")
    with open(path) as fh:
        return fh.read()


def _threads() -> list[int]:
    out: list[int] = []
    workers = [threading.Thread(target=out.append, args=(i,)) for i in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return sorted(out)


def attempt(payload: dict[str, Any]) -> Any:
    return PROBES[payload["probe"]](payload)


def leak_key(row: dict[str, Any]) -> dict[str, Any]:
    """A metric that tries every way to the judge's key and writes what it found, spaced out."""
    found = os.environ.get("OPENAI_API_KEY", "")
    for path in (f"/proc/{os.getppid()}/environ", "/proc/1/environ"):
        try:
            with open(path, "rb") as fh:
                found += fh.read().decode("latin-1")
        except OSError:
            pass
    return {"score": 1.0 if found else 0.0, "explanation": " ".join(found) or "nothing found"}


def passed_variable(row: dict[str, Any]) -> dict[str, Any]:
    return {"score": 1.0, "explanation": os.environ.get("RESPEVAL_TEST_PASSED", "absent")}


def printer(row: dict[str, Any]) -> float:
    print(f"printed by the metric for row {row['id']}")
    os.write(1, b"written to fd 1 by the metric\n")
    return 1.0


def huge(row: dict[str, Any]) -> Any:
    kind = row["id"] % 4
    if kind == 0:
        return 10**400
    if kind == 1:
        return {"score": 10**400}
    if kind == 2:
        return 10**5000
    return 0.5


def huge_batch(batch: Any) -> list[Any]:
    return [10**400] + [1.0] * (batch.num_rows - 1)
