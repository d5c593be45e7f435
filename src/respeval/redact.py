"""Keeping secrets out of every text respeval writes: one scrubber, used at the root.

A judge run holds secrets (the API key it sends, credentials in a ``--base-url``), and the
outside world sends text back that may contain them: a server or proxy that echoes the
request's ``Authorization`` header in a 401 body, an exception that carries the request
URL, a model that repeats what it was sent.  :func:`redact` removes from a text

* every secret value *in use*: each key an adapter sends is registered with
  :func:`register_secret` when it is read (also its URL- and JSON-escaped forms), as are the
  values of sensitive extra headers and of secrets in a base URL; the values of environment
  variables named like secrets (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ...)
  are registered the first time the scrubber runs, so a process that never sent the key
  (``respeval report``) still knows it;
* bearer tokens (``Bearer <token>``) and the values of credential-like headers or fields,
  in any of the shapes they are echoed in (``authorization: ...``, ``"x-api-key": "..."``,
  ``'api-key': '...'``, ``password=...``);
* secrets in URLs: ``user:password@`` and query parameters named like credentials
  (``?api_key=``, ``&key=``, ``&access_token=``, ``&sig=``, ...);
* strings shaped like provider keys (``sk-...``, ``AIza...``, ``ghp_...``, ``hf_...``).

Each is replaced by :data:`REDACTED`.  The judge layer applies it where text enters or
leaves it (exception messages, completions, row results, the run summary, cache rows);
the CLI messages and the HTML report apply it once more, so an output path added later
starts clean.  Scrubbing never raises and leaves texts without secrets unchanged.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "SENSITIVE_HEADERS",
    "is_sensitive_name",
    "redact",
    "redact_data",
    "redact_url",
    "register_headers",
    "register_secret",
    "register_url_secrets",
    "url_secrets",
]

REDACTED = "[REDACTED]"

SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-auth-token",
        "cookie",
        "set-cookie",
        "ocp-apim-subscription-key",
    }
)

# Registered values shorter than this are not scrubbed by value: a 3-character "key" would
# turn every occurrence of those characters in reasoning text into [REDACTED].  Real keys
# are far longer; short ones are still caught in header, bearer and query shapes.
MIN_SECRET_LENGTH = 6

# A name that holds a credential: the last word of the name is one of these.
_SECRET_WORDS = (
    r"api[-_]?key|apikey|access[-_]?key|secret[-_]?key|private[-_]?key|subscription[-_]?key"
    r"|auth[-_]?token|access[-_]?token|refresh[-_]?token|id[-_]?token|token|secret|client[-_]?secret"
    r"|password|passwd|pwd|authorization|credentials?|cookie"
)
_SECRET_WORD = f"(?:{_SECRET_WORDS})"
_NAME_RE = re.compile(rf"(?i)^[\w.-]*?(?:^|[-_.]){_SECRET_WORD}$|^{_SECRET_WORD}$")
_ENV_NAME_RE = re.compile(
    r"(?i)(?:^|_)(?:API_?KEY|ACCESS_?KEY|SECRET_?KEY|PRIVATE_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$"
)

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]+@")
_QUERY = re.compile(r"([?&;])([\w.%-]+)=(\[REDACTED\]|[^&#\s'\"<>]*[^&#\s'\"<>.,:;)\]])")
# A credential field is found from its separator (":" or "="), the name read backwards
# from there and checked in Python: far cheaper than a regex trying every name everywhere.
_VALUE = re.compile(r"[ \t]*[\"']?((?:(?i:bearer|basic|token|digest|apikey|key)[ \t]+)?)(\[REDACTED\]|[^\s\"',;}\]]+)")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
# a bearer token anywhere (a token has a digit or a symbol: "bearer bonds" stays)
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?!\[REDACTED\])(?=[^\s\"']*[\d._~+/=-])[A-Za-z0-9._~+/-]{6,}=*")
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|hf_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})"
)
_FIELD_WORDS = ("key", "token", "secret", "password", "passwd", "pwd", "auth", "cookie", "credential")


def _redact_fields(text: str, lowered: str) -> str:
    """``name: value`` / ``"name": "value"`` / ``name=value`` with a credential name.

    Found from the credential words (``str.find``), each grown to its whole name and kept
    when a separator follows: prose that merely says "key" costs one lookup."""
    spans: list[tuple[int, int]] = []
    for word in _FIELD_WORDS:
        at = lowered.find(word) if word in lowered else -1
        while at >= 0:
            end = at + len(word)
            while end < len(text) and text[end] in _NAME_CHARS:
                end += 1
            sep = end
            if sep < len(text) and text[sep] in "\"'":
                sep += 1
            while sep < len(text) and text[sep] in " \t":
                sep += 1
            if sep < len(text) and text[sep] in ":=":
                begin = at
                while begin > 0 and text[begin - 1] in _NAME_CHARS and end - begin < 64:
                    begin -= 1
                if is_sensitive_name(text[begin:end]):
                    value = _VALUE.match(text, sep + 1)
                    if value is not None and value.group(2) != REDACTED:
                        spans.append((value.start(2), value.end(2)))
            at = lowered.find(word, end)
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, stop in sorted(set(spans)):
        if start < done:
            continue
        pieces.append(text[done:start])
        pieces.append(REDACTED)
        done = stop
    pieces.append(text[done:])
    return "".join(pieces)


def _query_sub(match: re.Match[str]) -> str:
    if match.group(3) == REDACTED or not _query_name_is_secret(urllib.parse.unquote_plus(match.group(2))):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}={REDACTED}"


class _Registry:
    """The secret values known to this process, as one alternation (longest first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._environment_read = False
        self.version = 0  # bumped with every new secret: results cached under it stay true

    def add(self, value: str) -> None:
        forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), json.dumps(value)[1:-1]}
        forms = {f for f in forms if len(f) >= MIN_SECRET_LENGTH}
        with self._lock:
            if forms <= self._values:
                return
            self._values |= forms
            self._pattern = None
            self.version += 1

    def pattern(self) -> re.Pattern[str] | None:
        if not self._environment_read:
            self._environment_read = True
            for name, value in list(os.environ.items()):
                if value and _ENV_NAME_RE.search(name):
                    self.add(value)
        pattern = self._pattern
        if pattern is None and self._values:
            with self._lock:
                ordered = sorted(self._values, key=len, reverse=True)
                pattern = self._pattern = re.compile("|".join(re.escape(v) for v in ordered))
        return pattern


_REGISTRY = _Registry()


def register_secret(value: str | None) -> None:
    """Remember a secret in use (an API key, a password) so that :func:`redact` removes it
    from any text, however it got there.  None, empty and very short values are ignored."""
    if isinstance(value, str) and value.strip():
        _REGISTRY.add(value.strip())


@functools.lru_cache(maxsize=4096)
def is_sensitive_name(name: str) -> bool:
    """Whether a header, field or parameter name holds a credential (``Authorization``,
    ``x-api-key``, ``api_key``, ``access_token``, ``password``, ...)."""
    lowered = name.strip().lower()
    return lowered in SENSITIVE_HEADERS or bool(_NAME_RE.match(lowered))


_REMEMBERED_LENGTHS = (64, 16_384)  # shorter texts cost less than the lookup; longer ones are not kept


def redact(text: Any) -> str:
    """``text`` (anything: it is made a string) without secrets (see the module docstring)."""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # noqa: BLE001 - a broken __str__ must not hide the scrubbing
            text = f"<{type(text).__name__}>"
    if _REMEMBERED_LENGTHS[0] <= len(text) <= _REMEMBERED_LENGTHS[1]:
        # a judge run scrubs the same system prompt in every row's calls: remembered, as
        # redact_url's results are, until another secret is registered
        _REGISTRY.pattern()  # the environment's secrets are known before the version is read
        return _redact_remembered(text, _REGISTRY.version)
    return _scrub(text)


@functools.lru_cache(maxsize=1024)
def _redact_remembered(text: str, version: int) -> str:
    return _scrub(text)


def _scrub(text: str) -> str:
    known = _REGISTRY.pattern()
    if known is not None:
        text = known.sub(REDACTED, text)
    # Each shape runs only when the cheap substring tests say it could match.
    if "@" in text and "://" in text:
        text = _USERINFO.sub(rf"\1{REDACTED}@", text)
    if "=" in text:
        text = _QUERY.sub(_query_sub, text)
    lowered = text.lower()
    if (":" in text or "=" in text) and (
        "key" in lowered
        or "token" in lowered
        or "secret" in lowered
        or "passw" in lowered
        or "pwd" in lowered
        or "auth" in lowered
        or "cookie" in lowered
        or "credential" in lowered
    ):
        text = _redact_fields(text, lowered)
    if "bearer" in lowered:
        text = _BEARER.sub(rf"\1{REDACTED}", text)
    if "sk-" in text or "AIza" in text or "AKIA" in text or "xox" in text or "hf_" in text or "gh" in text:
        text = _KEY_SHAPES.sub(REDACTED, text)
    return text


_SCALARS = (bool, int, float, type(None))


def redact_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, tuples, strings, numbers) with every string value in
    it redacted (keys are names, not data, and stay); other values are returned as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):  # the common case (a verdict) without a call per number
        return {
            k: redact(v) if type(v) is str else v if type(v) in _SCALARS else redact_data(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_data(v) for v in value)
    return value


def redact_url(url: str) -> str:
    """The URL with its credentials removed: no ``user:password@``, and credential-named
    query parameters (``api_key``, ``key``, ``token``, ``sig``, ...) set to :data:`REDACTED`.
    Used for endpoints in identities, messages and cache rows (one endpoint is redacted
    per answer stored: the result is cached until another secret is registered)."""
    _REGISTRY.pattern()  # the environment's secrets are known before the version is read
    return _redact_url(url, _REGISTRY.version)


@functools.lru_cache(maxsize=256)
def _redact_url(url: str, version: int) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return redact(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def url_secrets(url: str) -> list[str]:
    """The secret values in a URL (password, user name, credential-named query values)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    found = [v for v in (parts.username, parts.password) if v]
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=False):
        if _query_name_is_secret(name):
            found.append(value)
    return [urllib.parse.unquote(v) for v in found]


def register_url_secrets(url: str) -> None:
    """Register every secret in ``url`` (see :func:`url_secrets`)."""
    for value in url_secrets(url):
        register_secret(value)


def register_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> None:
    """Register the values of credential headers (``Authorization: Bearer x`` registers x)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    for name, value in items:
        if is_sensitive_name(name) and isinstance(value, str):
            scheme, _, rest = value.strip().partition(" ")
            register_secret(rest if rest and scheme.lower() in ("bearer", "basic", "token", "apikey") else value)


def _query_name_is_secret(name: str) -> bool:
    lowered = name.lower()
    return lowered in ("key", "sig", "signature", "code") or is_sensitive_name(lowered)


def _redact_pair(pair: str) -> str:
    name, sep, _value = pair.partition("=")
    return f"{name}={REDACTED}" if sep and _query_name_is_secret(urllib.parse.unquote_plus(name)) else pair
