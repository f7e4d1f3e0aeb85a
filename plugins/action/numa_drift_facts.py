# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.numa_drift_facts: the node reads, the controller assesses.

One read per host (no engine on the node: ``_node.plan_reader`` reads what ``_snapshot.READ_PLAN`` names
and follows the paths those files name). Where Ansible pipelines modules, the reader goes to the node's Python
on standard input as one small program (no AnsiballZ wrapper, so not even Ansible's module code starts there);
elsewhere the ``__node_read`` module runs it. The engine assesses that snapshot here
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
from ansible.utils.display import Display

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE, remediate_advice
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import NODE_OPTIONS_SPEC, probe_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot

display = Display()

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
        host_facts: Dict[str, Any] = {}
        facts = None
        try:
            for _round in range(MAX_ROUNDS):
                read = self._read_node(root, plan, task_vars)
                host_facts.update(read.get("ansible_facts") or {})  # an interpreter discovered on first contact
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
            host_facts[LEARNED_FACT] = learned
        if host_facts:
            result["ansible_facts"] = dict(result.get("ansible_facts") or {}, **host_facts)
        self._advise_for(result, task_vars.get("inventory_hostname"))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _read_node(self, root: str, plan: List[Dict[str, Any]], task_vars: Dict[str, Any]) -> Dict[str, Any]:
        """``{"entries": ...}`` (or a failed result) for ``plan``: the reader program on the standard input of the
        interpreter a module would run under, where Ansible pipelines modules (the same channel, become and environment);
        else the ``__node_read`` module (its files transferred as any module's)."""
        arguments = _snapshot.reader_arguments(root, plan)
        if not self._is_pipelining_enabled("new"):
            read = self._execute_module(module_name=READER, module_args=arguments, task_vars=task_vars)
            read.pop("ansible_facts", None)  # the discovered interpreter only (below), nothing else the module says
        else:
            # The interpreter as for a module: ansible_python_interpreter, or discovered (once per host, kept as a fact).
            built, _path = self._configure_module(module_name=READER, module_args={}, task_vars=task_vars)
            command = self._connection._shell.build_module_command(self._compute_environment_string(), built.shebang, "").strip()
            program = _snapshot.reader_program(arguments)
            display.vvv("numa_drift_facts: the node reader, %d bytes on the standard input of %s" % (len(program), command),
                        host=self._play_context.remote_addr)
            ran = self._low_level_execute_command(command, sudoable=True, in_data=program)
            entries, failure = _snapshot.reader_entries(ran.get("rc"), ran.get("stdout", ""), ran.get("stderr", ""))
            read = failure or {"entries": entries}
        if self._discovered_interpreter_key:
            read["ansible_facts"] = {self._discovered_interpreter_key: self._discovered_interpreter}
        return read

    @staticmethod
    def _advise_for(result: Dict[str, Any], host: Any) -> None:
        """A repairable node's advice names the remediate playbook limited to this host (the node only knows "NODE")."""
        facts = result.get("numa_drift")
        if host and isinstance(facts, dict) and facts.get("verdict") == REPAIRABLE:
            facts["advice"] = remediate_advice(str(host))
