"""PII scrubbing with stable placeholders, and a report that counts, never quotes.

What is found, in this order (each kind's text is gone before the next looks):

============  =================================================================================
kind          what
============  =================================================================================
api_key       provider key shapes: ``sk-...`` (OpenAI, Anthropic ``sk-ant-...``), ``sk_live_`` /
              ``rk_live_`` (Stripe), ``AIza...`` (Google), ``ghp_`` / ``gho_`` / ``ghu_`` /
              ``ghs_`` / ``ghr_`` / ``github_pat_`` (GitHub), ``glpat-`` (GitLab), ``hf_``
              (Hugging Face), ``xox[abprs]-`` (Slack), ``AKIA`` / ``ASIA`` (AWS), JSON Web Tokens
              (``eyJ...``.``eyJ...``.``...``); and the value of a field named like a credential
              (``api_key=...``, ``"password": "..."``, ``secret: ...``, ``access_token=...``)
bearer_token  the credential after ``Bearer`` / ``Basic`` (an ``Authorization`` header)
email         ``local@domain.tld``
ipv6          colon-hex groups that :mod:`ipaddress` accepts as an IPv6 address (``::1``,
              ``2001:db8::8a2e:370:7334``, ``::ffff:192.0.2.1``)
ipv4          dotted quads of 0-255 (not part of a longer dotted number: ``1.2.3.4.5`` stays)
card          13 to 19 digits (spaces or dashes between them allowed) that pass the Luhn check
phone         ``+`` and a country code followed by 6 to 14 more digits (spaces, dots, dashes,
              parentheses between groups), or the North American ``(415) 555-2671`` /
              ``415-555-2671`` / ``415.555.2671`` shapes
============  =================================================================================

Each value found is replaced by ``[KIND_xxxxxxxxxx]``: the kind in capitals and the first 10
hex digits (40 bits) of HMAC-SHA256(key, kind + ":" + the value normalised: an email
lowercased, a card's or phone's digits, an IP address in :mod:`ipaddress`'s compressed form).
The same value gets the same placeholder wherever it occurs, in every file of a run, so
conversations stay readable ("the user gave [EMAIL_3f2a9c1b0d] twice") and cases that share a
value still share it.  The key is the run key: the one given (``--pii-key-file``, or the
``RESPEVAL_PII_KEY`` environment variable), which makes placeholders stable across runs as
well; else a random key drawn for the run (placeholders then differ from run to run, and the
key is never written anywhere).

:class:`Scrubber` counts replacements per kind (``counts``); the values themselves are
never kept, logged or reported.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from respeval.redact import is_sensitive_name

__all__ = ["KEY_ENV", "KINDS", "Scrubber", "luhn_valid", "run_key"]

KEY_ENV = "RESPEVAL_PII_KEY"
KINDS = ("api_key", "bearer_token", "email", "ipv6", "ipv4", "card", "phone")

_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|hf_[A-Za-z0-9]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r")"
)
_CREDENTIAL_FIELD = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?P<name>[A-Za-z0-9_.-]*?(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key"
    r"|client[_-]?secret|secret|password|passwd|pwd|access[_-]?token|refresh[_-]?token|auth[_-]?token|token))"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;&}\]]{6,})"
)
_BEARER = re.compile(r"(?i)\b(?P<scheme>bearer|basic)\s+(?P<value>[A-Za-z0-9._~+/-]{8,}=*)")
_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])"
)
_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:|:)(?:[0-9A-Fa-f]{0,4}:){1,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?:%[0-9A-Za-z]+)?(?![\w:])"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\d.])(?:{_OCTET}\.){{3}}{_OCTET}(?![\d]|\.\d)")
_DIGIT_RUN = re.compile(r"(?<![\w-])\d+(?:[ -]\d+)*(?![\w-])")
_DIGIT = re.compile(r"\d")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){1,5}(?:[ .-]?\d{1,4})"
    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}"
    r"|\d{3}[.-]\d{3}[.-]\d{4}"
    r"|\d{3} \d{3} \d{4})(?![\w])"
)
_KEY_HINTS = re.compile(r"sk-|k_live_|k_test_|AIza|gh[pousr]_|github_pat_|glpat-|hf_|xox|AKIA|ASIA|eyJ")
# a text without any of these has nothing any kind could match: the common case costs one search
_MAYBE = re.compile(
    r"[\d@:=]|sk-|k_live_|k_test_|AIza|gh[pousr]_|github_pat_|glpat-|hf_|xox|AKIA|ASIA|eyJ|(?i:bearer|basic)"
)
_PLACEHOLDER = re.compile(r"\[(?:API_KEY|BEARER_TOKEN|EMAIL|IPV6|IPV4|CARD|PHONE)_[0-9a-f]{10}\]")


def luhn_valid(digits: str) -> bool:
    """The Luhn check of a string of digits."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def run_key(key_file: str | None = None) -> tuple[bytes, str]:
    """The run key and where it came from: ``key_file``'s bytes, else ``RESPEVAL_PII_KEY``,
    else a random key for this run."""
    if key_file is not None:
        try:
            with open(key_file, "rb") as fh:
                key = fh.read().strip()
        except OSError as exc:
            from respeval.io.files import describe_os_error

            raise ValueError(describe_os_error(exc, key_file)) from exc
        if len(key) < 16:
            raise ValueError(
                f"{key_file}: a PII key needs at least 16 bytes (e.g. `head -c 32 /dev/urandom > {key_file}`)"
            )
        return key, "key file"
    env = os.environ.get(KEY_ENV)
    if env:
        if len(env) < 16:
            raise ValueError(f"{KEY_ENV} must hold at least 16 characters")
        return env.encode("utf-8"), KEY_ENV
    return os.urandom(32), "random (this run only)"


class Scrubber:
    """Replace PII in texts and JSON values (see the module docstring)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("the PII key needs at least 16 bytes")
        self._key = key
        self.counts: dict[str, int] = dict.fromkeys(KINDS, 0)
        self._memo: dict[tuple[str, str], str] = {}
        self._subs = {
            "api_key": self._replace("api_key", str),
            "credential": self._replace("api_key", _credential),
            "bearer_token": self._replace("bearer_token", str),
            "email": self._replace("email", str.lower),
            "ipv6": self._replace("ipv6", _ipv6),
            "ipv4": self._replace("ipv4", _ipv4),
            "phone": self._replace("phone", _phone),
        }

    def placeholder(self, kind: str, normalised: str) -> str:
        memo_key = (kind, normalised)
        found = self._memo.get(memo_key)
        if found is None:
            digest = hmac.new(self._key, f"{kind}:{normalised}".encode("utf-8", "surrogatepass"), hashlib.sha256)
            found = f"[{kind.upper()}_{digest.hexdigest()[:10]}]"
            if len(self._memo) > 100_000:
                self._memo.clear()
            self._memo[memo_key] = found
        return found

    def _replace(self, kind: str, normalise: Callable[[str], str | None]) -> Callable[[re.Match[str]], str]:
        def sub(match: re.Match[str]) -> str:
            value = match.group("value") if "value" in match.re.groupindex else match.group(0)
            if _PLACEHOLDER.fullmatch(value):
                return match.group(0)
            normalised = normalise(value)
            if normalised is None:
                return match.group(0)
            self.counts[kind] += 1
            text = self.placeholder(kind, normalised)
            if "value" in match.re.groupindex:
                start, end = match.span("value")
                whole = match.group(0)
                offset = match.start()
                return whole[: start - offset] + text + whole[end - offset :]
            return text

        return sub

    def text(self, text: str) -> str:
        """``text`` with every PII value replaced by its placeholder."""
        if not text or _MAYBE.search(text) is None:
            return text
        subs = self._subs
        if _KEY_HINTS.search(text):
            text = _KEY_SHAPES.sub(subs["api_key"], text)
        lowered = text.lower()
        if ("=" in text or ":" in text) and any(w in lowered for w in ("key", "secret", "passw", "pwd", "token")):
            text = _CREDENTIAL_FIELD.sub(subs["credential"], text)
        if "bearer" in lowered or "basic" in lowered:
            text = _BEARER.sub(subs["bearer_token"], text)
        if "@" in text:
            text = _EMAIL.sub(subs["email"], text)
        if text.count(":") >= 2:
            text = _IPV6.sub(subs["ipv6"], text)
        if _DIGIT.search(text):
            if "." in text:
                text = _IPV4.sub(subs["ipv4"], text)
            text = _DIGIT_RUN.sub(self._cards, text)
            text = _PHONE.sub(subs["phone"], text)
        return text

    def _cards(self, match: re.Match[str]) -> str:
        """Card numbers inside a run of digit groups: the first window of whole groups, from
        each start, of 13-19 digits that passes the Luhn check."""
        run = match.group(0)
        pieces = re.split(r"([ -])", run)  # groups at even positions, separators between
        groups = pieces[0::2]
        total = sum(len(g) for g in groups)
        if total < 13:
            return run
        out: list[str] = []
        i = 0
        while i < len(groups):
            found = -1
            digits = ""
            for j in range(i, len(groups)):
                digits += groups[j]
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and _card(digits) is not None:
                    found = j  # the longest valid window from i
            if found < 0:
                out.append(groups[i])
                if i + 1 < len(groups):
                    out.append(pieces[2 * i + 1])
                i += 1
                continue
            number = "".join(groups[i : found + 1])
            self.counts["card"] += 1
            out.append(self.placeholder("card", number))
            if found + 1 < len(groups):
                out.append(pieces[2 * found + 1])
            i = found + 1
        return "".join(out)

    def value(self, value: Any, key: str | None = None) -> Any:
        """A JSON value with every string in it (object keys too) scrubbed; a string under a
        credential-named key (``api_key``, ``password``, ``token``, ...) is replaced whole."""
        if isinstance(value, str):
            if key is not None and len(value) >= 6 and is_sensitive_name(key) and not _PLACEHOLDER.fullmatch(value):
                self.counts["api_key"] += 1
                return self.placeholder("api_key", value)
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                (self.text(k) if isinstance(k, str) else k): self.value(v, k if isinstance(k, str) else None)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        return value

    def report(self) -> dict[str, int]:
        """Replacements per kind (every kind listed, zeros included)."""
        return dict(self.counts)


def _credential(value: str) -> str | None:
    if _PLACEHOLDER.search(value) or value.upper() in ("NULL", "NONE", "TRUE", "FALSE", "REDACTED", "[REDACTED]"):
        return None
    return value


def _ipv6(value: str) -> str | None:
    try:
        return ipaddress.IPv6Address(value.split("%", 1)[0]).compressed
    except ValueError:
        return None


def _ipv4(value: str) -> str | None:
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        return None


def _card(value: str) -> str | None:
    digits = re.sub(r"[ -]", "", value)
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1 or not luhn_valid(digits):
        return None
    return digits


def _phone(value: str) -> str | None:
    digits = re.sub(r"\D", "", value)
    plus = value.lstrip().startswith("+")
    if plus and not 7 <= len(digits) <= 15:
        return None
    if not plus and len(digits) != 10:
        return None
    return ("+" if plus else "") + digits
