"""reader_proc.http_access: the Host/Origin allow-list and the token check as pure functions over header values."""

from __future__ import annotations

import pytest

from scree.reader_proc.http_access import MISSING_TOKEN, WRONG_TOKEN, HttpAccess, Refusal, host_name, is_loopback

TOKEN = "0123456789abcdef-token"


@pytest.mark.parametrize(
    ("value", "name"),
    [("127.0.0.1:8765", "127.0.0.1"), ("LocalHost", "localhost"), ("[::1]:8765", "::1"), ("[::1]", "::1"),
     ("Notes.Example:80", "notes.example"), (" evil.example ", "evil.example")],
)  # fmt: skip
def test_host_name_drops_the_port_and_the_case(value: str, name: str) -> None:
    assert host_name(value) == name


def test_loopback_addresses() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.5", "example.com", ""))


def test_bind_address_and_extra_names_join_the_loopback_names() -> None:
    assert HttpAccess.for_bind("127.0.0.1").allowed_hosts == {"127.0.0.1", "localhost", "::1"}
    assert HttpAccess.for_bind("0.0.0.0").allowed_hosts == {"127.0.0.1", "localhost", "::1"}
    wide = HttpAccess.for_bind("192.168.1.5", ("Notes.Internal:8765", " "))
    assert wide.allowed_hosts == {"127.0.0.1", "localhost", "::1", "192.168.1.5", "notes.internal"}
    assert "fe80::1" in HttpAccess.for_bind("fe80::1").allowed_hosts


def test_host_then_origin_then_token() -> None:
    access = HttpAccess.for_bind("127.0.0.1", token=TOKEN)
    ok = f"Bearer {TOKEN}"
    assert access.refusal("localhost:1", None, ok) is None
    assert access.refusal("localhost:1", "http://localhost:3000", ok) is None
    assert access.refusal("localhost:1", "https://127.0.0.1", ok) is None
    foreign = access.refusal("evil.example", "http://evil.example", None)
    assert foreign is not None and foreign.status == 421  # Host first: a forged page learns nothing of the token
    page = access.refusal("localhost:1", "http://evil.example", None)
    assert page is not None and page.status == 403
    for origin in ("null", "file://", "http://localhost.evil.example", "ftp://localhost"):
        refused = access.refusal("localhost:1", origin, ok)
        assert refused is not None and refused.status == 403, origin
    assert access.refusal("localhost:1", None, None) == Refusal(401, MISSING_TOKEN)
    assert access.refusal("localhost:1", None, f"Basic {TOKEN}") == Refusal(401, MISSING_TOKEN)
    assert access.refusal("localhost:1", None, f"bearer {TOKEN}") is None  # the scheme is case-insensitive
    for wrong in (f"Bearer {TOKEN}0", f"Bearer {TOKEN[:-1]}", "Bearer \udcff", "Bearer é"):
        assert access.refusal("localhost:1", None, wrong) == Refusal(401, WRONG_TOKEN), wrong


def test_refusals_quote_headers_as_printable_ascii() -> None:
    refused = HttpAccess.for_bind("127.0.0.1").refusal('evil"\x1b[31m.example', None, None)
    assert refused is not None
    assert refused.text == 'refused: Host "evil??[31m.example" is not a well-formed host[:port]'
    foreign = HttpAccess.for_bind("127.0.0.1").refusal("evil.example", None, None)
    assert foreign is not None
    assert foreign.text.startswith('refused: Host "evil.example" is not one this server answers to (allowed: ')
    long = HttpAccess.for_bind("127.0.0.1").refusal("a" * 500, None, None)
    assert long is not None and ("a" * 200 + "...") in long.text and "a" * 201 not in long.text


MALFORMED_HOSTS = (
    "[::1]]",
    "localhost:8765.evil.com",
    "localhost:8765:1",
    "localhost:",
    "localhost:99999",
    "localhost:-1",
    "localhost:+80",
    "[::1",
    "[::1]x",
    "[::1]:80:80",
    "[localhost]",
    "[::1]evil.com",
    "local host",
    "localhost/evil",
    "localhost@evil.com",
    "evil.com#localhost",
    "127.0.0.1:8765 localhost",
    "localhost\x00.evil.com",
    "::1",  # an IPv6 literal must be in brackets
    "",
)


@pytest.mark.parametrize("value", MALFORMED_HOSTS)
def test_malformed_host_headers_are_refused(value: str) -> None:
    """Issue 34: Host parsed strictly (RFC 9110 uri-host [":" port]); a malformed form is refused, never cut down to
    an allowed name."""
    assert host_name(value) is None
    refused = HttpAccess.for_bind("127.0.0.1").refusal(value or " ", None, None)
    assert refused is not None and refused.status in (400, 421), value


@pytest.mark.parametrize(
    ("value", "name"),
    [("localhost.", "localhost"), ("[::1]:80", "::1"), ("[0:0::1]", "::1"), ("my_svc:8080", "my_svc")],
)
def test_well_formed_host_headers_still_pass(value: str, name: str) -> None:
    assert host_name(value) == name
