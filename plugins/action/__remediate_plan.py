# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__remediate_plan: what the remediate role does on one node."""

from __future__ import annotations

import base64
import time
from typing import Any, Dict, List, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history as _history
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _remediate
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts

ARGUMENT_SPEC = {
    "facts": {"type": "dict", "required": True},
    "options": {"type": "dict", "required": True},
    # record=false: the remediate playbook's first pass decides only which nodes need work (a repairable node does,
    # whatever its history says) and records nothing: the node's own procedure plans again, history included.
    "record": {"type": "bool", "default": True},
}


class ActionModule(ActionBase):
    """Validates the role's variables, reads the node's repair history when a repair is possible, decides."""

    TRANSFERS_FILES = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        facts, options = args["facts"], dict(args["options"])
        errors = _remediate.validation_errors(options)
        if errors:
            return dict(result, failed=True, msg="nodeops.numa_drift.remediate: " + "; ".join(errors))
        history: List[Dict[str, Any]] = []
        if facts.get("repairable") and args["record"]:
            try:
                history = self._history(options["history_file"], task_vars or {})
            except ValueError as error:
                return dict(result, failed=True, phase="loop_guard", msg=(
                    "could not read the repair history %s (delete it if it is corrupt), nothing was changed: %s"
                    % (options["history_file"], error)))
        decided = _remediate.plan(facts, options, history, time.time())
        outcome = decided.pop("outcome")
        result.update(changed=False, plan=decided, outcome=outcome)
        if not args["record"]:
            return result
        return set_host_facts(self, result, {"remediate_plan": decided, "remediate_outcome": outcome})

    def _history(self, path: str, task_vars: Dict[str, Any]) -> List[Dict[str, Any]]:
        """The entries of the node's history file ([] when it does not exist), read from the node."""
        read = self._execute_module(module_name="ansible.legacy.slurp", module_args={"src": path}, task_vars=task_vars)
        if read.get("failed"):
            if "not found" in str(read.get("msg", "")).lower():
                return []
            raise ValueError(read.get("msg", "slurp failed"))
        return _history.parse_history(base64.b64decode(read["content"]), path)
