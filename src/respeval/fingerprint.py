"""Code fingerprints: one digest of everything a Python callable's results can depend on.

A resumed ``evaluate`` reuses the scores of the interrupted run, and a judge cache serves
the answers a ``python:`` judge gave before; both are right only while the user's code is
the same.  :func:`code_fingerprint` is the one place that decides "the same":

* the source files of the callable (the file of its module, the module of every
  ``functools.wraps`` layer, the class of a bound method or a callable object), read from
  disk, whole: a changed module constant, helper or import changes the digest;
* the project files those import, followed transitively: every module an ``import`` or
  ``from ... import`` names (anywhere in the file, including inside functions), resolved
  without running it, that is neither in the standard library nor an installed package;
* the installed version of each other package imported (``numpy==2.1.0``), and of
  respeval itself, and the Python version (major.minor);
* what is not in any file: the values a closure captured and the arguments of a
  ``functools.partial`` or the attributes of a callable object (plain data, callables and
  modules), and the plain immutable values of the module globals the code names (a
  constant computed from an environment variable at import time).

When sameness cannot be proven (a built-in or C-extension function, source that is not in
a file (``python -c``, a notebook cell), a closure holding an arbitrary object) the
fingerprint says why instead of giving a digest.  An explicit ``version`` replaces all of
this: it is the user's promise that the code is the same while the version is, and the
one way to fingerprint code respeval cannot read.

Not covered: what the code reads at run time (files, the network, environment variables
read per call), and imports made by name (``importlib.import_module(name)``).  Bump the
version when those change.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.machinery
import importlib.metadata
import math
import os
import re
import site
import sys
import sysconfig
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from respeval._version import __version__

__all__ = ["CodeFingerprint", "code_fingerprint", "split_version"]

_PACKAGE_DIR = Path(__file__).resolve().parent  # respeval's own files: covered by its version
_MAX_ITEMS = 1_000_000  # plain data larger than this is not walked (a global's is skipped; a closure's refused)


@dataclass(frozen=True)
class CodeFingerprint:
    """What :func:`code_fingerprint` found.

    Attributes:
        target: the callable as ``module:qualname`` (for messages).
        digest: hex SHA-256 of everything covered, or None when sameness cannot be proven.
        reason: why not (None with a digest).
        version: the user's explicit version, when one was given (it replaces the code).
        files: how many source files the digest covers.
    """

    target: str
    digest: str | None
    reason: str | None = None
    version: str | None = None
    files: int = 0

    @property
    def proven(self) -> bool:
        return self.digest is not None

    @property
    def token(self) -> str:
        """A short stable text for signatures and keys: ``@V`` (the user's version, as
        ``module:function@V`` writes it), ``<12 hex>`` of the digest, or ``unproven``.  A
        signature writes it as its ``code`` field (``version:`` is the package's)."""
        if self.version is not None:
            return f"@{self.version}"
        return self.digest[:12] if self.digest is not None else "unproven"


def split_version(target: str) -> tuple[str, str | None]:
    """``"module:function@2"`` -> ``("module:function", "2")``; no ``@`` -> ``(target, None)``.
    (A module or attribute name never holds an ``@``.)"""
    head, sep, version = target.rpartition("@")
    if not sep:
        return target, None
    if not head or not version:
        raise ValueError(f"{target!r}: expected module:function@VERSION with a non-empty version")
    return head, version


def describe(fn: Any) -> str:
    """``module:qualname`` of a callable (partials and bound methods by their function)."""
    inner = fn
    while isinstance(inner, functools.partial):
        inner = inner.func
    if isinstance(inner, types.MethodType):
        inner = inner.__func__
    module = getattr(inner, "__module__", None) or type(inner).__module__
    name = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    return f"{module}:{name}"


def code_fingerprint(fn: Callable[..., Any], *, version: str | None = None) -> CodeFingerprint:
    """The fingerprint of ``fn`` (see the module docstring); ``version`` replaces the code."""
    target = describe(fn)
    if version is not None:
        if not isinstance(version, str) or not version:
            raise ValueError(f"{target}: a version is a non-empty string, got {version!r}")
        digest = hashlib.sha256(b"respeval-code/version\x00" + version.encode("utf-8")).hexdigest()
        return CodeFingerprint(target, digest, version=version)
    walker = _Walker()
    try:
        walker.callable(fn, target, top=True)
    except _Unproven as exc:
        return CodeFingerprint(target, None, reason=str(exc))
    return CodeFingerprint(target, walker.digest(), files=walker.files)


_PROCESS_TOKENS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def process_token(fn: Any) -> str:
    """A key for ``fn`` valid in this process only (for code whose sameness cannot be
    proven across processes): a new random value per callable object."""
    try:
        return _PROCESS_TOKENS.setdefault(fn, os.urandom(16).hex())
    except TypeError:  # not weak-referenceable: a fresh token every time (never a stale hit)
        return os.urandom(16).hex()


# --------------------------------------------------------------------------- the walk


class _Unproven(Exception):
    """Sameness cannot be proven; the message says why."""


class _Walker:
    """Collects ``name -> digest`` entries (order-independent) for one callable."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {
            "python": f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}",
            "respeval": __version__,
        }
        self._seen_files: set[str] = set()
        self._seen_objects: set[int] = set()
        self.files = 0

    def add(self, key: str, digest: str) -> None:
        """One entry; a key met again (two files of one module name, nested partials) gets
        a number (the walk's order is the same in every process, so the numbers are too)."""
        n = 1
        while self.entries.get(key if n == 1 else f"{key}#{n}", digest) != digest:
            n += 1
        self.entries[key if n == 1 else f"{key}#{n}"] = digest

    def digest(self) -> str:
        h = hashlib.sha256(b"respeval-code/1\x00")
        for key in sorted(self.entries):
            h.update(b"%d:%s%d:%s" % (len(key), key.encode(), len(self.entries[key]), self.entries[key].encode()))
        return h.hexdigest()

    # ------------------------------------------------------------------ callables

    def callable(self, fn: Any, where: str, *, top: bool = False) -> None:
        """``top``: the callable itself (a built-in one cannot be fingerprinted), not
        something it uses."""
        if id(fn) in self._seen_objects:
            return
        self._seen_objects.add(id(fn))
        if isinstance(fn, functools.partial):
            self.callable(fn.func, where)
            self.add(f"partial:{where}", _data_digest((fn.args, fn.keywords), f"the arguments of the partial {where}"))
            return
        if isinstance(fn, (staticmethod, classmethod)):
            self.callable(fn.__func__, where)
            return
        if isinstance(fn, types.MethodType):
            self.callable(fn.__func__, where)
            owner = fn.__self__
            if isinstance(owner, type):
                self.klass(owner, where)
            elif not isinstance(owner, types.ModuleType):
                self.instance(owner, where)
            return
        if isinstance(fn, types.FunctionType):
            self.function(fn, where)
            return
        if isinstance(fn, type):
            self.klass(fn, where)
            return
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None and not isinstance(fn, types.FunctionType):  # functools.lru_cache and kin
            self.callable(wrapped, where, top=top)
            self.builtin(type(fn))
            return
        call = type(fn).__dict__.get("__call__") or next(
            (k.__dict__["__call__"] for k in type(fn).__mro__ if "__call__" in k.__dict__), None
        )
        if isinstance(fn, _BUILTINS) or not isinstance(call, types.FunctionType):
            if top:
                raise _Unproven(f"{where} is a built-in or C-extension callable: its code cannot be read")
            self.builtin(fn)
            return
        # an object with __call__: its class's code and its state
        self.klass(type(fn), where)
        self.instance(fn, where)

    def builtin(self, fn: Any) -> None:
        """A built-in used by the code (``len``, ``math.sqrt``, a ufunc): the module it
        comes from stands for it (Python's version, a package's version, a project file)."""
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__module__", None) or (owner.__name__ if isinstance(owner, types.ModuleType) else None)
        module = sys.modules.get(name or "builtins")
        path = getattr(module, "__file__", None)
        if name in (None, "builtins") or not isinstance(path, str):
            return  # part of the interpreter: the Python version covers it
        self.file(path, name or "", None)

    def function(self, fn: types.FunctionType, where: str) -> None:
        filename = fn.__code__.co_filename
        if not os.path.isfile(filename):
            raise _Unproven(f"the source of {where} is not in a file (it was defined in {filename})")
        g = fn.__globals__
        self.file(filename, g.get("__name__") or fn.__module__ or "", g.get("__package__"))
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            self.callable(wrapped, where)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name bound later in the enclosing scope)
                continue
            self.value(value, f"the variable {name!r} that {where} captured")
        for name in sorted(_global_names(fn.__code__)):
            if name in g:
                self.global_value(name, g[name], fn)

    def klass(self, cls: type, where: str) -> None:
        module = sys.modules.get(cls.__module__)
        path = getattr(module, "__file__", None)
        if cls.__module__ == "builtins" or path is None or not os.path.isfile(path):
            raise _Unproven(f"{where}: the class {cls.__qualname__} has no source file that can be read")
        self.file(path, cls.__module__, getattr(module, "__package__", None))

    def instance(self, obj: Any, where: str) -> None:
        state = getattr(obj, "__dict__", None)
        if state is None:
            slots = [s for klass in type(obj).__mro__ for s in getattr(klass, "__slots__", ())]
            state = {s: getattr(obj, s) for s in slots if hasattr(obj, s)}
        for name in sorted(state):
            self.value(state[name], f"the attribute {name!r} of {where}'s object")

    def value(self, value: Any, what: str) -> None:
        """A value the code depends on and no file holds: data, a callable or a module."""
        if isinstance(value, types.ModuleType):
            self.module_object(value)
        elif isinstance(value, type):
            if _has_file(value):
                self.klass(value, what)
            else:  # a built-in type (int, str): the interpreter's
                self.add(f"value:{what}", f"type:{value.__module__}.{value.__qualname__}")
        elif callable(value):
            self.callable(value, what)
        else:
            self.add(f"value:{what}", _data_digest(value, what))

    def global_value(self, name: str, value: Any, fn: types.FunctionType) -> None:
        """A module global the code names: its file is covered; the current value of a plain
        immutable one is added (it may come from the environment, not the source)."""
        if isinstance(value, types.ModuleType):
            self.module_object(value)
        elif isinstance(value, types.FunctionType) and value.__code__.co_filename == fn.__code__.co_filename:
            self.callable(value, f"{fn.__module__}:{value.__qualname__}")  # a helper in the same file
        elif _immutable(value):
            try:
                self.add(f"global:{fn.__module__}.{name}", _data_digest(value, name))
            except _Unproven:
                pass  # too large to walk: its source is covered with the file

    def module_object(self, module: types.ModuleType) -> None:
        path = getattr(module, "__file__", None)
        if path:
            self.file(path, module.__name__, getattr(module, "__package__", None))

    # ------------------------------------------------------------------ files

    def file(self, path: str, module: str, package: str | None) -> None:
        """A source file and, for a project file, every project file it imports (a worklist,
        not recursion: a project's import chain can be longer than the recursion limit)."""
        work = [(path, module, package)]
        while work:
            path, module, package = work.pop()
            real = os.path.realpath(path)
            if real in self._seen_files:
                continue
            self._seen_files.add(real)
            kind = _where(real)
            if kind in ("stdlib", "respeval"):
                continue  # the Python version, respeval's version cover them
            if kind == "site":
                top = module.split(".")[0]
                found = _distribution_version(top)
                if found is not None:
                    self.entries[f"package:{top}"] = found
                    continue
            try:
                digest, imports = _read_source(real)
            except OSError as exc:
                raise _Unproven(f"cannot read {path}: {exc.strerror or exc}") from None
            self.files += 1
            # the module's name, not its path: a moved checkout is the same code
            self.add(f"file:{module or os.path.basename(real)}", digest)
            if kind == "site":
                continue  # an installed file no distribution owns: itself only
            if package is None:
                package = module if os.path.basename(real).startswith("__init__.") else module.rpartition(".")[0]
            for name in reversed(_absolute(imports, package)):
                for candidate in reversed(_parents(name)):
                    found_path = _find_module(candidate, os.path.dirname(real))
                    if found_path is not None:
                        work.append((found_path, candidate, None))


def _has_file(cls: type) -> bool:
    module = sys.modules.get(cls.__module__)
    return cls.__module__ != "builtins" and bool(getattr(module, "__file__", None))


def _global_names(code: types.CodeType) -> Iterator[str]:
    """The global names a code object (and the functions nested in it) may read."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)


_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_BUILTINS = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


def _immutable(value: Any) -> bool:
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(v) for v in value)
    return False


def _data_digest(value: Any, what: str) -> str:
    h = hashlib.sha256()
    budget = [_MAX_ITEMS]
    for piece in _encode(value, what, budget, set()):
        h.update(piece)
    return h.hexdigest()


def _encode(value: Any, what: str, budget: list[int], active: set[int]) -> Iterator[bytes]:
    """Plain data as unambiguous bytes (type-tagged, length-prefixed); anything else is
    refused, naming ``what`` holds it."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _Unproven(f"{what} is too large to fingerprint")
    if value is None or isinstance(value, bool):
        yield b"c%r;" % (value,)
    elif isinstance(value, int):
        yield b"i%d;" % value
    elif isinstance(value, float):
        yield b"f" + (value.hex() if math.isfinite(value) else repr(value)).encode() + b";"
    elif isinstance(value, complex):
        yield b"j%s;" % repr(value).encode()
    elif isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        yield b"s%d:" % len(raw) + raw
    elif isinstance(value, (bytes, bytearray)):
        yield b"b%d:" % len(value) + bytes(value)
    elif isinstance(value, (tuple, list, dict, set, frozenset)):
        if id(value) in active:
            raise _Unproven(f"{what} refers to itself")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                items = sorted(
                    (b"".join(_encode(k, what, budget, active)), b"".join(_encode(v, what, budget, active)))
                    for k, v in value.items()
                )
                yield b"d%d:" % len(items)
                for k, v in items:
                    yield k + v
            elif isinstance(value, (set, frozenset)):
                members = sorted(b"".join(_encode(v, what, budget, active)) for v in value)
                yield b"S%d:" % len(members) + b"".join(members)
            else:
                yield (b"t" if isinstance(value, tuple) else b"l") + b"%d:" % len(value)
                for v in value:
                    yield from _encode(v, what, budget, active)
        finally:
            active.discard(id(value))
    elif isinstance(value, re.Pattern):
        yield b"r%d:" % value.flags
        yield from _encode(value.pattern, what, budget, active)
    elif type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        if value.dtype.hasobject:
            raise _Unproven(f"{what} is a numpy array of Python objects")
        yield b"n%s:%r:" % (value.dtype.str.encode(), value.shape) + value.tobytes()
    elif type(value).__module__ == "numpy" and hasattr(value, "item") and hasattr(value, "dtype"):
        yield b"N%s:" % value.dtype.str.encode()
        yield from _encode(value.item(), what, budget, active)
    else:
        raise _Unproven(f"{what} is a {type(value).__qualname__} object, which cannot be fingerprinted")


# --------------------------------------------------------------------------- where files are


@functools.lru_cache(maxsize=1)
def _roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(installed-package dirs, standard-library dirs), as real paths."""
    paths = sysconfig.get_paths()
    sites = {paths.get("purelib"), paths.get("platlib")}
    try:
        sites.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - old virtualenvs
        pass
    user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    sites.add(user)
    stdlib = {paths.get("stdlib"), paths.get("platstdlib")}
    real = lambda ps: tuple(sorted({os.path.realpath(p) + os.sep for p in ps if p}))  # noqa: E731
    return real(sites), real(stdlib)


def _where(path: str) -> str:
    """``respeval``, ``site`` (an installed package), ``stdlib`` or ``project``."""
    if path.startswith(str(_PACKAGE_DIR) + os.sep):
        return "respeval"
    sites, stdlib = _roots()
    parts = Path(path).parts
    if path.startswith(sites) or "site-packages" in parts or "dist-packages" in parts:
        return "site"
    if path.startswith(stdlib):
        return "stdlib"
    return "project"


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    try:
        return dict(importlib.metadata.packages_distributions())
    except Exception:  # noqa: BLE001 - broken metadata of some package: no versions, files instead
        return {}


@functools.cache
def _distribution_version(top: str) -> str | None:
    """The installed version(s) of the distribution(s) providing import name ``top``."""
    try:  # most distributions are named as they are imported: no scan of every package
        return f"{top}=={importlib.metadata.version(top)}"
    except (importlib.metadata.PackageNotFoundError, ValueError):
        pass
    names = _distributions().get(top)
    if not names:
        return None
    versions = []
    for name in sorted(set(names)):
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            return None
    return ",".join(versions)


_SOURCES: dict[str, tuple[tuple[int, int, int], str, tuple[tuple[int, str, tuple[str, ...]], ...]]] = {}


def _read_source(path: str) -> tuple[str, tuple[tuple[int, str, tuple[str, ...]], ...]]:
    """A file's digest and the imports it names (level, module, names), cached while the
    file's size and modification time stay the same."""
    st = os.stat(path)
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    cached = _SOURCES.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1], cached[2]
    with open(path, "rb") as fh:
        raw = fh.read()
    digest = hashlib.sha256(raw).hexdigest()
    imports: list[tuple[int, str, tuple[str, ...]]] = []
    if path.endswith(".py"):
        try:
            tree = ast.parse(raw, filename=path)
        except (SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                imports.extend((0, alias.name, ()) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                imports.append((node.level, node.module or "", tuple(a.name for a in node.names if a.name != "*")))
    result = tuple(imports)
    _SOURCES[path] = (stamp, digest, result)
    return digest, result


def _absolute(imports: tuple[tuple[int, str, tuple[str, ...]], ...], package: str) -> list[str]:
    """The modules the imports may load, as absolute names (``from a import b``: ``a`` and,
    if it is one, the submodule ``a.b``)."""
    out: list[str] = []
    for level, module, names in imports:
        if level:
            base_parts = package.split(".") if package else []
            if level - 1 > len(base_parts) or not package:
                continue  # a relative import outside any package fails when it runs
            base = ".".join(base_parts[: len(base_parts) - (level - 1)])
            module = f"{base}.{module}" if module else base
        if not module:
            continue
        out.append(module)
        out.extend(f"{module}.{name}" for name in names)
    return list(dict.fromkeys(out))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _find_module(name: str, near: str) -> str | None:
    """The file module ``name`` loads from, found without running any code: the loaded
    module's file, else the import system's path finders (``sys.path``, then the importing
    file's folder); None for built-in modules, namespace packages and names not found."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        path = getattr(loaded, "__file__", None)
        return path if isinstance(path, str) and os.path.isfile(path) else None
    parent, _, _ = name.rpartition(".")
    if parent:
        owner = sys.modules.get(parent)
        search = list(getattr(owner, "__path__", None) or []) if owner is not None else _search_path(parent, near)
        if not search:
            return None
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, search)
        except KeyError:  # a namespace portion whose parent is not imported (see _search_path)
            return None
    else:
        if name in sys.builtin_module_names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name) or importlib.machinery.PathFinder.find_spec(name, [near])
    if spec is None or not spec.has_location or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return spec.origin


def _search_path(package: str, near: str) -> list[str]:
    """The folders of a package, imported or not (found without running it); none for a
    package inside a namespace package that is not imported (the import system computes a
    namespace portion's folders from its parent module, so it cannot be found unrun)."""
    try:
        return _search_path_of(package, near)
    except KeyError:
        return []


def _search_path_of(package: str, near: str) -> list[str]:
    locations: list[str] | None = None
    for candidate in _parents(package):
        owner = sys.modules.get(candidate)
        if owner is not None:
            locations = list(getattr(owner, "__path__", None) or [])
        else:
            if locations is None:
                spec = importlib.machinery.PathFinder.find_spec(candidate) or importlib.machinery.PathFinder.find_spec(
                    candidate, [near]
                )
            else:
                spec = importlib.machinery.PathFinder.find_spec(candidate, locations)
            if spec is None or not spec.submodule_search_locations:
                return []
            locations = list(spec.submodule_search_locations)
        if not locations:
            return []
    return locations or []
