# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__remediate_plan: what the remediate role does on one node."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import AnsweredFiles, NotRead
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import repair_diff
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history as _history
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _remediate
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._node_reader import NodeReader

ARGUMENT_SPEC = {
    "facts": {"type": "dict", "required": True},
    "options": {"type": "dict", "required": True},
    # record=false: the remediate playbook's first pass decides only which nodes need work (a repairable node does,
    # whatever its history says) and records nothing: the node's own procedure plans again, history included.
    "record": {"type": "bool", "default": True},
}


class ActionModule(NodeReader, ActionBase):
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
                history = self._history(facts.get("history"), options["history_file"], task_vars or {})
            except ValueError as error:
                return dict(result, failed=True, phase="loop_guard", msg=(
                    "could not read the repair history %s (delete it if it is corrupt), nothing was changed: %s"
                    % (options["history_file"], error)))
        decided = _remediate.plan(facts, options, history, time.time())
        outcome = decided.pop("outcome")
        # A dry run says "changed" where the repair would change the node (as a module in check mode), and --diff shows
        # each NUMA node's numbers before and after.
        result.update(changed=decided["branch"] == "dry_run", plan=decided, outcome=outcome)
        if decided["branch"] == "dry_run" and facts.get("nodes") is not None and (facts.get("checkpoint") or {}).get("path"):
            result["diff"] = repair_diff(facts)
        if not args["record"]:
            return result
        return set_host_facts(self, result, {"remediate_plan": decided, "remediate_outcome": outcome})

    def _history(self, probed: Any, path: str, task_vars: Dict[str, Any]) -> List[Dict[str, Any]]:
        """The entries of the node's history file ([] when it does not exist) the loop guard counts: the repairs the
        probe read with the node (the file at its default place, in the probe's own read), else the file read now
        through the node reader (the probe's channel: one round trip, no module) and parsed here as the engine parses
        it on the node."""
        if isinstance(probed, dict) and probed.get("path") == path:
            if probed.get("error"):
                raise ValueError(probed["error"])
            return [{"time": when} for when in probed.get("repairs") or []]
        rule = {"read": path, "raw": True, "literal": True, "follow": []}
        read = self._read_node("/", [rule], {}, {}, task_vars)
        self._remove_tmp_path(self._connection._shell.tmpdir)
        if read.get("failed"):
            raise ValueError(read.get("msg") or "the node reader failed")
        try:
            return _history.history_in(AnsweredFiles("/", read["entries"]), path)
        except NotRead as missing:
            raise ValueError("the node reader's answer lacks %s" % missing) from None
