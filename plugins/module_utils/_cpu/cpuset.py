# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU sets as kubelet writes and reads them (``k8s.io/utils/cpuset``): ``"0-2,5"`` <-> ``{0, 1, 2, 5}``.

Pure, stdlib only, Python >= 3.9. A set read from a node is bounded: no CPU id above :data:`MAX_CPU_ID`, no
more than :data:`MAX_CPUS` CPUs in one set (a larger one is refused by name, never built).
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, List

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import bounded_int, shown

__all__ = ["MAX_CPUS", "MAX_CPU_ID", "CpuSetError", "parse_cpuset", "format_cpuset"]

MAX_CPU_ID = 65535  # Linux's NR_CPUS is at most 8192 on every architecture kubelet runs on
MAX_CPUS = 8192


class CpuSetError(ValueError):
    """Text that is not a CPU list (or names more CPUs than any machine has)."""


def parse_cpuset(text: str) -> FrozenSet[int]:
    """``cpuset.Parse``: ``""`` is the empty set; ranges ``a-b`` with ``a <= b``; no spaces (``strconv.Atoi``)."""
    cpus: List[int] = []
    if text == "":
        return frozenset()
    for part in text.split(","):
        bounds = part.split("-")
        if len(bounds) > 2:
            raise CpuSetError("invalid range %s" % shown(part))
        first, last = (_cpu_id(bound) for bound in (bounds[0], bounds[-1]))
        if first > last:
            raise CpuSetError("invalid range %s (%d > %d)" % (shown(part), first, last))
        if len(cpus) + last - first + 1 > MAX_CPUS:
            raise CpuSetError("more than %d CPUs" % MAX_CPUS)
        cpus.extend(range(first, last + 1))
    return frozenset(cpus)


def _cpu_id(text: str) -> int:
    value = bounded_int(text)
    if value is None or value > MAX_CPU_ID:
        raise CpuSetError("%s is not a CPU id" % shown(repr(text)))
    return value


def format_cpuset(cpus: Iterable[int]) -> str:
    """``CPUSet.String()``: sorted, runs of consecutive ids as ``a-b``."""
    runs: List[List[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(first) if first == last else "%d-%d" % (first, last) for first, last in runs)
