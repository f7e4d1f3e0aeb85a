#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: kubelet_mm_checkpoint
short_description: Repair or sideline kubelet's memory manager checkpoint after benign NUMA drift
version_added: 0.1.0
description:
  - This module is for people who drive kubelet themselves. It writes the file and nothing else; it does not cordon
    the Node, stop or start kubelet, or wait for the Node to be Ready. To repair a node of a cluster, run the
    playbook C(nodeops.numa_drift.remediate) limited to it (C(ansible-playbook -i INVENTORY nodeops.numa_drift.remediate
    --limit NODE)), which does all of that around this module (see docs/playbooks.md).
  - With I(state=repaired), rewrites C(memory_manager_state) with the machine state kubelet recomputes from this
    boot's per-NUMA memory, keeping every pod's NUMA assignment, when and only when the probe's verdict is
    C(drift_within_bound). The file keeps its layout and gets checksums that every kubelet era accepts.
  - Kubelet starts its CPU manager before the memory manager. When C(cpu_manager_state) is stale only in its
    C(defaultCpuSet) (verdict C(cpu_default_set_stale), online CPUs recorded nowhere or only shared CPUs gone),
    I(state=repaired) re-derives C(defaultCpuSet) from this boot's online CPUs, keeps every pod's exclusive CPUs and the
    file's layout (C(v2), or v1.37's C(v4) with both halves), and writes it first, then C(memory_manager_state) when
    its drift is within the bound. Both are backed up and verified, and when either fails both are put back. A node
    whose memory manager refuses is refused whole.
  - C(in_sync) and C(no_checkpoint) change nothing. Every other verdict fails with the verdict, its causes and
    what to do, and leaves every file byte-identical.
  - With I(state=absent), moves the checkpoint into I(backup_dir) - the explicit form of kubelet's own advice
    "drain this node and delete the memory manager checkpoint file"; every Guaranteed pod's NUMA pinning is lost.
  - With I(state=restored), puts a backup back as the checkpoint - I(backup_file), or by default the newest
    C(*.before-repair*) or C(*.sidelined*) backup of the checkpoint in I(backup_dir) - through the same verified write.
    A checkpoint that already holds the backup's bytes is left alone.
  - Every write is atomic (temporary file C(.<name>.nodeops-numa-drift.<random>.tmp) beside it, fsync, rename,
    fsync of the directory), mode 0600 with the owner kept, preceded by a backup outside the kubelet directory,
    and followed by a re-read and (for repairs) a re-verification with the readers of every kubelet era; the
    original bytes are put back if that fails. Temporary files of ours left by a killed run are removed by the
    next run that writes.
  - Runs that write hold the node lock C(<root>/var/lib/nodeops-numa-drift/lock), so the role, the boot guard
    and a second controller serialize; of two concurrent repairs exactly one reports C(changed).
  - Only a regular file is read or replaced; a symbolic link, FIFO, socket, device or directory at the
    checkpoint's path fails with an error naming it (docs/safety.md).
  - C(changed) is true only when the checkpoint really changed. A write that fails leaves the original in place
    and removes the backup it had just taken; the message says what was and was not touched.
  - Repairs, sidelines and restores are recorded in the node's repair history (I(history_file)), which the loop
    guard reads; the boot guard and the remediate role share that file.
  - Refuses to touch the file while a kubelet process runs (checked when I(root=/)), unless I(force=true).
author:
  - nodeops.numa_drift contributors (@nodeops)
extends_documentation_fragment:
  - nodeops.numa_drift.node_options
attributes:
  check_mode:
    description: Can run in check mode and return the changed status it predicts without modifying the node.
    support: full
  diff_mode:
    description: Returns what changed (or would change, in check mode) in diff mode.
    support: full
    details: The diff shows per-node totals and allocatable of memory and every hugepage size, before and after.
options:
  state:
    description:
      - C(repaired) rewrites a checkpoint whose drift is within the bound; C(absent) sidelines it; C(restored) puts
        a backup back.
    type: str
    choices: [repaired, absent, restored]
    default: repaired
  backup:
    description:
      - Keep a copy of the original file in I(backup_dir) before rewriting it (C(<name>.<UTC stamp>.before-repair),
        or C(.before-restore) for I(state=restored)). With I(state=absent) the file is always moved there.
    type: bool
    default: true
  backup_dir:
    description:
      - Where backups go; outside the kubelet root directory so that nothing there is mistaken for state.
      - Defaults to C(<root>/var/lib/nodeops-numa-drift/backups).
    type: path
  backup_file:
    description:
      - With I(state=restored), the backup to put back. Default the newest C(before-repair) or C(sidelined)
        backup of the checkpoint in I(backup_dir) (by modification time), unless only I(cpu_backup_file) is given.
    type: path
  cpu_backup_file:
    description:
      - With I(state=restored), a backup of C(cpu_manager_state) to put back as C(cpu_manager_state) (the
        RV(cpu_backup_file) of a repair), first, in the same lock and verified write as the checkpoint. Given alone, only
        C(cpu_manager_state) is restored; with I(backup_file), both (how the remediate role rolls back a repair of both).
    type: path
  force:
    description:
      - Touch the file even though a kubelet process is running. Kubelet rewrites the whole file on every state
        change, so only use this when the process found is not the kubelet owning this file.
    type: bool
    default: false
  history_file:
    description:
      - The node's repair history (JSON), read by the loop guard and appended to after every write.
      - Defaults to C(<root>/var/lib/nodeops-numa-drift/history.json).
    type: path
  loop_max_repairs:
    description:
      - The loop guard. Refuse to repair (fail with RV(loop_tripped=true), touching nothing) a node already repaired
        this many times within I(loop_window_hours). Restores and sidelines are not counted.
    type: int
    default: 3
  loop_window_hours:
    description:
      - The loop guard's window. History entries older than this are dropped when the history is written.
    type: float
    default: 24
  repaired_by:
    description:
      - Who is repairing, recorded as C(by) in the history (the remediate role passes C(role), the boot guard C(guard)).
    type: str
    choices: [module, role, guard]
    default: module
  lock_timeout:
    description:
      - Seconds to wait for the node lock held by another run before failing, touching nothing.
    type: float
    default: 30
seealso:
  - module: nodeops.numa_drift.numa_drift_facts
"""

EXAMPLES = r"""
- name: Stop kubelet before touching its state
  ansible.builtin.systemd_service:
    name: kubelet
    state: stopped

- name: Repair the checkpoint when the drift is benign
  nodeops.numa_drift.kubelet_mm_checkpoint:
    state: repaired
  register: repair

- name: Show what was kept
  ansible.builtin.debug:
    msg: "{{ repair.numa_drift.summary }} (backup {{ repair.backup_file | default('none') }})"

- name: Sideline the checkpoint (loses every pod's NUMA pinning)
  nodeops.numa_drift.kubelet_mm_checkpoint:
    state: absent

- name: Put the newest backup back (kubelet did not come back with the repaired file)
  nodeops.numa_drift.kubelet_mm_checkpoint:
    state: restored

- name: Repair from the remediate role, recorded in the shared history
  nodeops.numa_drift.kubelet_mm_checkpoint:
    state: repaired
    repaired_by: role
    loop_max_repairs: 3
    loop_window_hours: 24
"""

RETURN = r"""
numa_drift:
  description: The probe's findings before any change, as returned by M(nodeops.numa_drift.numa_drift_facts).
  returned: always
  type: dict
verdict:
  description: The probe's verdict before any change.
  returned: always
  type: str
  sample: drift_within_bound
path:
  description: The checkpoint file.
  returned: always
  type: str
  sample: /var/lib/kubelet/memory_manager_state
backup_file:
  description:
    - The copy of the original file (I(state=repaired) with I(backup=true), the sidelined file, or with
      I(state=restored) the copy of the checkpoint it replaced).
    - On failure, the backup that was kept (absent when the write failed before changing anything and the
      backup was removed again).
  returned: changed and not check mode, or on failure when a backup was kept
  type: str
  sample: /var/lib/nodeops-numa-drift/backups/memory_manager_state.20261202T101500Z.before-repair
restored_from:
  description: The backup put back as the checkpoint (I(state=restored)).
  returned: state=restored, unless only I(cpu_backup_file) was given
  type: str
cpu_restored_from:
  description: The backup put back as C(cpu_manager_state) (I(state=restored) with I(cpu_backup_file)).
  returned: state=restored with cpu_backup_file
  type: str
written_layout:
  description: The layout of C(memory_manager_state) written (C(legacy) or C(v3)).
  returned: state=repaired and the memory manager's drift is repaired (C(drift_within_bound), or beside C(cpu_default_set_stale))
  type: str
cpu_written_layout:
  description:
    - The layout of C(cpu_manager_state) written (C(v2), C(v3) or C(v4), the file's own), with only C(defaultCpuSet) re-derived.
  returned: state=repaired and the verdict is cpu_default_set_stale
  type: str
cpu_backup_file:
  description:
    - The copy of the original C(cpu_manager_state) (I(state=repaired) with I(backup=true) of a C(cpu_default_set_stale)
      node), or with I(state=restored) and I(cpu_backup_file) the copy of the C(cpu_manager_state) it replaced.
    - RV(backup_file) is then the checkpoint's own backup, absent when only C(cpu_manager_state) was written.
  returned: changed and not check mode, when cpu_manager_state was rewritten
  type: str
  sample: /var/lib/nodeops-numa-drift/backups/cpu_manager_state.20261202T101500Z.before-repair
after:
  description: The verdict and summary of a fresh assessment of the file written (C(in_sync) after a repair).
  returned: changed and not check mode (state=repaired or restored)
  type: dict
action:
  description:
    - What the module did - C(repaired), C(sidelined), C(restored), C(none) (nothing to do or already done),
      C(refused), C(loop_guard) or C(dry_run) (check mode).
  returned: always except argument errors
  type: str
  sample: repaired
message:
  description: One line saying what was and was not touched.
  returned: success
  type: str
loop_tripped:
  description: True when the loop guard refused the repair (the module then fails and touches nothing).
  returned: state=repaired and the verdict is drift_within_bound
  type: bool
removed_temp_files:
  description:
    - Temporary files (and the lock file) an earlier, killed run of ours left, which this run removed. Not counted
      in C(changed), which is about the checkpoint only.
  returned: when there were any
  type: list
  elements: str
touched:
  description: On failure, whether the checkpoint may have been changed (false means it is byte-identical).
  returned: failure of a write
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts, numbers_text, repair_diff, summary_line
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import NODE_OPTIONS_SPEC, OptionError, probe_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import REPAIRED_BY, RepairError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.states import (
    CHECK,
    REPAIR,
    RESTORE,
    SIDELINE,
    STATES,
    kubelet_refusal,
    run_step,
    step_for,
)


def refuse_while_kubelet_runs(module, result, step):
    message = kubelet_refusal(step, module.params["root"], module.params["force"], result.path)
    if message is None:
        return
    if module.check_mode:
        module.warn(message)
    else:
        module.fail_json(msg=message, verdict=result.assessment.verdict, path=result.path)


def common_options(module):
    params = module.params
    return dict(backup_dir=params["backup_dir"], history_file=params["history_file"], by=params["repaired_by"],
                dry_run=module.check_mode, lock_timeout=params["lock_timeout"], loop_window_hours=params["loop_window_hours"])


def outcome_result(outcome, base):
    result = dict(base, changed=outcome.changed, action=outcome.action, message=outcome.message, loop_tripped=outcome.loop_tripped)
    if outcome.backup_file:
        result["backup_file"] = outcome.backup_file
    if outcome.cpu_backup_file:
        result["cpu_backup_file"] = outcome.cpu_backup_file
    if outcome.restored_from:
        result["restored_from"] = outcome.restored_from
    if outcome.cpu_restored_from:
        result["cpu_restored_from"] = outcome.cpu_restored_from
    if outcome.removed_temp_files:
        result["removed_temp_files"] = list(outcome.removed_temp_files)
    if outcome.after is not None and outcome.action != "dry_run":
        result["after"] = {"verdict": outcome.after.verdict, "summary": summary_line(outcome.after)}
    return result


def run_or_fail(module, base, step, result):
    params = module.params
    try:
        return run_step(step, result, common_options(module), backup=params["backup"], loop_max_repairs=params["loop_max_repairs"],
                        backup_file=params["backup_file"], cpu_backup_file=params["cpu_backup_file"])
    except RepairError as error:
        failed = dict(base)
        if error.backup_file:
            failed["backup_file"] = error.backup_file
        if error.cpu_backup_file:
            failed["cpu_backup_file"] = error.cpu_backup_file
        module.fail_json(msg=error.message, touched=error.touched, **failed)


# The module's options (its action plugin checks their types on the controller first, in the collection's words).
ARGUMENT_SPEC = dict(
    NODE_OPTIONS_SPEC,
    state=dict(type="str", default="repaired", choices=list(STATES)),
    backup=dict(type="bool", default=True),
    backup_dir=dict(type="path"),
    backup_file=dict(type="path"),
    cpu_backup_file=dict(type="path"),
    force=dict(type="bool", default=False),
    history_file=dict(type="path"),
    loop_max_repairs=dict(type="int", default=3),
    loop_window_hours=dict(type="float", default=24),
    repaired_by=dict(type="str", default="module", choices=list(REPAIRED_BY)),
    lock_timeout=dict(type="float", default=30),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    state = module.params["state"]
    for name in ("backup_file", "cpu_backup_file"):
        if module.params[name] and state != "restored":
            module.fail_json(msg="%s is only used with state=restored" % name)
    try:
        result = probe(HostFiles(module.params["root"]), **probe_arguments(module.params))
    except QuantityError as error:
        module.fail_json(msg="drift_bound: %s" % error)
    except OptionError as error:
        module.fail_json(msg=str(error))
    except OSError as error:
        module.fail_json(msg="cannot read the node under %s: %s" % (module.params["root"], error))
    facts = assessment_facts(result)
    base = dict(numa_drift=facts, verdict=result.assessment.verdict, path=result.path)
    step = step_for(state, result)
    refuse_while_kubelet_runs(module, result, step)
    # A failed write's result carries the diff of what it was about to do (repair, sideline).
    if step == REPAIR:
        base["diff"] = repair_diff(facts)
        if result.assessment.plan is not None:
            base["written_layout"] = result.assessment.plan.layout
        if result.cpu is not None and result.cpu.rewrite is not None:
            base["cpu_written_layout"] = result.cpu.rewrite.layout
    if step == SIDELINE:
        base["diff"] = {"before": numbers_text(facts["nodes"], "recorded") or "present\n", "after": "(absent)\n"}
    outcome = run_or_fail(module, base, step, result)
    if step == CHECK and outcome.action == "refused":  # touches nothing
        module.fail_json(msg=outcome.message, action="refused", **base)
    if step == REPAIR and (outcome.loop_tripped or not outcome.changed):
        base.pop("diff")
    if step == RESTORE and outcome.changed:
        base["diff"] = {"before": "%s (%s)\n" % (result.path, result.assessment.verdict),
                        "after": "%s (%s)\n" % (outcome.restored_from, outcome.verdict_after)}
    if step == REPAIR and outcome.loop_tripped:
        module.fail_json(msg=outcome.message, **outcome_result(outcome, base))
    module.exit_json(**outcome_result(outcome, base))


if __name__ == "__main__":
    main()
