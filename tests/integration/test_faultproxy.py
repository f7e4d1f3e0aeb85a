# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fault proxy (tests/integration/faultproxy.py) in front of the session's real kube-apiserver: what it lets
through keeps the real server's answers (authentication included), what it injects is what the tests ask for."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any, Iterator, Optional, Tuple

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration.controlplane import ControlPlane
from ansible_collections.nodeops.numa_drift.tests.integration.faultproxy import FaultProxy

NAMESPACE = "/api/v1/namespaces/default"


@pytest.fixture
def proxy(control_plane: ControlPlane, tmp_path: Any) -> Iterator[FaultProxy]:
    with FaultProxy(control_plane.server, control_plane.ca_file, str(tmp_path)) as started:
        yield started


def call(url: str, method: str = "GET", token: Optional[str] = None, body: Any = None, ca: Optional[str] = None) -> Tuple[int, Any]:
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode("utf-8"),
                                     headers=dict({"Accept": "application/json", "Content-Type": "application/json"},
                                                  **({"Authorization": "Bearer " + token} if token else {})))
    context = ssl.create_default_context(cafile=ca) if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_the_proxy_forwards_to_the_real_server_and_logs_every_request(control_plane: ControlPlane, proxy: FaultProxy) -> None:
    status, namespace = call(proxy.url + NAMESPACE + "?resourceVersion=0", token=control_plane.admin_token, ca=proxy.ca_file)
    assert status == 200 and namespace["metadata"]["name"] == "default", namespace
    # The real server authenticates: the proxy passes the token on and the answer back.
    status, answer = call(proxy.url + NAMESPACE, token="not-a-token", ca=proxy.ca_file)
    assert status == 401 and answer["reason"] == "Unauthorized", answer
    assert [(r["method"], r["path"], r["query"], r["code"]) for r in proxy.requests()] == [
        ("GET", NAMESPACE, "resourceVersion=0", 200), ("GET", NAMESPACE, "", 401)]


def test_faults_answer_the_matching_requests_and_the_outage_every_request(control_plane: ControlPlane, proxy: FaultProxy) -> None:
    token, ca = control_plane.admin_token, proxy.ca_file
    proxy.add_fault("^%s$" % NAMESPACE, code=500, method="GET", count=2, message="injected fault")
    answers = [call(proxy.url + NAMESPACE, token=token, ca=ca) for _attempt in range(3)]
    assert [code for code, _body in answers] == [500, 500, 200], answers
    assert answers[0][1]["message"] == "injected fault" and answers[0][1]["kind"] == "Status"
    # The control listener takes the same controls (for processes the test starts), during an outage too.
    assert call(proxy.control_url + "/outage", "POST", body={"seconds": 600})[0] == 200
    status, answer = call(proxy.url + "/api/v1/nodes", token=token, ca=ca)
    assert status == 503 and answer["reason"] == "ServiceUnavailable", answer
    assert call(proxy.control_url + "/outage", "DELETE")[0] == 200
    assert call(proxy.url + "/api/v1/nodes", token=token, ca=ca)[0] == 200
    assert call(proxy.control_url + "/faults", "POST", body={"path": "^/api/v1/nodes$", "code": 429})[0] == 200  # until cleared
    assert [call(proxy.url + "/api/v1/nodes", token=token, ca=ca)[0] for _attempt in range(2)] == [429, 429]
    proxy.clear_faults()
    assert call(proxy.url + "/api/v1/nodes", token=token, ca=ca)[0] == 200
    logged = call(proxy.control_url + "/requests")[1]["requests"]
    assert [r["code"] for r in logged] == [500, 500, 200, 503, 200, 429, 429, 200]


def test_a_stopped_proxy_refuses_connections(control_plane: ControlPlane, proxy: FaultProxy) -> None:
    url = proxy.url
    proxy.stop()
    with pytest.raises(urllib.error.URLError) as refused:
        call(url + NAMESPACE, token=control_plane.admin_token, ca=proxy.ca_file)
    assert isinstance(refused.value.reason, ConnectionRefusedError), refused.value
