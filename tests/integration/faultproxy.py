# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fault-injecting HTTPS proxy in front of the session's real kube-apiserver (tests/integration/controlplane.py).

What a real API server does not do on demand, for the tests of how the playbooks and the inventory plugin
take it: an outage (``503 Service Unavailable`` to every request for N seconds or until ended), a chosen
answer to the requests that match a method and a path (a regular expression; N times or until cleared),
the server gone (``stop``: nothing listens, connections are refused), and the log of every request
(method, path, query, the code answered). Everything else is forwarded to the real server, which keeps
its own semantics: authentication and RBAC (the client's ``Authorization`` header is passed on), 409s,
Leases, evictions.

The proxy serves TLS on 127.0.0.1 with its own self-signed certificate (made with openssl; ``ca_file``),
so the clients under test verify it as they would a cluster's; it verifies the real server with that
server's CA. A second listener, plain HTTP on 127.0.0.1 (``control_url``), takes the same controls as
JSON, for processes the test starts (a node's kubelet start command that breaks the API right after it)::

    POST   /outage   {"seconds": 600}                      503 to every API request until it ends
    DELETE /outage
    POST   /faults   {"method": "PATCH", "path": "^/api/v1/nodes/x$", "code": 500, "count": 2, "message": "..."}
                                                          ("count" absent: until cleared)
    DELETE /faults
    GET    /requests                                      {"requests": [{"time", "method", "path", "query", "code"}]}

Stdlib only; it runs as threads of the test process.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

HOST = "127.0.0.1"
# Not forwarded either way (RFC 9110 7.6.1: hop-by-hop), or recomputed.
HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
                        "content-length"))
UPSTREAM_TIMEOUT = 120.0
MAX_REQUESTS_KEPT = 5000


def self_signed_certificate(directory: str) -> Tuple[str, str]:
    """(certificate, key) for 127.0.0.1, made with openssl: the certificate is its own CA."""
    cert, key = os.path.join(directory, "faultproxy.crt"), os.path.join(directory, "faultproxy.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=numa-drift-faultproxy",
                    "-addext", "subjectAltName=IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,digitalSignature,keyCertSign"],
                   check=True, capture_output=True, timeout=60)
    os.chmod(key, 0o600)
    return cert, key


def status_body(code: int, reason: str, message: str) -> bytes:
    """A metav1 Status, as the API server answers an error."""
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                       "reason": reason, "code": code}).encode("utf-8")


class Faults:
    """The outage, the injected answers and the request log (shared by both listeners)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.outage_until = 0.0
        self.faults: List[Dict[str, Any]] = []
        self.requests: List[Dict[str, Any]] = []

    def outage(self, seconds: float) -> None:
        if seconds <= 0:
            raise ValueError("an outage needs seconds > 0")
        with self.lock:
            self.outage_until = time.monotonic() + seconds

    def end_outage(self) -> None:
        with self.lock:
            self.outage_until = 0.0

    def add_fault(self, fault: Dict[str, Any]) -> None:
        """``path`` (a regular expression searched in the request's path), ``method`` (any when absent), ``code``
        (500), ``reason``, ``message``, ``count`` (how many requests it answers; until cleared when absent)."""
        if not isinstance(fault, dict) or not fault.get("path"):
            raise ValueError('a fault needs at least "path" (a regular expression)')
        re.compile(fault["path"])
        with self.lock:
            self.faults.append(dict(fault))

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def answer(self, method: str, path: str) -> Optional[Tuple[int, str, str]]:
        """(code, reason, message) when the outage or a fault answers this request instead of the server."""
        with self.lock:
            left = self.outage_until - time.monotonic()
            if left > 0:
                return 503, "ServiceUnavailable", "injected outage (%.1f s left)" % left
            for fault in self.faults:
                count = fault.get("count")
                if fault.get("method", method).upper() == method and re.search(fault["path"], path) and (count is None or count > 0):
                    if count is not None:
                        fault["count"] = count - 1
                    return int(fault.get("code", 500)), str(fault.get("reason", "InternalError")), str(fault.get("message", "injected fault"))
        return None

    def record(self, method: str, path: str, query: str, code: int) -> None:
        with self.lock:
            self.requests.append({"time": time.time(), "method": method, "path": path, "query": query, "code": code})
            del self.requests[:-MAX_REQUESTS_KEPT]

    def logged(self) -> List[Dict[str, Any]]:
        with self.lock:
            return [dict(entry) for entry in self.requests]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    tls: Optional[ssl.SSLContext] = None
    faults: Faults
    upstream: Tuple[str, int, ssl.SSLContext]

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake in the request's own thread: a slow client does not hold up the others.
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        super().finish_request(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: once stopped, nothing answers
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        return

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _reply(self, code: int, body: bytes, headers: Tuple[Tuple[str, str], ...] = (("Content-Type", "application/json"),)) -> None:
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ApiHandler(_Handler):
    """The API listener: the injected answer, or the real server's."""

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        method, code = self.command, 502
        try:
            body = self._body()
            injected = self.server.faults.answer(method, parts.path)
            if injected:
                code = injected[0]
                self._reply(code, status_body(*injected))
                return
            code = self._forward(method, body)
        except (OSError, http.client.HTTPException) as error:
            if code == 502:
                self._reply(502, status_body(502, "BadGateway", "faultproxy: the API server did not answer: %s" % error))
        finally:
            self.server.faults.record(method, parts.path, parts.query, code)

    def _forward(self, method: str, body: bytes) -> int:
        host, port, context = self.server.upstream
        connection = http.client.HTTPSConnection(host, port, context=context, timeout=UPSTREAM_TIMEOUT)
        try:
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
            connection.request(method, self.path, body=body if body or method in ("POST", "PUT", "PATCH") else None, headers=headers)
            response = connection.getresponse()
            self.send_response(response.status, response.reason)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            length = response.getheader("Content-Length")
            if length is not None:
                self.send_header("Content-Length", length)
            self.end_headers()
            # Streamed (a watch has no end but the server's): HTTP/1.0, the end of the body is the end of the connection.
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
            return response.status
        finally:
            connection.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch  # noqa: N815


class ControlHandler(_Handler):
    """The control listener (plain HTTP): outage, faults, the request log."""

    def _control(self) -> None:
        faults = self.server.faults
        try:
            raw = self._body()
            body = json.loads(raw.decode("utf-8")) if raw else {}
            route = (self.command, urlsplit(self.path).path)
            if route == ("POST", "/outage"):
                faults.outage(float(body.get("seconds", 0)))
            elif route == ("DELETE", "/outage"):
                faults.end_outage()
            elif route == ("POST", "/faults"):
                faults.add_fault(body)
            elif route == ("DELETE", "/faults"):
                faults.clear_faults()
            elif route == ("GET", "/requests"):
                self._reply(200, json.dumps({"requests": faults.logged()}).encode("utf-8"))
                return
            else:
                self._reply(404, status_body(404, "NotFound", "unknown control %s %s" % route))
                return
            self._reply(200, b'{"ok": true}')
        except (ValueError, AttributeError, re.error) as error:
            self._reply(400, status_body(400, "BadRequest", str(error)))

    do_GET = do_POST = do_DELETE = _control  # noqa: N815


class FaultProxy:
    """``FaultProxy(server, ca_file, directory).start()``: ``url`` and ``ca_file`` for the clients under test,
    ``outage``/``end_outage``, ``add_fault``/``clear_faults``, ``requests()``, ``control_url``; ``stop()``."""

    def __init__(self, upstream: str, upstream_ca: str, directory: str) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "https" or not parts.hostname or not parts.port:
            raise ValueError("the upstream must be https://HOST:PORT, not %r" % upstream)
        self.upstream = (parts.hostname, parts.port, ssl.create_default_context(cafile=upstream_ca))
        self.directory = directory
        self.faults = Faults()
        self.ca_file = ""
        self._servers: List[_Server] = []
        self._threads: List[threading.Thread] = []

    def start(self) -> "FaultProxy":
        os.makedirs(self.directory, exist_ok=True)
        self.ca_file, key = self_signed_certificate(self.directory)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(self.ca_file, key)
        for handler, context in ((ApiHandler, tls), (ControlHandler, None)):
            server = _Server((HOST, 0), handler)
            server.tls, server.faults, server.upstream = context, self.faults, self.upstream
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True,
                                      name="faultproxy-%s" % handler.__name__)
            thread.start()
            self._servers.append(server)
            self._threads.append(thread)
        return self

    @property
    def url(self) -> str:
        return "https://%s:%d" % (HOST, self._servers[0].server_address[1])

    @property
    def control_url(self) -> str:
        return "http://%s:%d" % (HOST, self._servers[1].server_address[1])

    def outage(self, seconds: float) -> None:
        self.faults.outage(seconds)

    def end_outage(self) -> None:
        self.faults.end_outage()

    def add_fault(self, path: str, code: int = 500, method: Optional[str] = None, count: Optional[int] = None,
                  message: str = "injected fault") -> None:
        fault: Dict[str, Any] = {"path": path, "code": code, "message": message}
        if method:
            fault["method"] = method
        if count is not None:
            fault["count"] = count
        self.faults.add_fault(fault)

    def clear_faults(self) -> None:
        self.faults.clear_faults()

    def requests(self) -> List[Dict[str, Any]]:
        """Every request the API listener answered, in order: time, method, path, query (raw), code."""
        return self.faults.logged()

    def stop(self) -> None:
        """Both listeners closed: connections to ``url`` are refused from now on."""
        threads, self._threads = self._threads, []
        if not threads:
            return
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join(timeout=10)

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
