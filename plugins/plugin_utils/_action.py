# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the collection's action plugins."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Tuple

from ansible.module_utils.common.parameters import DEFAULT_TYPE_VALIDATORS
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.options import given

# What each type of an argument spec takes, in a user's words ("raw" takes anything).
TYPE_WORDS = {
    "str": "a string",
    "path": "a path (a string)",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "list": "a list",
    "dict": "a mapping",
}


def set_host_facts(action: Any, result: Dict[str, Any], facts: Dict[str, Any]) -> Dict[str, Any]:
    """Set ``facts`` as host variables the way ansible.builtin.set_fact does (not cached on ansible-core 2.20+; on 2.19
    the result's ansible_facts can reach a persistent fact cache: decide from registered results), and show them."""
    register = getattr(action, "register_host_variables", None)
    if register is not None:  # ansible-core 2.20+: explicit layers; no legacy injection of the result's ansible_facts
        from ansible.plugins.action import VariableLayer  # pylint: disable=import-outside-toplevel

        register({}, VariableLayer.CACHEABLE_FACT)
        register(facts, VariableLayer.EPHEMERAL_FACT)
    result["ansible_facts"] = facts
    return result


def call_within(seconds: float, function: Callable[[], Any], name: str) -> Tuple[bool, Any]:
    """``(finished, value)`` of ``function()`` run in a daemon thread for at most ``seconds``.

    The Kubernetes client has no timeout of its own (discovery and list alike): a black-holed API must not stall
    the run. An exception of ``function`` is its value (the caller tells it apart).
    """
    box: List[Any] = [None]

    def run() -> None:
        try:
            box[0] = function()
        except Exception as error:  # pylint: disable=broad-except  # handed back to the caller as the value
            box[0] = error

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive(), box[0]


def type_problems(spec: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> List[str]:
    """One line per value (of an option of ``spec``) that is not of its option's type: the name, what it takes, what it
    got (``read_timeout must be an integer, got a string ('abc')``), where Ansible would say ``is of type str and we were
    unable to convert to int``, or pass a list given to a string option on as its Python text."""
    problems = []
    for name in sorted(values):
        wanted = (spec.get(name) or {}).get("type", "str")
        value = values[name]
        if name not in spec or wanted not in TYPE_WORDS or value is None:
            continue
        try:
            if wanted in ("str", "path") and isinstance(value, (Mapping, list, tuple)):
                raise TypeError(name)
            DEFAULT_TYPE_VALIDATORS[wanted](value)
        except (TypeError, ValueError):
            problems.append("%s must be %s, got %s" % (name, TYPE_WORDS[wanted], given(value)))
    return problems


def type_failure(spec: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The task's failure when an option's value is not of its type (:func:`type_problems`, one message), else None."""
    problems = type_problems(spec, values)
    return {"failed": True, "msg": "; ".join(problems)} if problems else None


class TypedModuleAction(ActionBase):
    """The action of a module that runs on the node: its options' types are checked here first, in the collection's
    words (``type_problems``), then the module runs as ``ansible.builtin.normal`` runs it (check mode, async)."""

    ARGUMENT_SPEC: Mapping[str, Mapping[str, Any]] = {}
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        failure = type_failure(self.ARGUMENT_SPEC, self._task.args)
        if failure:
            return dict(result, **failure)
        # ansible-core 2.19's connections say whether they run async natively; 2.21's do not.
        wrap_async = self._task.async_val and not getattr(self._connection, "has_native_async", False)
        result = merge_hash(result, self._execute_module(task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)  # pylint: disable=protected-access
        return result
