# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Session fixtures of the integration tests: the real control plane (kube-apiserver + etcd) and the shipped ServiceAccount."""

from __future__ import annotations

from typing import Iterator

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration import realapi
from ansible_collections.nodeops.numa_drift.tests.integration.controlplane import ControlPlane


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """kube-apiserver (built once, cached) + etcd on loopback, started once per session, stopped at its end.

    ``control_plane.kubeconfig("admin", control_plane.admin_token)`` is an admin kubeconfig; the RBAC tests
    make ServiceAccount kubeconfigs with ``service_account_token``."""
    plane = ControlPlane()
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def service_account_token(control_plane: ControlPlane) -> str:
    """The shipped manifests (extensions/rbac/) applied; a token of their ServiceAccount."""
    return realapi.apply_shipped_rbac(control_plane)


@pytest.fixture(scope="session")
def service_account(control_plane: ControlPlane, service_account_token: str) -> str:
    """A kubeconfig with the shipped ServiceAccount's token: what the playbooks run with against the real API server."""
    return realapi.service_account_kubeconfig(control_plane, service_account_token)
