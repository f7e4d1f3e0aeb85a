# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__remediate_outcome: the remediate role's outcome record, step by step."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _remediate
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts

ARGUMENT_SPEC = {
    "stage": {"type": "str", "required": True, "choices": ["repaired", "failed", "recovered"]},
    "outcome": {"type": "dict", "required": True},
    "options": {"type": "dict", "required": True},
    "cordon": {"type": "dict", "default": {}},
    "repair": {"type": "dict", "default": {}},
    "failed_task": {"type": "str", "default": ""},
    "failed_result": {"type": "dict", "default": {}},
    "kubelet_active": {"type": "bool", "default": False},
    "recovery": {"type": "dict", "default": {}},
    "restored": {"type": "bool", "default": False},
    "notes": {"type": "list", "elements": "str", "default": []},
}


class ActionModule(ActionBase):
    """No module runs: the new ``remediate_outcome`` (and ``remediate_recovery``) facts are computed here."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        outcome, options = dict(args["outcome"]), args["options"]
        facts: Dict[str, Any] = {}
        stage = args["stage"]
        if stage == "repaired":
            repair = args["repair"]
            outcome.update(
                action="repaired", cordoned_by_us=bool(args["cordon"].get("cordoned_by_us")),
                cordoned_before=bool(args["cordon"].get("cordoned_before")),
                backup_file=repair.get("backup_file"), cpu_backup_file=repair.get("cpu_backup_file"),
                verdict_after=(repair.get("after") or {}).get("verdict", repair.get("verdict")))
            outcome["message"] = _remediate.repaired_message(outcome, args["cordon"], options)
            _remediate.with_event(outcome, "NumaDriftRepaired")
        elif stage == "failed":
            state = {"checkpoint_written": bool(args["repair"].get("changed")), "kubelet_active": args["kubelet_active"]}
            state.update(args["cordon"])
            outcome["backup_file"] = args["repair"].get("backup_file", outcome.get("backup_file"))
            outcome["cpu_backup_file"] = args["repair"].get("cpu_backup_file", outcome.get("cpu_backup_file"))
            facts["remediate_recovery"] = _remediate.recovery(args["failed_task"], args["failed_result"], state, options)
        else:  # recovered
            recovery = args["recovery"]
            outcome.update(
                action="rolled_back" if recovery.get("restore") and args["restored"] else "failed",
                cordoned_by_us=bool(args["cordon"].get("cordoned_by_us")),
                cordoned_before=bool(args["cordon"].get("cordoned_before")),
                message=_remediate.failed_message(recovery, args["cordon"], args["restored"], args["notes"], outcome, options))
            if recovery.get("restore"):
                outcome["verdict_after"] = outcome.get("verdict_before")
            if outcome["action"] == "rolled_back":
                _remediate.with_event(outcome, "NumaDriftRolledBack")
        facts["remediate_outcome"] = outcome
        result["changed"] = False
        return set_host_facts(self, result, facts)
