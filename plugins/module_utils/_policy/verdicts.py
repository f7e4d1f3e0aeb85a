# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict vocabulary (docs/modules.md, Verdicts): the verdicts in :func:`_policy.drift.assess`'s order,
the one a repair fixes, the ones that need nothing, and the advice for a repairable node. A leaf: imports only the
standard library.
"""

from __future__ import annotations

import shlex

__all__ = [
    "VERDICTS",
    "REPAIRABLE",
    "CPU_REPAIRABLE",
    "REPAIRABLE_VERDICTS",
    "TOLERATED",
    "CPU_VERDICTS",
    "UNTESTED",
    "NOTHING_TO_DO",
    "REMEDIATE_PLAYBOOK",
    "remediate_advice",
    "inventory_option",
]

VERDICTS = (
    "kubelet_config_unknown",
    "kubelet_release_untested",
    "kubelet_config_rejected",
    # kubelet starts the CPU manager before the memory manager: its refusal is met first.
    "cpu_manager_unknown",
    "cpu_manager_refuses",
    "cpu_default_set_stale",
    "cpu_checkpoint_untrusted",
    "no_checkpoint",
    "corrupt",
    "unsupported_layout",
    "policy_mismatch",
    "topology_changed",
    "reserved_changed",
    "hugepages_changed",
    "in_sync",
    "bound_unknown",
    "drift_exceeds_bound",
    "assignments_do_not_fit",
    "drift_within_bound",
    "kubelet_tolerates",
)
CPU_VERDICTS = ("cpu_manager_unknown", "cpu_manager_refuses", "cpu_default_set_stale", "cpu_checkpoint_untrusted")
REPAIRABLE = "drift_within_bound"
CPU_REPAIRABLE = "cpu_default_set_stale"
# What a repair fixes: the memory manager's drift, and the CPU manager's stale defaultCpuSet (with the memory
# manager's drift beside it, when there is one: both files in one kubelet stop).
REPAIRABLE_VERDICTS = (CPU_REPAIRABLE, REPAIRABLE)
TOLERATED = "kubelet_tolerates"
UNTESTED = "kubelet_release_untested"
NOTHING_TO_DO = ("in_sync", "no_checkpoint", TOLERATED)

REMEDIATE_PLAYBOOK = "nodeops.numa_drift.remediate"


def inventory_option(sources: object = ()) -> str:
    """``-i`` options for the inventory sources of the run (Ansible's ``ansible_inventory_sources``), quoted for a
    shell; ``-i INVENTORY`` where the run's are not known (on the node)."""
    paths = [str(source) for source in sources] if isinstance(sources, (list, tuple)) else []
    return " ".join("-i " + shlex.quote(path) for path in paths) or "-i INVENTORY"


def remediate_advice(hosts: str = "NODE", inventory: str = "-i INVENTORY") -> str:
    """What to do about a repairable node: the remediate playbook, limited to it (``hosts``: inventory names;
    ``inventory``: the run's ``-i`` options, :func:`inventory_option`).

    The playbook is the safe path (cordon, stop kubelet, repair, start, wait for Ready, uncordon); the
    kubelet_mm_checkpoint module alone does none of that around the write.
    """
    return ("repair it with the remediate playbook, which cordons the Node, stops kubelet, repairs the checkpoint, starts"
            " kubelet, waits for Ready and uncordons: ansible-playbook %s %s --limit %s (the"
            " kubelet_mm_checkpoint module is for those who stop and start kubelet themselves)" % (inventory, REMEDIATE_PLAYBOOK, hosts))
