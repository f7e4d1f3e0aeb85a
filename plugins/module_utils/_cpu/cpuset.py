# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU sets as kubelet writes and reads them (``k8s.io/utils/cpuset``): ``"0-2,5"`` <-> ``{0, 1, 2, 5}``.

Pure, stdlib only, Python >= 3.9. A set read from a node is bounded: no CPU id above :data:`MAX_CPU_ID`, no
more than :data:`MAX_CPUS` CPUs in one set (a larger one is refused by name, never built).
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, List

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import INT64_MAX, bounded_int, shown
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import go_quote

__all__ = ["MAX_CPUS", "MAX_CPU_ID", "CpuSetError", "parse_cpuset", "format_cpuset"]

MAX_CPU_ID = 65535  # Linux's NR_CPUS is at most 8192 on every architecture kubelet runs on
MAX_CPUS = 8192


class CpuSetError(ValueError):
    """Text that is not a CPU list (or names more CPUs than any machine has)."""


def parse_cpuset(text: str, limit: int = MAX_CPUS) -> FrozenSet[int]:
    """``cpuset.Parse`` (k8s.io/utils/cpuset), with its errors: ``""`` is the empty set; each comma-separated part is one
    id or ``a-b`` split at its first ``-`` (``strings.SplitN``), each side ``strconv.Atoi``, ``a <= b``; never more than
    ``limit`` CPUs built."""
    cpus: List[int] = []
    if text == "":
        return frozenset()
    for part in text.split(","):
        bounds = part.split("-", 1)
        first = _atoi(bounds[0])
        last = _atoi(bounds[1]) if len(bounds) == 2 else first
        if first > last:
            raise CpuSetError("invalid range %s (%d > %d)" % (go_quote(shown(part)), first, last))
        if last > MAX_CPU_ID:
            raise CpuSetError("CPU id %d is above %d, more than any machine has" % (last, MAX_CPU_ID))
        if len(cpus) + last - first + 1 > limit:
            raise CpuSetError("more than %d CPUs" % limit)
        cpus.extend(range(first, last + 1))
    return frozenset(cpus)


def _atoi(text: str) -> int:
    """``strconv.Atoi``: an optional sign, then decimal digits, within int64; Go's error texts."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= char <= "9" for char in digits):
        raise CpuSetError("strconv.Atoi: parsing %s: invalid syntax" % go_quote(shown(text)))
    value = bounded_int(digits)
    if value is None or value > INT64_MAX + (text[:1] == "-"):
        raise CpuSetError("strconv.Atoi: parsing %s: value out of range" % go_quote(shown(text)))
    return -value if text[:1] == "-" else value


def format_cpuset(cpus: Iterable[int]) -> str:
    """``CPUSet.String()``: sorted, runs of consecutive ids as ``a-b``."""
    runs: List[List[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(first) if first == last else "%d-%d" % (first, last) for first, last in runs)
