# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kind of a value in the words of YAML and JSON, for messages (stdlib only, Python >= 3.9).

A message names what was given as a person wrote it (``a string``, ``a mapping``), never a Python class: on the
controller an option's value is one of Ansible's tagged subclasses (``_AnsibleTaggedStr``), which no user typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["kind_of"]


def kind_of(value: Any) -> str:
    """``a string``, ``an integer``, ``a number``, ``a boolean``, ``a list``, ``a mapping``, ``null``, or ``a value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a value"
