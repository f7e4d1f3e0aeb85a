# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sandbox fleets on the session's real control plane (tests/integration/controlplane.py).

``real_fleet(...)`` brings up ``tests/sandbox/fleet.py up --api-server ...``: the fleet's Nodes and pods
are created on the real kube-apiserver with the admin token, the kubelet stand-ins register and post
their status there, and the playbooks run with the kubeconfig given (the shipped ServiceAccount's, see
``service_account_kubeconfig``, where a test is about a playbook). Every fleet gets its own node names
(``rNN-node-01``, ...) and ``down`` deletes its Nodes and pods, so the fleets of one session do not see
each other's Nodes once they are down. The pause ConfigMap and the lock Lease are cluster-wide: tests
that write them restore them.
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence, Type

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration import controlplane, faultproxy
from ansible_collections.nodeops.numa_drift.tests.integration import test_fleet_sandbox as sandbox
from ansible_collections.nodeops.numa_drift.tests.integration.controlplane import ControlPlane

LOCK_LEASE = "nodeops-numa-drift"
_PREFIXES = itertools.count(1)

# The shipped RBAC objects and their ServiceAccount (one reading, in controlplane.py: the QEMU scenarios use it too).
RBAC_FILE = controlplane.RBAC_FILE
SERVICE_ACCOUNT = controlplane.SERVICE_ACCOUNT
rbac_documents = controlplane.rbac_documents
# The shipped manifests applied (again: a test may have changed a role); a token of their ServiceAccount.
apply_shipped_rbac = controlplane.shipped_service_account_token


def service_account_kubeconfig(plane: ControlPlane, token: str) -> str:
    """A kubeconfig with the ServiceAccount's token (what an operator hands the playbooks)."""
    return plane.kubeconfig("nodeops-numa-drift", token)


class RealFleet(sandbox.Fleet):
    """A sandbox fleet whose API is the real control plane: its audit is the API server's audit log."""

    plane: ControlPlane
    up_seconds: float

    @staticmethod
    def rows_action(run: sandbox.Run, name: str) -> str:
        return run.rows()[name]["action"]

    def audit(self) -> List[Dict[str, Any]]:
        """Writes to this fleet's Nodes and to the lock's Lease (not the API server's own Leases, not other fleets' Nodes)."""
        return [entry for entry in self.plane.audit()
                if (entry["kind"] == "Node" and entry["name"] in self.nodes) or (entry["kind"] == "Lease" and entry["name"] == LOCK_LEASE)]

    def outage(self, seconds: float, mode: str = "unavailable") -> None:
        raise AssertionError("API outages are injected by a fault proxy: use proxied_fleet (tests/integration/faultproxy.py)")

    def end_outage(self) -> None:
        raise AssertionError("API outages are injected by a fault proxy: use proxied_fleet (tests/integration/faultproxy.py)")

    def cluster_nodes(self) -> List[Dict[str, Any]]:
        """Every Node of the cluster (other fleets' that are still up too)."""
        return self.api("GET", "/api/v1/nodes")["items"]


class ProxiedFleet(RealFleet):
    """A fleet on the real control plane whose playbooks reach it through a fault proxy (outages, failing requests).

    The kubelet stand-ins and the test's own reads (``api``, ``audit``) go to the real server directly, as kubelet
    and kubectl would from elsewhere: an outage is the playbook's view of the API only."""

    proxy: faultproxy.FaultProxy

    def outage(self, seconds: float, mode: str = "unavailable") -> None:
        assert mode == "unavailable", "the fault proxy answers 503 in an outage; stop() it to refuse connections"
        self.proxy.outage(seconds)

    def end_outage(self) -> None:
        self.proxy.end_outage()


def real_fleet(tmp_path_factory: pytest.TempPathFactory, collections: str, plane: ControlPlane, kubeconfig: str,
               scenario: str, nodes: int = 0, up_args: Sequence[str] = (), prefix: Optional[str] = None,
               fleet_class: Type[RealFleet] = RealFleet) -> Iterator[RealFleet]:
    """A sandbox fleet on ``plane`` with its own node names (``rNN-node-01``, ... unless ``prefix``: one module only);
    the playbooks use ``kubeconfig``; down (Nodes and pods deleted) at the end."""
    prefix = prefix or "r%02d" % next(_PREFIXES)
    directory = str(tmp_path_factory.mktemp("fleet-real-" + scenario))
    started = time.monotonic()
    fleet = fleet_class(directory, collections, scenario, nodes=nodes, up_args=[
        "--api-server", plane.server, "--token", plane.admin_token, "--api-ca", plane.ca_file,
        "--kubeconfig", kubeconfig, "--name-prefix", prefix] + list(up_args))
    fleet.plane = plane
    fleet.up_seconds = time.monotonic() - started
    try:
        yield fleet
    finally:
        fleet.down()
        shutil.rmtree(directory, ignore_errors=True)


def proxied_fleet(tmp_path_factory: pytest.TempPathFactory, collections: str, plane: ControlPlane, token: str,
                  scenario: str, nodes: int = 0) -> Iterator[ProxiedFleet]:
    """A fleet on ``plane`` whose playbooks run under ``token`` (the shipped ServiceAccount's) through a fault proxy
    in front of ``plane``; the proxy stops after the fleet is down."""
    directory = str(tmp_path_factory.mktemp("faultproxy"))
    with faultproxy.FaultProxy(plane.server, plane.ca_file, directory) as proxy:
        kubeconfig = proxy_kubeconfig(proxy, token, directory)
        for fleet in real_fleet(tmp_path_factory, collections, plane, kubeconfig, scenario, nodes=nodes, fleet_class=ProxiedFleet):
            assert isinstance(fleet, ProxiedFleet)
            fleet.proxy = proxy
            yield fleet


def proxy_kubeconfig(proxy: faultproxy.FaultProxy, token: str, directory: str, name: str = "nodeops-numa-drift") -> str:
    """A kubeconfig for the proxy (its own CA) with ``token``."""
    path = os.path.join(directory, "kubeconfig-proxy-%s.yml" % name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(controlplane.kubeconfig_text(proxy.url, proxy.ca_file, token, name))
    os.chmod(path, 0o600)
    return path


def lock_holder(plane: ControlPlane) -> Optional[str]:
    """The lock Lease's holder now (None: free or absent)."""
    status, lease = plane.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + LOCK_LEASE)
    return (lease.get("spec") or {}).get("holderIdentity") if status == 200 else None
