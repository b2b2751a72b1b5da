"""Who may talk to `scree serve --http` (R-M9), as pure checks over request headers: the Host and Origin allow-list
against DNS rebinding, and the bearer token compared in constant time. Each refusal is a status and one line."""

from __future__ import annotations

import hmac
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
BEARER = "bearer "

MISSING_TOKEN = 'refused: this server needs a bearer token: send "Authorization: Bearer <token>"'
WRONG_TOKEN = "refused: wrong bearer token"
NO_HOST = "refused: the request has no Host header"
# RFC 9110 Host: uri-host [":" port]; a reg-name of DNS labels (underscores allowed: container service names) or an
# IPv6 literal in brackets, and a port of 1-5 digits. Anything else is refused whole, never cut down to a name.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST = re.compile(rf"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>{_LABEL}(?:\.{_LABEL})*)\.?)(?::(?P<port>[0-9]{{1,5}}))?")
MAX_PORT = 65535


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


def host_name(value: str) -> str | None:
    """The name in a Host header without its port or a final dot, lower-cased; an IPv6 literal without its brackets,
    in its short form. None for anything that is not exactly uri-host [":" port] (issue 34: `[::1]]` and
    `localhost:8765.evil.com` were cut down to allowed names)."""
    found = _HOST.fullmatch(value.strip(" \t").lower())
    if found is None or (found["port"] is not None and int(found["port"]) > MAX_PORT):
        return None
    if found["v6"] is None:
        return str(found["name"])
    try:
        return str(ipaddress.IPv6Address(found["v6"]))
    except ValueError:
        return None


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
            names.add(
                bind_host.lower() if bind_host.count(":") > 1 else host_name(bind_host) or bind_host.lower()
            )  # IPv6 bare
        for extra in extra_hosts:
            name = host_name(extra) if extra.strip() else None
            if name is None and extra.strip():
                raise ValueError(f"allowed host {extra!r} is not a host name (a name or [IPv6], with an optional port)")
            if name is not None:
                names.add(name)
        return cls(frozenset(names), token)

    def refusal(self, host: str | None, origin: str | None, authorization: str | None) -> Refusal | None:
        """None when the request may go on; Host and Origin are looked at before the token, so a forged page learns
        nothing about it."""
        if not host:
            return Refusal(421, NO_HOST)
        name = host_name(host)
        if name is None:
            return Refusal(400, f'refused: Host "{_shown(host)}" is not a well-formed host[:port]')
        if name not in self.allowed_hosts:
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
