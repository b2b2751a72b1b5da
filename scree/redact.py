"""Keep secrets out of every message (R-E5): a process-wide set of secrets and a function that masks them.

A secret is masked as it is and in the escaped forms a message may carry it in (Python and bytes reprs, JSON,
percent-encoding), in the transformed forms a server may echo it in (reversed, base64, hex: issue 25), and so is
any run of RUN_CHARS or more of the characters of any of those forms, in any letter case: a server that echoes the
key in pieces, upper-cased (issue 13) or reversed leaks none of it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from functools import lru_cache
from urllib.parse import quote

MASK = "[redacted]"
MIN_SECRET_LENGTH = 4
RUN_CHARS = 8  # issue 13: any 8 consecutive characters of a secret are masked, whatever their case
_secrets: set[str] = set()
# scheme://user:password@ : the user-info ends at the last '@' before the path (a password may hold '@' unescaped)
_USERINFO_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/?#@]*):(?P<password>[^/?#]*)@")


def register_secret(secret: str | None) -> None:
    """Remember `secret` so every later redact() call masks it."""
    if secret and len(secret) >= MIN_SECRET_LENGTH:
        _secrets.add(secret)


@lru_cache(maxsize=64)
def _forms(secret: str) -> frozenset[str]:
    """The secret, the escaped spellings an error message may show it in, and the transformed ones a server may
    echo it in (reversed, base64 with or without padding, URL-safe base64, hex)."""
    raw = secret.encode("utf-8", "backslashreplace")
    forms = {
        secret,
        secret[::-1],
        secret.encode("unicode_escape").decode("ascii"),
        json.dumps(secret)[1:-1],
        str(raw)[2:-1],
        quote(secret, safe=""),
        base64.b64encode(raw).decode("ascii"),
        base64.urlsafe_b64encode(raw).decode("ascii"),
        binascii.hexlify(raw).decode("ascii"),
    }
    forms.update([form.rstrip("=") for form in forms])
    return frozenset(form for form in forms if len(form) >= MIN_SECRET_LENGTH)


@lru_cache(maxsize=64)
def _runs(secret: str) -> frozenset[str]:
    """Every RUN_CHARS-long piece of every form of `secret`, lower-cased."""
    pieces: set[str] = set()
    for form in _forms(secret):
        lowered = form.lower()
        pieces.update(lowered[i : i + RUN_CHARS] for i in range(len(lowered) - RUN_CHARS + 1))
    return frozenset(pieces)


def _mask_runs(text: str, pieces: frozenset[str]) -> str:
    """`text` with every stretch covered by a piece (compared lower-cased) replaced by one mask."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: compare the text as it is
        lowered = text
    covered = [False] * len(text)
    for i in range(len(text) - RUN_CHARS + 1):
        if lowered[i : i + RUN_CHARS] in pieces:
            covered[i : i + RUN_CHARS] = [True] * RUN_CHARS
    if not any(covered):
        return text
    out: list[str] = []
    for i, ch in enumerate(text):
        if not covered[i]:
            out.append(ch)
        elif i == 0 or not covered[i - 1]:
            out.append(MASK)
    return "".join(out)


def redact(text: str, *extra: str | None) -> str:
    """`text` with every registered secret (and any in `extra`) masked: whole, escaped, or in runs of RUN_CHARS."""
    secrets = set(_secrets)
    secrets.update(s for s in extra if s and len(s) >= MIN_SECRET_LENGTH)
    for secret in sorted(secrets, key=len, reverse=True):
        for form in sorted(_forms(secret), key=len, reverse=True):
            if form in text:
                text = text.replace(form, MASK)
        if len(secret) >= RUN_CHARS:
            text = _mask_runs(text, _runs(secret))
    return text


def url_password(url: str) -> str | None:
    """The password in a URL's user-info (`scheme://user:password@host/...`), or None."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password
    except ValueError:  # a malformed port or bracket: fall back to the text between ':' and '@'
        match = _USERINFO_RE.match(url)
        return match.group("password") if match else None


def mask_url(url: str) -> str:
    """`url` with the password of its user-info masked (issue 25): `https://user:[redacted]@host/v1`. Works on any
    password length, where redact() leaves a secret under MIN_SECRET_LENGTH alone."""
    match = _USERINFO_RE.match(url)
    if match is None or match.group("password") is None:
        return url
    return url[: match.start("password")] + MASK + url[match.end("password") :]
