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
  - With I(state=repaired), rewrites C(memory_manager_state) with the machine state kubelet recomputes from this
    boot's per-NUMA memory, keeping every pod's NUMA assignment, when and only when the probe's verdict is
    C(drift_within_bound). The file keeps its layout and gets checksums that every kubelet era accepts.
  - C(in_sync) and C(no_checkpoint) change nothing. Every other verdict fails with the verdict, its causes and
    what to do, and leaves every file byte-identical.
  - With I(state=absent), moves the checkpoint into I(backup_dir) - the explicit form of kubelet's own advice
    "drain this node and delete the memory manager checkpoint file"; every Guaranteed pod's NUMA pinning is lost.
  - The write is atomic (temporary file beside it, fsync, rename, fsync of the directory), mode 0600 with the
    owner kept, preceded by a backup outside the kubelet directory, and followed by a re-read and re-verification
    with the readers of every kubelet era; the original bytes are put back if that verification fails.
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
      - C(repaired) rewrites a checkpoint whose drift is within the bound; C(absent) sidelines it.
    type: str
    choices: [repaired, absent]
    default: repaired
  backup:
    description:
      - Keep a copy of the original file in I(backup_dir) before rewriting it. With I(state=absent) the file
        is always moved there.
    type: bool
    default: true
  backup_dir:
    description:
      - Where backups go; outside the kubelet root directory so that nothing there is mistaken for state.
      - Defaults to C(<root>/var/lib/nodeops-numa-drift/backups).
    type: path
  force:
    description:
      - Touch the file even though a kubelet process is running. Kubelet rewrites the whole file on every state
        change, so only use this when the process found is not the kubelet owning this file.
    type: bool
    default: false
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
  description: The copy of the original file (I(state=repaired) with I(backup=true), or the sidelined file).
  returned: changed and not check mode
  type: str
  sample: /var/lib/nodeops-numa-drift/backups/memory_manager_state.20261202T101500Z.before-repair
written_layout:
  description: The layout written (C(legacy) or C(v3)).
  returned: changed with state=repaired
  type: str
after:
  description: The verdict and summary of a fresh probe after the write (C(in_sync) on success).
  returned: changed with state=repaired and not check mode
  type: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils._drift import (
    NOTHING_TO_DO,
    assess,
    probe,
    read_checkpoint,
    verify_written,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._facts import assessment_facts, numbers_text, summary_line
from ansible_collections.nodeops.numa_drift.plugins.module_utils._files import (
    atomic_write,
    fsync_directory,
    kubelet_processes,
    write_backup,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._module_args import NODE_OPTIONS_SPEC, probe_arguments


def refuse_while_kubelet_runs(module, result):
    if module.params["force"] or os.path.realpath(module.params["root"]) != "/":
        return
    running = kubelet_processes("/proc")
    if not running:
        return
    message = "kubelet is running (%s): stop it before touching %s, or set force=true" % (", ".join(running), result.path)
    if module.check_mode:
        module.warn(message)
    else:
        module.fail_json(msg=message, verdict=result.assessment.verdict, path=result.path)


def ensure_unchanged_since_probe(module, result):
    if read_checkpoint(result.path) != result.raw:
        module.fail_json(msg="%s changed while it was being assessed: is kubelet running?" % result.path, path=result.path)


def backup_or_fail(module, backup_dir, result, reason):
    try:
        return write_backup(backup_dir, os.path.basename(result.path), result.raw, reason)
    except OSError as error:
        module.fail_json(msg="could not back up %s into %s, the checkpoint was not touched: %s" % (result.path, backup_dir, error),
                         verdict=result.assessment.verdict, path=result.path)


def write_or_fail(module, path, content, outcome):
    try:
        atomic_write(path, content)
    except OSError as error:
        module.fail_json(msg="could not write %s: %s" % (path, error), **outcome)


def repair(module, result, facts, backup_dir):
    assessment = result.assessment
    plan = assessment.plan
    diff = {
        "before_header": result.path + " (recorded)",
        "after_header": result.path + " (recomputed)",
        "before": numbers_text(facts["nodes"], "recorded"),
        "after": numbers_text(facts["nodes"], "current"),
    }
    outcome = dict(changed=True, diff=diff, numa_drift=facts, verdict=assessment.verdict, path=result.path, written_layout=plan.layout)
    if module.check_mode:
        module.exit_json(**outcome)
    ensure_unchanged_since_probe(module, result)
    if module.params["backup"]:
        outcome["backup_file"] = backup_or_fail(module, backup_dir, result, "before-repair")
    write_or_fail(module, result.path, plan.content, outcome)
    written = read_checkpoint(result.path)
    problems = verify_written(written, plan)
    after = assess(written, result.node, result.settings, module.params["drift_bound"])
    if after.verdict != "in_sync":
        problems.append("a fresh probe of the written file says %s" % after.verdict)
    if problems:
        write_or_fail(module, result.path, result.raw, outcome)
        module.fail_json(msg="the written checkpoint failed verification, the original was put back: " + "; ".join(problems), **outcome)
    outcome["after"] = {"verdict": after.verdict, "summary": summary_line(after)}
    module.exit_json(**outcome)


def sideline(module, result, facts, backup_dir):
    outcome = dict(changed=True, numa_drift=facts, verdict=result.assessment.verdict, path=result.path)
    outcome["diff"] = {"before": numbers_text(facts["nodes"], "recorded") or "present\n", "after": "(absent)\n"}
    if module.check_mode:
        module.exit_json(**outcome)
    ensure_unchanged_since_probe(module, result)
    outcome["backup_file"] = backup_or_fail(module, backup_dir, result, "sidelined")
    try:
        os.unlink(result.path)
        fsync_directory(os.path.dirname(result.path))
    except OSError as error:
        module.fail_json(msg="could not remove %s: %s" % (result.path, error), **outcome)
    module.exit_json(**outcome)


def main():
    argument_spec = dict(NODE_OPTIONS_SPEC)
    argument_spec.update(
        state=dict(type="str", default="repaired", choices=["repaired", "absent"]),
        backup=dict(type="bool", default=True),
        backup_dir=dict(type="path"),
        force=dict(type="bool", default=False),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    try:
        result = probe(**probe_arguments(module.params))
    except QuantityError as error:
        module.fail_json(msg="drift_bound: %s" % error)
    except OSError as error:
        module.fail_json(msg="cannot read the node under %s: %s" % (module.params["root"], error))
    facts = assessment_facts(result)
    backup_dir = module.params["backup_dir"] or os.path.join(module.params["root"], "var/lib/nodeops-numa-drift/backups")
    verdict = result.assessment.verdict
    if result.raw is None or (module.params["state"] == "repaired" and verdict in NOTHING_TO_DO):
        module.exit_json(changed=False, numa_drift=facts, verdict=verdict, path=result.path)
    if module.params["state"] == "repaired" and not result.assessment.repairable:
        module.fail_json(
            msg="refusing to repair %s: verdict %s: %s. What to do: %s"
            % (result.path, verdict, "; ".join(result.assessment.causes_for(verdict)), result.assessment.advice),
            numa_drift=facts,
            verdict=verdict,
            path=result.path,
        )
    refuse_while_kubelet_runs(module, result)
    if module.params["state"] == "absent":
        sideline(module, result, facts, backup_dir)
    repair(module, result, facts, backup_dir)


if __name__ == "__main__":
    main()
