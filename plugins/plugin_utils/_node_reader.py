# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How an action plugin reads a node through the collection's node reader (``_node.plan_reader``): the reader
program on the standard input of the interpreter a module would run under, where Ansible pipelines modules and that
interpreter is known; else the ``__node_read`` module. Used by numa_drift_facts (the probe) and __remediate_plan (the
repair history), so that every read of a node goes through the engine's own node files.
"""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Optional

from ansible import constants as C
from ansible.utils.display import Display

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot

display = Display()

READER = "nodeops.numa_drift.__node_read"
DISCOVERED_FACT = "discovered_interpreter_python"


class NodeReader:
    """A mixin for an ``ActionBase`` subclass: :meth:`_read_node`."""

    def _node_python(self, task_vars: Dict[str, Any]) -> Optional[str]:
        """The Python a module would run under on this host (the delegated one with ``delegate_to``), when it is known
        without running one: the ``interpreter_python`` setting (``ansible_python_interpreter``), else the interpreter
        discovered before (as ``ActionBase._configure_module`` decides)."""
        host_vars = task_vars
        if self._task.delegate_to:
            host_vars = (task_vars.get("ansible_delegated_vars") or {}).get(self._task.delegate_to, task_vars)
        configured = C.config.get_config_value("INTERPRETER_PYTHON", variables=host_vars)
        configured = str(self._templar.template(configured)).strip() if configured else ""
        if configured and configured not in ("auto", "auto_legacy", "auto_silent", "auto_legacy_silent"):
            return configured
        discovered = (host_vars.get("ansible_facts") or {}).get(DISCOVERED_FACT)
        return str(discovered) if discovered else None

    def _pipelined(self) -> bool:
        """Whether Ansible would pipeline a module to this host (the connection and become method can, the
        setting is on, and remote files are not to be kept)."""
        return not C.DEFAULT_KEEP_REMOTE_FILES and self._connection.is_pipelining_enabled()

    def _read_node(self, root: str, rules: List[Dict[str, Any]], follows: Dict[str, Any], versions: Dict[str, Any],
                   task_vars: Dict[str, Any]) -> Dict[str, Any]:
        """``{"entries": ...}`` (or a failed result) for ``rules``: the reader program on the standard input of the
        interpreter a module would run under, where Ansible pipelines modules and that interpreter is known (the same
        channel, become and environment); else the ``__node_read`` module (its files transferred as any module's)."""
        arguments = _snapshot.reader_arguments(root, rules, follows, versions)
        python = self._node_python(task_vars) if self._pipelined() else None
        if python is None:
            read = self._execute_module(module_name=READER, module_args=arguments, task_vars=task_vars)
            read.pop("ansible_facts", None)  # the discovered interpreter only (below), nothing else the module says
            entries, failure = _snapshot.module_answer(read)
            read = failure or {"entries": entries}
        else:
            # -S: no site import (the reader is stdlib only; a node's .pth files and sitecustomize cost every probe).
            command = "%s %s -S" % (self._compute_environment_string(), shlex.quote(python))
            program = _snapshot.reader_program(arguments)
            display.vvv("%s: the node reader, %d bytes on the standard input of %s" % (self._task.action, len(program), command.strip()),
                        host=self._play_context.remote_addr)
            ran = self._low_level_execute_command(command.strip(), sudoable=True, in_data=program)
            entries, failure = _snapshot.reader_answer(ran.get("rc"), ran.get("stdout", ""), ran.get("stderr", ""))
            read = failure or {"entries": entries}
        if self._discovered_interpreter_key:
            read["ansible_facts"] = {self._discovered_interpreter_key: self._discovered_interpreter}
        return read
