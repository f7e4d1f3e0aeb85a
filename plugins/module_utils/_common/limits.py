# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bounds of everything read from a node file: one number reader, one nesting limit.

Every integer a reader takes from a node file (checkpoint JSON, kubelet YAML/JSON configuration,
sysfs, ``/proc/iomem``, environment files and flags) is converted by :func:`bounded_int`, which
never hands Python's ``int()`` more digits than a 64-bit value can have: kubelet's Go types hold
``int64``/``uint64`` at most, so a longer literal is out of kubelet's range whatever its digits
(and Python refuses to convert more than 4,300 decimal digits at all). Every recursive walk of
node data (JSON and YAML documents, drop-in directories) stops at :data:`MAX_NESTING` levels.
Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Union

__all__ = ["INT64_MIN", "INT64_MAX", "UINT64_MAX", "MAX_NESTING", "bounded_int", "load_json", "nesting_depth", "shown"]

INT64_MIN, INT64_MAX, UINT64_MAX = -(2 ** 63), 2 ** 63 - 1, 2 ** 64 - 1

# kubelet's own files nest at most 7 levels (checkpoint: top, entries, pod, container, blocks,
# block, numaAffinity); a configuration a few more. Deeper data is refused by name, never walked.
MAX_NESTING = 64

# Most significant digits a value of at most 64 bits has in each base.
_MAX_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def bounded_int(digits: str, base: int = 10) -> Optional[int]:
    """The value of an unsigned ASCII digit string (leading zeros allowed), or ``None``.

    ``None`` when the text is empty, holds anything but ASCII digits of ``base``, or its value
    needs more than 64 bits (``> 2**64 - 1``). The caller applies its own sign and range
    (``int64``, ``int32``, ...). Work is bounded: at most 64 digits are ever converted.
    """
    significant = digits.lstrip("0") or "0"
    if not digits or len(significant) > _MAX_DIGITS[base] or any(char not in _DIGITS[base] for char in significant):
        return None
    value = int(significant, base)
    return value if value <= UINT64_MAX else None


def shown(text: str) -> str:
    """A number as a message quotes it: whole up to 40 characters, else its start and its length."""
    return text if len(text) <= 40 else "%s... (%d characters)" % (text[:20], len(text))


def nesting_depth(tree: Any, limit: int = MAX_NESTING) -> int:
    """How deep lists and dicts nest in ``tree`` (a tuple, such as a ``(key, value)`` pair of a
    JSON object kept as a list of pairs, is not a level), counted up to ``limit + 1``.

    Iterative, so a tree of any depth is measured without recursion; it stops looking deeper
    than ``limit + 1`` levels.
    """
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, tuple):
            stack.extend((child, depth) for child in value)
            continue
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list):
            children = list(value)
        else:
            continue
        deepest = max(deepest, depth)
        if depth > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _json_int(literal: str) -> int:
    value = bounded_int(literal.lstrip("-"))
    if value is None:
        raise ValueError("the number %s does not fit in 64 bits" % shown(literal))
    return -value if literal.startswith("-") else value


def load_json(text: Union[str, bytes]) -> Any:
    """``json.loads`` with the bounds of node files; ``ValueError`` (never another error) when refused.

    An integer beyond 64 bits or nesting deeper than :data:`MAX_NESTING` is refused by name.
    """
    try:
        document = json.loads(text, parse_int=_json_int)
    except RecursionError:
        raise ValueError("nested deeper than %d levels" % MAX_NESTING) from None
    if nesting_depth(document) > MAX_NESTING:
        raise ValueError("nested deeper than %d levels" % MAX_NESTING)
    return document
