# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU topology record (:mod:`_cpu.topology_record`) written at a good state of the CPU manager.

A good state is one whose pinning this collection vouches for: kubelet's CPU manager starts with the file as it is
(class ``in_sync``, seen by the boot guard before kubelet starts) or there is none (nothing pinned), or a repair just
re-derived ``defaultCpuSet`` keeping every entry. The record is written atomically (``atomic_write``) under the node lock the caller holds, beside the
repair history. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import os
import time
from typing import Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import STALE_CLASSES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.topology_record import record_bytes
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write, read_regular_file
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import TOPOLOGY_RECORD_FILE

__all__ = ["BOOT_ID", "read_boot_id", "topology_record_path", "record_topology"]

BOOT_ID = "proc/sys/kernel/random/boot_id"


def read_boot_id(root: str) -> Optional[str]:
    """This boot's id, or None when it cannot be read (which counts as a new boot)."""
    try:
        text = read_regular_file(under_root(root, BOOT_ID, follow=False), 256).decode("ascii", "replace").strip()
    except OSError:
        return None
    return text or None


def topology_record_path(root: str) -> str:
    return under_root(root, TOPOLOGY_RECORD_FILE, follow=False)


def _good(result: ProbeResult, repaired: bool) -> bool:
    """A state whose pinning this collection vouches for: kubelet's CPU manager starts with the file as it is, or there is
    none (nothing pinned), or a repair just re-derived only ``defaultCpuSet``."""
    cpu, read = result.cpu, result.cpu_read
    if cpu is None or read is None or read.topology is None or not read.topology.known:
        return False
    return cpu.cls in ("in_sync", "no_checkpoint") or (repaired and cpu.cls in STALE_CLASSES)


def record_topology(result: ProbeResult, repaired: bool = False) -> Optional[str]:
    """Record where every online CPU sits when the CPU manager part of ``result`` is a good state (:func:`_good`);
    returns the path written, or None when it is not. The caller holds the node lock."""
    if not _good(result, repaired) or result.cpu_read is None or result.cpu_read.topology is None:
        return None
    root = result.node.root
    path = topology_record_path(root)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    atomic_write(path, record_bytes(result.cpu_read.topology, read_boot_id(root), time.time()), mode=0o644)
    return path
