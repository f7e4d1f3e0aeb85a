# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The states of the checkpoint write (``repaired``, ``absent``, ``restored``) as one state machine.

:func:`step_for` chooses what a run does from the state asked for and the probe's result;
:func:`kubelet_refusal` says whether a running kubelet forbids it; :func:`run_step` makes the
write through :mod:`_write.repair`. The module ``kubelet_mm_checkpoint`` only turns the outcome
into Ansible's result. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import kubelet_processes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import RepairOutcome
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.sideline import (
    restore_checkpoint,
    sideline_checkpoint,
)

__all__ = ["STATES", "RESTORE", "CLEANUP", "CHECK", "SIDELINE", "REPAIR", "STEPS", "step_for", "kubelet_refusal", "run_step"]

STATES = ("repaired", "absent", "restored")
RESTORE = "restore"  # put a backup back (state restored)
CLEANUP = "cleanup"  # no checkpoint: only what a killed run of ours left is removed
CHECK = "check"  # not repairable: refused (touches nothing), or nothing to do (only leftovers removed)
SIDELINE = "sideline"  # state absent: the checkpoint is moved aside
REPAIR = "repair"  # state repaired: the checkpoint is rewritten
STEPS = (RESTORE, CLEANUP, CHECK, SIDELINE, REPAIR)
# The steps that change the checkpoint itself, so not while kubelet runs (it rewrites the file at every change).
STEPS_NEEDING_KUBELET_STOPPED = (RESTORE, SIDELINE, REPAIR)


def step_for(state: str, result: ProbeResult) -> str:
    """What a run with ``state`` does on the probed node."""
    if state not in STATES:
        raise ValueError("state must be one of %s, not %r" % (", ".join(STATES), state))
    if state == "restored":
        return RESTORE
    if state == "repaired" and result.assessment.repairable:
        return REPAIR  # memory_manager_state, cpu_manager_state or both (a stale defaultCpuSet beside no memory file)
    if state == "repaired" and result.assessment.verdict not in NOTHING_TO_DO:
        return CHECK  # refused, with or without a memory_manager_state (kubelet's CPU manager may refuse alone)
    if result.raw is None:
        return CLEANUP
    return SIDELINE if state == "absent" else CHECK


def kubelet_refusal(step: str, root: str, force: bool, path: str, proc_dir: str = "/proc") -> Optional[str]:
    """The message refusing ``step`` while kubelet runs on this machine, or None.

    Only at ``root`` ``/`` (a node mounted elsewhere is not this machine's kubelet), never with
    ``force``, never for the steps that leave the checkpoint as it is.
    """
    if step not in STEPS_NEEDING_KUBELET_STOPPED or force or os.path.realpath(root) != "/":
        return None
    running = kubelet_processes(proc_dir)
    if not running:
        return None
    return "kubelet is running (%s): stop it before touching %s, or set force=true" % (", ".join(running), path)


def run_step(step: str, result: ProbeResult, options: Dict[str, Any], backup: bool = True, loop_max_repairs: int = 3,
             backup_file: Optional[str] = None, cpu_backup_file: Optional[str] = None) -> RepairOutcome:
    """Make ``step``'s write; ``options`` are those every write takes (backup_dir, history_file, by, dry_run,
    lock_timeout, loop_window_hours). Raises :class:`_write.procedure.RepairError` as the writes do."""
    if step == RESTORE:
        return restore_checkpoint(result, backup=backup, backup_file=backup_file, cpu_backup_file=cpu_backup_file, **options)
    if step in (CLEANUP, SIDELINE):
        return sideline_checkpoint(result, **options)
    if step == CHECK:
        return repair_node(result, **options)
    if step == REPAIR:
        return repair_node(result, backup=backup, loop_max_repairs=loop_max_repairs, **options)
    raise ValueError("unknown step %r" % step)
