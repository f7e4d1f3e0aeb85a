# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argument spec shared by the modules (mirrors doc fragment ``nodeops.numa_drift.node_options``)."""

from __future__ import annotations

from typing import Any, Dict


class OptionError(ValueError):
    """An option of the node modules that is not of the type (or shape) it takes: the task fails with this message,
    which names the option and what it takes."""


NODE_OPTIONS_SPEC: Dict[str, Dict[str, Any]] = {
    "root": {"type": "path", "default": "/"},
    "kubelet_root_dir": {"type": "path"},
    "kubelet_config": {"type": "path"},
    "kubelet_config_dir": {"type": "path"},
    "kubelet_flags": {"type": "raw"},
    "drift_bound": {"type": "str", "default": "auto"},
    "policy": {"type": "str"},
    "reserved_memory": {"type": "raw"},
    "kubelet_release": {"type": "str"},
    "untested_release": {"type": "str", "default": "refuse", "choices": ["refuse", "nearest"]},
}
# numa_drift_facts: the node options and how long the controller waits for the node reader (its action plugin).
FACTS_OPTIONS_SPEC: Dict[str, Dict[str, Any]] = dict(NODE_OPTIONS_SPEC, read_timeout={"type": "int", "default": 120})


def probe_arguments(params: Dict[str, Any]) -> Dict[str, Any]:
    """The keyword arguments of ``_probe.probe`` (after the node's files, found under ``root``) from module parameters."""
    return {name: params[name] for name in NODE_OPTIONS_SPEC if name != "root"}
