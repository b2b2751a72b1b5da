"""Keep secrets out of every message (R-E5): a process-wide set of secrets and a function that masks them."""

from __future__ import annotations

MASK = "[redacted]"
MIN_SECRET_LENGTH = 4
_secrets: set[str] = set()


def register_secret(secret: str | None) -> None:
    """Remember `secret` so every later redact() call masks it."""
    if secret and len(secret) >= MIN_SECRET_LENGTH:
        _secrets.add(secret)


def redact(text: str, *extra: str | None) -> str:
    """`text` with every registered secret (and any in `extra`) replaced by a mask, longest first."""
    secrets = set(_secrets)
    secrets.update(s for s in extra if s and len(s) >= MIN_SECRET_LENGTH)
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text
