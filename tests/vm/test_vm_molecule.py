# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side assertions against the guests of a converged molecule scenario (pytest-ansible).

The verify step of the scenarios drift and kaslr runs it on the controller
(extensions/molecule/resources/tasks/controller_checks.yml) with molecule's inventory and ansible.cfg::

    NUMA_DRIFT_MOLECULE_INVENTORY=<ephemeral>/inventory ANSIBLE_CONFIG=<ephemeral>/ansible.cfg \
        pytest -p pytest_ansible.plugin tests/vm/test_vm_molecule.py

It lives outside tests/unit and tests/integration, so the unit stage does not collect it; run
without NUMA_DRIFT_MOLECULE_INVENTORY it is a usage error. pytest-ansible (< 27, deprecated) is
enabled explicitly: pytest.ini disables it for every other test.
"""

from __future__ import annotations

import os

import pytest

INVENTORY = os.environ.get("NUMA_DRIFT_MOLECULE_INVENTORY", "")

if not INVENTORY:
    raise pytest.UsageError("NUMA_DRIFT_MOLECULE_INVENTORY is not set: these checks run in the verify step of a molecule scenario")


@pytest.fixture(name="guests")
def guests_fixture(ansible_adhoc):
    """Every guest of the scenario, through pytest-ansible's ad-hoc runner."""
    return ansible_adhoc(inventory=INVENTORY, host_pattern="all").all


def run(guests, module: str, **args):
    results = getattr(guests, module)(**args)
    assert results.contacted, "no guest answered %s" % module
    return results.contacted


def test_every_guest_probes_in_sync(guests):
    for host, result in run(guests, "nodeops.numa_drift.numa_drift_facts").items():
        drift = result["numa_drift"]
        assert drift["verdict"] == "in_sync", "%s: %s" % (host, drift["summary"])
        assert drift["checkpoint"]["pods"] >= 1, "%s: the repaired checkpoint lost its pods" % host
        assert not result.get("changed"), host


def test_repair_module_is_idempotent_on_repaired_guests(guests):
    for host, result in run(guests, "nodeops.numa_drift.kubelet_mm_checkpoint", state="repaired").items():
        assert not result.get("failed"), "%s: %s" % (host, result.get("msg"))
        assert not result.get("changed"), "%s rewrote an in-sync checkpoint" % host
        assert result["verdict"] == "in_sync", host


def test_kubelet_runs_under_systemd(guests):
    for host, result in run(guests, "ansible.builtin.command", argv=["systemctl", "is-active", "kubelet"]).items():
        assert result["stdout"].strip() == "active", "%s: kubelet is %s" % (host, result["stdout"])


def test_guests_see_several_numa_nodes(guests):
    for host, result in run(guests, "ansible.builtin.command", argv=["ls", "/sys/devices/system/node"]).items():
        nodes = [entry for entry in result["stdout"].split() if entry.startswith("node")]
        assert len(nodes) >= 2, "%s: %s" % (host, nodes)
