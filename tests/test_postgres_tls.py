"""TLS options in SCREE_DATABASE_URL pass through to the server (issue 31, item 7): the test PostgreSQL server behind
a TLS front on 127.0.0.1 (tests/tls_proxy.py: the embedded build has no SSL of its own), its certificate signed by a
CA made here; `sslmode=verify-full` with that CA's certificate as `sslrootcert` connects over TLS, and with another
CA's it is one line, without the password or a traceback."""

from __future__ import annotations

import datetime
import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run_scree, scree_env
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pg_server import PgServer
from tls_proxy import TlsProxy

from scree.errors import IndexUnavailableError
from scree.store.pg_connect import connect

PASSWORD = "tls-secret-pw-5521"
DAY = datetime.timedelta(days=1)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_ca(common: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # key_cert_sign, crl_sign
        .sign(key, hashes.SHA256())
    )
    return cert, key


def server_cert(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey) -> tuple[bytes, bytes]:
    """A certificate for 127.0.0.1 (an IP address in its alternative names, as verify-full checks) and its key."""
    key = _key()
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + DAY)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem(key)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The server's certificate and key, its CA's certificate, and another CA's."""
    folder = tmp_path_factory.mktemp("tls")
    ca, ca_key = make_ca("scree test CA")
    other, _ = make_ca("another CA")
    cert, key = server_cert(ca, ca_key)
    files = {
        "cert": (folder / "server.crt", cert),
        "key": (folder / "server.key", key),
        "root": (folder / "root.crt", ca.public_bytes(serialization.Encoding.PEM)),
        "other": (folder / "other-root.crt", other.public_bytes(serialization.Encoding.PEM)),
    }
    for path, pem in files.values():
        path.write_bytes(pem)
    return {name: path for name, (path, _) in files.items()}


@pytest.fixture
def tls(pg_server: PgServer, certificates: dict[str, Path]) -> Iterator[TlsProxy]:
    with TlsProxy(certificates["cert"], certificates["key"], pg_server.socket_dir / ".s.PGSQL.5432") as proxy:
        yield proxy


def tcp_url(pg_url: str, port: int, root: Path) -> str:
    """The test database's URL, reached over TCP through the TLS front, with the password and TLS options."""
    database = pg_url.split("@/", 1)[1].split("?", 1)[0]
    return (
        f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/{database}"
        f"?sslmode=verify-full&sslrootcert={root}&connect_timeout=10"
    )


def test_verify_full_with_the_servers_ca_connects_over_tls(
    tmp_path: Path, pg_url: str, tls: TlsProxy, certificates: dict[str, Path]
) -> None:
    url = tcp_url(pg_url, tls.port, certificates["root"])
    conn = connect(url)
    try:
        assert conn.pgconn.ssl_in_use  # libpq's own word: this session is encrypted
        assert conn.info.parameter_status("server_version")
    finally:
        conn.close()
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe wombat burrow is under the orchard.\n")
    env = scree_env(tmp_path / "home", SCREE_EMBEDDER="hash", SCREE_DATABASE_URL=url, SCREE_COLLECTION="team/docs")
    done = run_scree("reindex", "--notes", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    found = run_scree("search", "--json", "--mode", "keyword", "--notes", str(folder), "wombat", env=env)
    assert [hit["path"] for hit in json.loads(found.stdout)["hits"]] == ["a.md"]
    assert PASSWORD not in done.stdout + done.stderr + found.stdout + found.stderr
    assert tls.sessions >= 3 and tls.refused == 0  # scree's sessions all came over TLS
    plain = url.replace("sslmode=verify-full", "sslmode=disable")
    with pytest.raises(IndexUnavailableError):  # the front speaks TLS only: what reached the server was TLS
        connect(plain)


def test_verify_full_with_another_ca_is_one_line_without_the_password(
    tmp_path: Path, pg_url: str, tls: TlsProxy, certificates: dict[str, Path]
) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    url = tcp_url(pg_url, tls.port, certificates["other"])
    env = scree_env(tmp_path / "home", SCREE_EMBEDDER="hash", SCREE_DATABASE_URL=url, SCREE_COLLECTION="team/docs")
    for command in (["reindex"], ["search", "text"], ["status"]):
        done = run_scree(*command, "--notes", str(tmp_path), env=env, timeout=60)
        assert done.returncode != 0, command
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "certificate verify failed" in lines[0] and "127.0.0.1" in lines[0], lines[0]
        assert "check the TLS options in SCREE_DATABASE_URL (sslmode, sslrootcert" in lines[0], lines[0]
        assert PASSWORD not in done.stdout + done.stderr
    assert tls.sessions == 0  # no session was made with a server it could not verify
