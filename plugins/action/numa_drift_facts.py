# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.numa_drift_facts: the node reads, the controller assesses.

One run of ``__node_read`` per host (no engine on the node: it reads what ``_snapshot.READ_PLAN``
names and follows the paths those files name); the engine assesses that snapshot here
(plugin_utils/_snapshot.py). A path the snapshot lacked (one built from a variable, say) is read in one
more run and remembered in the host's facts (``numa_drift_read_paths``), so the next run reads it at
once. A snapshot that cannot be reproduced exactly (an unreadable file, a device) or that the engine
cannot read (no NUMA sysfs) runs the probe module itself on the node, whose answer or error is exact.
A repairable node's advice names the host.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE, remediate_advice
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import NODE_OPTIONS_SPEC, probe_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot

MODULE = "nodeops.numa_drift.numa_drift_facts"
READER = "nodeops.numa_drift.__node_read"
MAX_ROUNDS = 3
LEARNED_FACT = "numa_drift_read_paths"


class ActionModule(ActionBase):
    """Read the node once, assess here; the probe module on the node when the snapshot cannot be exact."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(NODE_OPTIONS_SPEC)

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        validated = ArgumentSpecValidator(NODE_OPTIONS_SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg="; ".join(validated.error_messages))
        arguments = probe_arguments(validated.validated_parameters)
        root = arguments.pop("root") or "/"
        known: List[str] = list(task_vars.get(LEARNED_FACT) or [])
        learned = list(known)
        plan = _snapshot.READ_PLAN + _snapshot.rules_for(arguments, learned)
        entries: Dict[str, list] = {}
        facts = None
        try:
            for _round in range(MAX_ROUNDS):
                read = self._execute_module(module_name=READER, module_args={"root": root, "plan": plan, "follow": _snapshot.FOLLOW}, task_vars=task_vars)
                if read.get("failed"):
                    return dict(result, **read)
                entries.update(read.get("entries") or {})
                facts, misses = _snapshot.assess_snapshot(entries, root, arguments)
                if facts is not None:
                    break
                learned += [path for path in misses if path not in learned]
                plan = _snapshot.rules_for({}, misses)  # read as the next run reads what it learned
        except (_snapshot.UnsupportedSnapshot, OSError):
            facts = None  # the probe module on the node says it exactly (an unreadable file, a FIFO, no sysfs)
        except QuantityError as error:
            return dict(result, failed=True, msg="drift_bound: %s" % error)
        if facts is None:
            result.update(self._execute_module(module_name=MODULE, module_args=self._task.args, task_vars=task_vars))
        else:
            result.update(changed=False, numa_drift=facts)
        if learned != known:
            result["ansible_facts"] = {LEARNED_FACT: learned}
        self._advise_for(result, task_vars.get("inventory_hostname"))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    @staticmethod
    def _advise_for(result: Dict[str, Any], host: Any) -> None:
        """A repairable node's advice names the remediate playbook limited to this host (the node only knows "NODE")."""
        facts = result.get("numa_drift")
        if host and isinstance(facts, dict) and facts.get("verdict") == REPAIRABLE:
            facts["advice"] = remediate_advice(str(host))
