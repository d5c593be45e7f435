"""Running untrusted functions in sandboxed worker processes, with limits.

:class:`WorkerPool` runs ``fn(payload)`` for many payloads in worker processes and returns, per
payload, ``(True, value)`` or ``(False, reason)``; ``value`` is plain data (None, bools, numbers,
strings, lists, dicts with string keys).  It is what ``CustomMetric(..., isolation="process")``
uses, and it knows nothing about metrics.

Each worker is a **fresh Python interpreter** (not a fork of this process, so none of this
process's memory, open files or judge clients is in it) with:

* a **minimal environment**: ``PATH``, the locale and thread-count variables, ``HOME`` and
  ``TMPDIR`` pointing at a private temporary directory, and the variables named in
  :attr:`Limits.env`; no API keys, no proxies;
* the function **imported by name** (``module:function``, or a module-level function; a lambda or
  closure cannot be found by a fresh interpreter and is refused with a message saying so);
* **its own process group**, killed as a whole (SIGKILL) when a row misses its **time limit**
  (:attr:`Limits.timeout`; the row is unscored with ``timed out after N s``) and at the end;
* a **memory limit** (:attr:`Limits.memory_mb`): ``RLIMIT_AS`` at its size once the function is
  loaded plus the limit (an allocation past it raises ``MemoryError``: the row is unscored with
  ``out of memory``);
* results sent back as **JSON only** (at most 32 MiB per row), decoded here with
  :func:`json.loads`: a result cannot run code in this process.

On **Linux (x86-64, arm64)**, before it imports the function's module, each worker confines itself
(:func:`respeval._sandbox.confine`): ``no_new_privs``; every capability dropped (as root too, so
nothing it does can undo the rest); a **seccomp** filter that refuses creating sockets of any
family (unless ``network=True``), creating processes (``fork``, ``vfork``, ``clone`` without
``CLONE_THREAD``; threads work), running programs (``execve``), ``setns``/``unshare``, mounts,
``ptrace`` and reading other processes' memory, signals to other processes, io_uring, bpf and
kernel keyrings; **Landlock** (where the kernel has it): read-only access to Python's
installation, the ``sys.path`` folders that hold installed packages or modules loaded here, the
folders of the modules loaded here, the function's own folder and :attr:`Limits.read`; writes
only to its private temporary directory; no access to this process through ``/proc``, no
signals out; and a network namespace of its own where the kernel allows one (as root directly,
otherwise inside a user namespace).  ``tests/evaluate/test_sandbox.py`` tries each of these from
a hostile function, as root and as an unprivileged user.

Where the seccomp filter cannot be installed (not Linux, another architecture, a kernel without
seccomp), ``network=False`` is **refused** with :class:`SandboxUnavailable`: nothing else would
hold.  With ``network=True`` such a worker runs with the limits above but without the kernel's
confinement (it can start processes, and a process it detaches with ``setsid`` escapes the group
kill).  Where Landlock is missing, a :class:`SandboxWarning` says that the worker can read what
this user can read.  :attr:`WorkerPool.network_guard` and :attr:`WorkerPool.sandbox` say what
applied; both go into a custom metric's signature.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import pickle
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from respeval import _sandbox
from respeval._sandbox import describe_exception
from respeval.errors import RespevalError

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT",
    "Limits",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxWarning",
    "WorkerPool",
    "describe_exception",
    "function_ref",
    "sandbox_plan",
]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_MB = 1536
STARTUP_TIMEOUT = 120.0

# What a worker's environment keeps of this one: none of it is a credential.
_PASSED_ENV = (
    "PATH",
    "PYTHONHOME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_TIME",
    "TZ",
    "PYTHONHASHSEED",
    "PYTHONUTF8",
    "LD_LIBRARY_PATH",
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "RESPEVAL_IMPLEMENTATION",
)
_SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/sys/devices/system/cpu",
    "/sys/devices/system/node",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/self",  # opened by the worker: its own /proc entry, never this process's
)
_NETWORK_READ = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_BOOT = (
    "import sys; del sys.path[0]; import importlib.util as u; "
    "s = u.spec_from_file_location('_respeval_sandbox', sys.argv[1]); m = u.module_from_spec(s); "
    "sys.modules['_respeval_sandbox'] = m; s.loader.exec_module(m); m.main(int(sys.argv[2]), int(sys.argv[3]))"
)


class SandboxError(RespevalError, ValueError):
    """A worker could not be started: its function cannot be loaded, or the sandbox set up."""


class SandboxUnavailable(SandboxError):
    """The isolation asked for cannot be enforced on this machine."""


class SandboxWarning(UserWarning):
    """Part of the sandbox is missing on this machine (the message says which, and what follows)."""


@dataclass(frozen=True)
class Limits:
    """What a worker may do: seconds per row (or batch call), megabytes of address space the
    function may add, whether it has the network, the environment variables it gets by name,
    and extra paths it may read (files or folders)."""

    timeout: float | None = DEFAULT_TIMEOUT
    memory_mb: int | None = DEFAULT_MEMORY_MB
    network: bool = False
    env: tuple[str, ...] = ()
    read: tuple[str, ...] = ()


_probe_lock = threading.Lock()
_probed: dict[str, Any] | None = None


def _probe() -> dict[str, Any]:
    global _probed
    with _probe_lock:
        if _probed is None:
            _probed = _sandbox.probe()
        return dict(_probed)


def _code_paths() -> list[str]:
    """Folders holding the code a worker may need: Python's installation, the folders of every
    module loaded in this process, and the ``sys.path`` entries that hold installed packages
    (``site-packages``, zip files, anything under Python's prefixes) or a loaded module.  A
    ``sys.path`` entry that holds none (the current folder that ``python -c`` or ``-m`` put
    first, say) is not opened to the worker."""
    cwd = os.getcwd()
    prefixes = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    paths = set(prefixes) | {os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))}
    module_dirs = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            module_dirs.add(os.path.dirname(os.path.abspath(file)))
    paths |= module_dirs
    for entry in sys.path:
        if not isinstance(entry, str):
            continue
        entry = os.path.abspath(os.path.join(cwd, entry))
        installed = os.path.basename(entry) in ("site-packages", "dist-packages") or os.path.isfile(entry)
        installed = installed or any(entry == p or entry.startswith(p + os.sep) for p in prefixes)
        holds_module = any(d == entry or d.startswith(entry + os.sep) for d in module_dirs)
        if installed or holds_module:
            paths.add(entry)
    return sorted(p for p in paths if p and os.path.exists(p))


def sandbox_plan(limits: Limits) -> dict[str, Any]:
    """What a worker under ``limits`` will apply on this machine (without its temporary folder);
    raises :class:`SandboxUnavailable` for ``network=False`` where it cannot be enforced."""
    probed = _probe()
    if not limits.network and not probed["seccomp"]:
        raise SandboxUnavailable(
            f"network: false cannot be enforced here: {probed['why']}. Without a seccomp filter nothing "
            "stops a function from opening a socket or starting a program that does; respeval will not "
            "pretend. Set network: true (network=True) to run it in workers with the time and memory "
            "limits but with the network, or run on Linux (x86-64 or arm64)"
        )
    cwd = os.getcwd()
    read = _code_paths() + [p for p in _SYSTEM_READ if os.path.exists(p)]
    if limits.network:
        read += [p for p in _NETWORK_READ if os.path.exists(p)]
    read += [os.path.abspath(os.path.join(cwd, p)) for p in limits.read]
    return {
        "network": bool(limits.network),
        "seccomp": bool(probed["seccomp"]),
        "landlock": int(probed["landlock"]) if probed["seccomp"] else 0,
        "read": read,
        "write": [],
        "devices": list(_DEVICES),
    }


def describe_plan(plan: dict[str, Any]) -> str:
    """The mechanisms of a plan, as the signature writes them (``seccomp+landlock+nocaps``)."""
    parts = []
    if plan["seccomp"]:
        parts += ["seccomp", "nocaps"]
    if plan["landlock"]:
        parts.insert(1, "landlock")
    return "+".join(parts) or "none"


def function_ref(fn: Callable[..., Any]) -> dict[str, Any]:
    """How a fresh interpreter finds ``fn``: by module and name (a module that is not importable
    by name, such as a ``file.py`` or the main script, by its path), or, for other callables
    (``functools.partial``, instances), by pickle.  Lambdas and nested functions cannot be found:
    ValueError, saying what to do."""
    module_name = getattr(fn, "__module__", None) or "?"
    qualname = getattr(fn, "__qualname__", None) or type(fn).__name__
    label = f"{module_name}:{qualname}"
    advice = (
        "isolation='process' runs the function in a fresh Python process, which imports it by name: "
        "define it at the top level of a module and name it as module:function (or file.py:function)"
    )
    if isinstance(fn, types.FunctionType):
        if "<lambda>" in qualname or "<locals>" in qualname:
            what = "a lambda" if "<lambda>" in qualname else "a function defined inside another function"
            raise ValueError(f"{label} is {what}; {advice}")
        module = sys.modules.get(module_name)
        if module is not None and module_name != "__main__" and getattr(module, "__dict__", None) is fn.__globals__:
            ref = {"module": module_name, "qualname": qualname, "label": label}
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                # the folder this process imported the module from goes first on the worker's path,
                # so the worker runs the file that was fingerprinted, not another of the same name
                # found earlier on sys.path (or none, when that folder has left sys.path)
                root = os.path.dirname(os.path.abspath(file))
                for _ in range(module_name.count(".") + os.path.basename(file).startswith("__init__.")):
                    root = os.path.dirname(root)
                ref["root"] = root
            return ref
        path = fn.__globals__.get("__file__")
        if isinstance(path, str) and os.path.isfile(path):
            return {"module": module_name, "qualname": qualname, "path": os.path.abspath(path), "label": label}
        raise ValueError(f"{label} was defined where a fresh process cannot find it (no module file); {advice}")
    try:
        data = pickle.dumps(fn)
    except Exception as exc:  # noqa: BLE001 - pickle raises many kinds
        raise ValueError(f"{label} cannot be sent to a worker process ({exc}); {advice}") from None
    return {"pickle": data, "label": label}


def _interpreter() -> str:
    """The program a worker runs: this process's own interpreter.  On Linux through
    ``/proc/self/exe`` (the very binary running here, even if the file was replaced since, and
    reachable when ``sys.executable``'s folder is closed to this user); argv[0] stays
    ``sys.executable``, so a virtual environment is found as here."""
    if sys.platform.startswith("linux") and os.path.exists("/proc/self/exe"):
        try:
            if os.path.samefile(sys.executable, "/proc/self/exe"):
                return "/proc/self/exe"
        except OSError:  # sys.executable cannot be looked at by this user
            if not os.access(sys.executable, os.X_OK) and os.access("/proc/self/exe", os.X_OK):
                return "/proc/self/exe"
    return sys.executable


class _Protocol(Exception):
    """A worker sent something that is not a well-formed answer."""


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _Protocol(f"not JSON: {str(exc)[:80]}") from None


class _Worker:
    """One worker process: its pipes, its private folder, what it was sent and not yet answered."""

    def __init__(self, pool: WorkerPool) -> None:
        self.tmp = tempfile.mkdtemp(prefix="respeval-sandbox-")
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        out_r, out_w = os.pipe()
        env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
        env.update({k: os.environ[k] for k in pool.limits.env if k in os.environ})
        env.update({"HOME": self.tmp, "TMPDIR": self.tmp, "PYTHONDONTWRITEBYTECODE": "1"})
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-u", "-c", _BOOT, _sandbox.__file__, str(to_r), str(from_w)],
                executable=_interpreter(),
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=out_w,
                pass_fds=(to_r, from_w),
                close_fds=True,
                start_new_session=True,
                env=env,
                cwd=os.getcwd(),
            )
        except OSError:
            for fd in (to_r, to_w, from_r, from_w, out_r, out_w):
                os.close(fd)
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        for fd in (to_r, from_w, out_w):
            os.close(fd)
        self.to_fd, self.from_fd, self.out_fd = to_w, from_r, out_r
        for fd in (to_w, from_r, out_r):
            os.set_blocking(fd, False)
        self.inbox = bytearray()
        self.outbox = b""
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.ready = False
        self.facts: dict[str, Any] = {}
        self.pending: deque[int] = deque()  # keys sent and not yet answered, in order
        self.deadline = time.monotonic() + pool.startup_timeout
        plan = {**pool.plan, "write": [self.tmp], "parent": os.getpid()}
        plan["pdeathsig"] = threading.current_thread() is threading.main_thread()
        setup = {
            "sys_path": ([pool.ref["root"]] if "root" in pool.ref else [])
            + [os.path.join(os.getcwd(), p) if p else os.getcwd() for p in sys.path if isinstance(p, str)],
            "plan": plan,
            "function": pool.ref,
            "memory_mb": pool.limits.memory_mb,
        }
        self.send(pickle.dumps(setup))

    def send(self, data: bytes) -> None:
        self.outbox += _sandbox.encode_frame(data)

    def kill(self) -> None:
        if self.proc.returncode is None:  # not reaped yet, so its pid (and group) are still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                self.proc.kill()  # in case it had not made its own group yet
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)

    def close(self) -> None:
        for fd in (self.to_fd, self.from_fd, self.out_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.tmp, ignore_errors=True)


class WorkerPool:
    """Sandboxed workers running ``fn`` on payloads, under :class:`Limits` (see the module docstring).

    ``map(payloads)`` returns, in order, ``(True, value)`` (``value`` plain data) or ``(False,
    reason)`` per payload; a payload whose worker hangs, dies or runs out of memory fails alone,
    and the pool goes on.  A worker that cannot start (the function does not load, the sandbox
    cannot be set up) raises :class:`SandboxError`.  What a worker prints goes to ``sys.stderr``.
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        limits: Limits,
        *,
        workers: int = 2,
        batch: int = 32,
        startup_timeout: float = STARTUP_TIMEOUT,
    ) -> None:
        if sys.platform == "win32":
            raise SandboxUnavailable("isolation='process' runs on Linux and macOS")
        if not sys.executable:
            raise SandboxUnavailable(
                "isolation='process' needs a Python interpreter to start (sys.executable is empty)"
            )
        self.fn = fn
        self.limits = limits
        self.ref = function_ref(fn)
        self.plan = sandbox_plan(limits)
        if "path" in self.ref:  # a file.py loaded by path: its folder holds its code
            self.plan["read"].append(os.path.dirname(self.ref["path"]))
        if "root" in self.ref:  # the folder the module was imported from (listed by the import)
            self.plan["read"].append(self.ref["root"])
        if self.plan["seccomp"] and not self.plan["landlock"]:
            warnings.warn(
                "Landlock is not available on this kernel: sandboxed workers can read every file this user can "
                "(they still have no network, no new processes and no capabilities)",
                SandboxWarning,
                stacklevel=2,
            )
        self.n_workers = max(1, workers)
        self.batch = max(1, batch)
        self.startup_timeout = startup_timeout
        self.sandbox = describe_plan(self.plan)
        self.network_guard = "none" if limits.network else "seccomp"
        self.restarts = 0
        self._workers: list[_Worker] = []
        self._selector = selectors.DefaultSelector()

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker (each sees its input close and exits; a stuck one is killed)."""
        workers, self._workers = self._workers, []
        for worker in workers:
            with contextlib.suppress(OSError):
                os.close(worker.to_fd)
        deadline = time.monotonic() + 2.0
        for worker in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(max(0.0, deadline - time.monotonic()))
            worker.kill()
            self._drain_output(worker)
            self._forget(worker)

    def _spawn(self) -> _Worker:
        worker = _Worker(self)
        self._selector.register(worker.from_fd, selectors.EVENT_READ, (worker, "answers"))
        self._selector.register(worker.out_fd, selectors.EVENT_READ, (worker, "output"))
        self._selector.register(worker.to_fd, selectors.EVENT_WRITE, (worker, "input"))
        return worker

    def _forget(self, worker: _Worker) -> None:
        for fd in (worker.to_fd, worker.from_fd, worker.out_fd):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(fd)
        worker.close()

    # ------------------------------------------------------------------ running

    def map(self, payloads: Sequence[Any]) -> list[tuple[bool, Any]]:
        self._results: list[tuple[bool, Any] | None] = [None] * len(payloads)
        self._payloads = payloads
        self._todo: deque[int] = deque(range(len(payloads)))
        try:
            while len(self._workers) < self.n_workers:
                self._workers.append(self._spawn())
            while self._todo or any(w.pending for w in self._workers):
                for worker in self._workers:
                    if worker.ready and not worker.pending and self._todo:
                        self._feed(worker)
                self._step()
        finally:
            for worker in self._workers:  # what it printed for the rows answered is in the pipe already
                self._drain_output(worker, final=False)
            results = [r if r is not None else (False, "not run") for r in self._results]
            self._payloads, self._results, self._todo = [], [], deque()
        return results

    def _step(self) -> None:
        now = time.monotonic()
        waiting = [w.deadline for w in self._workers if w.pending or not w.ready]
        timeout = max(0.0, min(waiting) - now) if waiting else None
        for key, _events in self._selector.select(min(timeout, 3600.0) if timeout is not None else 3600.0):
            worker, kind = key.data
            if worker not in self._workers:
                continue
            try:
                if kind == "output":
                    self._forward_output(worker)
                elif kind == "input":
                    self._write(worker)
                else:
                    self._read(worker)
            except _Protocol as exc:
                if not worker.ready:  # before it could run a row: it will not start (no respawning it forever)
                    self._fail_start(worker, f"it sent something that is not a ready message ({exc})")
                self._replace(worker, f"the worker sent something that is not a result ({exc}); it was stopped")
        now = time.monotonic()
        for worker in list(self._workers):
            if now < worker.deadline:
                continue
            if not worker.ready:
                self._fail_start(worker, f"did not start within {self.startup_timeout:g} s")
            elif worker.pending:
                self._replace(worker, f"timed out after {self.limits.timeout:g} s (the time limit)")

    def _deadline(self) -> float:
        return time.monotonic() + self.limits.timeout if self.limits.timeout is not None else float("inf")

    def _feed(self, worker: _Worker) -> None:
        keys = [self._todo.popleft() for _ in range(min(self.batch, len(self._todo)))]
        try:
            data = pickle.dumps([(k, self._payloads[k]) for k in keys])
        except Exception as exc:  # noqa: BLE001 - a payload pickle cannot carry
            for k in keys:
                self._results[k] = (False, f"cannot be sent to the worker: {describe_exception(exc)}")
            return
        worker.pending.extend(keys)
        worker.deadline = self._deadline()
        worker.send(data)
        try:
            self._selector.register(worker.to_fd, selectors.EVENT_WRITE, (worker, "input"))
        except KeyError:  # still registered: the rest of an earlier frame is being written
            pass

    def _write(self, worker: _Worker) -> None:
        try:
            written = os.write(worker.to_fd, worker.outbox[: 1 << 20])
        except BlockingIOError:
            return
        except OSError:  # the worker is gone; its answers pipe says how
            worker.outbox = b""
            written = 0
        worker.outbox = worker.outbox[written:]
        if not worker.outbox:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(worker.to_fd)

    def _read(self, worker: _Worker) -> None:
        try:
            data = os.read(worker.from_fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._died(worker)
            return
        worker.inbox += data
        header = _sandbox._HEADER
        while len(worker.inbox) >= header.size:
            (size,) = header.unpack_from(worker.inbox)
            if size > _sandbox.MAX_RESULT_BYTES + 1024:
                raise _Protocol(f"a frame of {size} bytes")
            if len(worker.inbox) < header.size + size:
                return
            raw = bytes(worker.inbox[header.size : header.size + size])
            del worker.inbox[: header.size + size]
            self._message(worker, _decode(raw))
            if worker not in self._workers:
                return

    def _message(self, worker: _Worker, message: Any) -> None:
        if not isinstance(message, dict):
            raise _Protocol("not an object")
        if not worker.ready:
            if isinstance(message.get("fatal"), str):
                self._fail_start(worker, message["fatal"])
            facts = message.get("ready")
            if not isinstance(facts, dict):
                raise _Protocol("no ready message")
            worker.ready, worker.facts = True, facts
            worker.deadline = float("inf")
            if not self.limits.network:
                self.network_guard = "seccomp+netns" if "netns" in str(facts.get("netns", "")) else "seccomp"
            return
        key, ok = message.get("k"), message.get("ok")
        if not worker.pending or key != worker.pending[0] or type(ok) is not bool:
            raise _Protocol(
                f"an answer for row {key!r} while row {worker.pending[0] if worker.pending else None} was due"
            )
        if ok:
            if "v" not in message:
                raise _Protocol("an answer without a value")
            self._results[key] = (True, message["v"])
        else:
            reason = message.get("e")
            self._results[key] = (False, reason[:500] if isinstance(reason, str) else "failed")
        worker.pending.popleft()
        worker.deadline = self._deadline() if worker.pending else float("inf")

    def _forward_output(self, worker: _Worker) -> None:
        try:
            data = os.read(worker.out_fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(worker.out_fd)
            return
        self._emit(worker.decoder.decode(data))

    def _drain_output(self, worker: _Worker, *, final: bool = True) -> None:
        for _ in range(256):
            try:
                data = os.read(worker.out_fd, 1 << 16)
            except OSError:  # BlockingIOError: nothing more for now; or the pipe is closed
                break
            if not data:
                break
            self._emit(worker.decoder.decode(data))
        if final:
            self._emit(worker.decoder.decode(b"", final=True))

    @staticmethod
    def _emit(text: str) -> None:
        if text and sys.stderr is not None:
            with contextlib.suppress(Exception):
                sys.stderr.write(text)
                sys.stderr.flush()

    # ------------------------------------------------------------------ failures

    def _death_reason(self, worker: _Worker) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.proc.wait(2)
        code = worker.proc.returncode
        if code is not None and code < 0:
            if -code == signal.SIGKILL:
                return "the worker was killed (SIGKILL: out of memory?)"
            if -code == signal.SIGSYS:
                return "the worker was killed by the sandbox (SIGSYS: a system call from another architecture)"
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker died ({name})"
        return f"the worker exited (status {code})"

    def _died(self, worker: _Worker) -> None:
        reason = self._death_reason(worker)
        if not worker.ready:
            self._fail_start(worker, f"{reason} while starting (its output is above)")
        self._replace(worker, reason)

    def _fail_start(self, worker: _Worker, reason: str) -> None:
        worker.kill()
        self._drain_output(worker)
        self._forget(worker)
        self._workers.remove(worker)
        raise SandboxError(f"the worker process for {self.ref['label']} could not start: {reason}")

    def _replace(self, worker: _Worker, reason: str) -> None:
        """The worker's current row fails with ``reason``; the rows sent behind it go back to the
        queue; the worker's whole process group is killed; a fresh worker takes its place."""
        if worker.pending:
            first = worker.pending.popleft()
            self._results[first] = (False, reason)
            self._todo.extendleft(reversed(worker.pending))
            worker.pending.clear()
        worker.kill()
        self._drain_output(worker)
        self._forget(worker)
        self.restarts += 1
        self._workers[self._workers.index(worker)] = self._spawn()
