"""Who may talk to `scree serve --http` (R-M9), as pure checks over request headers: the Host and Origin allow-list
against DNS rebinding, and the bearer token compared in constant time. Each refusal is a status and one line."""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
BEARER = "bearer "

MISSING_TOKEN = 'refused: this server needs a bearer token: send "Authorization: Bearer <token>"'
WRONG_TOKEN = "refused: wrong bearer token"
NO_HOST = "refused: the request has no Host header"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int  # 421 foreign Host, 403 foreign Origin, 401 token
    text: str


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost: binding there needs no token."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str:
    """The name in a Host header without its port, lower-cased; an IPv6 literal without its brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


@dataclass(frozen=True, slots=True)
class HttpAccess:
    """The allow-list (host names, any port: a rebinding page cannot choose the name its browser sends) and the
    token (None: none asked, allowed only on loopback)."""

    allowed_hosts: frozenset[str]
    token: str | None = None

    @classmethod
    def for_bind(cls, bind_host: str, extra_hosts: tuple[str, ...] = (), token: str | None = None) -> HttpAccess:
        """The loopback names, the address bound (unless a wildcard) and the names given with --allow-host."""
        names = set(LOOPBACK_NAMES)
        if bind_host not in ("0.0.0.0", "::", ""):
            names.add(bind_host.lower() if bind_host.count(":") > 1 else host_name(bind_host))  # IPv6 bare
        names.update(host_name(h) for h in extra_hosts if h.strip())
        return cls(frozenset(names), token)

    def refusal(self, host: str | None, origin: str | None, authorization: str | None) -> Refusal | None:
        """None when the request may go on; Host and Origin are looked at before the token, so a forged page learns
        nothing about it."""
        if not host:
            return Refusal(421, NO_HOST)
        if host_name(host) not in self.allowed_hosts:
            return Refusal(421, f'refused: Host "{_shown(host)}" is not one this server answers to ({self._names()})')
        if origin is not None and not self._origin_allowed(origin):
            return Refusal(403, f'refused: Origin "{_shown(origin)}" may not call this server ({self._names()})')
        if self.token is not None:
            return self._token_refusal(authorization)
        return None

    def _origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin.strip())
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.allowed_hosts

    def _token_refusal(self, authorization: str | None) -> Refusal | None:
        if not authorization or not authorization.lower().startswith(BEARER):
            return Refusal(401, MISSING_TOKEN)
        given = authorization[len(BEARER) :].strip().encode("utf-8", "surrogateescape")
        assert self.token is not None
        if not hmac.compare_digest(given, self.token.encode("utf-8")):
            return Refusal(401, WRONG_TOKEN)
        return None

    def _names(self) -> str:
        return "allowed: " + ", ".join(sorted(self.allowed_hosts)) + "; add a name with --allow-host"


def _shown(value: str, limit: int = 200) -> str:
    """A header value as a refusal quotes it: printable ASCII only, cut at `limit`."""
    text = "".join(c if " " <= c <= "~" and c != '"' else "?" for c in value)
    return text if len(text) <= limit else text[:limit] + "..."
