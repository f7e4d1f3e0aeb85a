# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe: read one node and assess it, the one place that orchestrates the node reads.

:func:`probe` reads kubelet's settings (``_kubelet.config``), the node's NUMA facts (``_node.sysfs``) and
the memory manager checkpoint (:func:`read_checkpoint`, through the one reader of ``_common.reading``), all
under ``root``, then hands them to the pure :func:`_policy.drift.assess`. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CHECKPOINT_FILE_NAME, MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import node_join, under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import read_regular_file
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import read_node_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, assess

__all__ = ["ProbeResult", "probe", "checkpoint_path", "read_checkpoint"]


def checkpoint_path(root: str, kubelet_root_dir: str) -> str:
    """Host path of ``<root dir>/memory_manager_state`` (``memoryManagerStateFileName``; the root dir only moves with ``--root-dir``)."""
    return under_root(root, node_join(kubelet_root_dir, CHECKPOINT_FILE_NAME), follow=False)


def read_checkpoint(path: str) -> Optional[bytes]:
    """The file's bytes, or None when nothing is at ``path``; reads at most the size limit + 1.

    Only a regular file is read (``_files.read_regular_file``): a symbolic link (dangling or
    not), a directory, FIFO, socket or device raises ``_files.NotRegularFileError`` naming the
    path, at once (docs/safety.md: a symlinked checkpoint is refused, never followed).
    """
    try:
        return read_regular_file(path, MAX_CHECKPOINT_BYTES + 1, truncate=True)
    except FileNotFoundError:
        return None


class ProbeResult(Record, frozen=True):
    """One node's assessment with what it was computed from (``raw`` = the file's bytes)."""

    assessment: Assessment
    settings: KubeletSettings
    node: NodeFacts
    path: str
    raw: Optional[bytes]


def probe(
    root: str = "/",
    kubelet_root_dir: Optional[str] = None,
    kubelet_config: Optional[str] = None,
    kubelet_config_dir: Optional[str] = None,
    drift_bound: str = "auto",
    policy: Optional[str] = None,
    reserved_memory: Optional[object] = None,
    kubelet_flags: Optional[object] = None,
) -> ProbeResult:
    """Read one node through ``root`` and assess it."""
    settings = load_kubelet_settings(
        root=root,
        kubelet_root_dir=kubelet_root_dir,
        config_path=kubelet_config,
        config_dir=kubelet_config_dir,
        flags=kubelet_flags,
        policy=policy,
        reserved_memory=reserved_memory,
    )
    node = read_node_facts(root)
    path = checkpoint_path(root, settings.root_dir)
    raw = read_checkpoint(path)
    return ProbeResult(assess(raw, node, settings, drift_bound), settings, node, path, raw)
