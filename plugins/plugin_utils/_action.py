# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the collection's action plugins."""

from __future__ import annotations

from typing import Any, Dict


def set_host_facts(action: Any, result: Dict[str, Any], facts: Dict[str, Any]) -> Dict[str, Any]:
    """Set ``facts`` as host variables the way ansible.builtin.set_fact does (not cached), and show them in ``result``."""
    register = getattr(action, "register_host_variables", None)
    if register is not None:  # ansible-core 2.20+: explicit layers; no legacy injection of the result's ansible_facts
        from ansible.plugins.action import VariableLayer  # pylint: disable=import-outside-toplevel

        register({}, VariableLayer.CACHEABLE_FACT)
        register(facts, VariableLayer.EPHEMERAL_FACT)
    result["ansible_facts"] = facts
    return result
