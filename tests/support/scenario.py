# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whole kubelet nodes for tests: a checkpoint written at one boot, a node tree from the next.

``write_kubelet_node`` builds what a node looks like after a reboot: the checkpoint kubelet
wrote for the *recorded* boot (its machine state recomputed from that boot's numbers and the
pods' blocks, as kubelet does) and a node tree (sysfs, iomem, kubelet config) for the
*current* boot. The kubelet config always satisfies the Node Allocatable equality
(``systemReserved`` = sum of ``reservedMemory`` - the default 100Mi eviction threshold).
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import v1_name_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CHECKPOINT_FILE_NAME, CheckpointFields, Entries
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import NodeMemory, expected_machine_state
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import hugepage_resource_name
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import (
    OMIT,
    build_node_tree,
    iomem_text,
)

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
EVICTION_HARD_DEFAULT = 100 * MIB
HUGEPAGE_2M_KB = 2048
HUGEPAGE_1G_KB = 1048576

# A pod's blocks: (affinity, resource, size) per container.
Blocks = Sequence[Tuple[Sequence[int], str, int]]


@dataclass
class Boot:
    """One boot's per-NUMA numbers: MemTotal in kB and nr_hugepages per page size (kB)."""

    mem_total_kb: Dict[int, int]
    hugepages: Dict[int, Dict[int, int]] = field(default_factory=dict)

    def pools(self, node_id: int) -> Dict[int, int]:
        return self.hugepages.get(node_id, {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 0})

    def machine(self) -> Dict[int, NodeMemory]:
        return {
            node_id: NodeMemory(
                kb * KIB,
                {hugepage_resource_name(size): size * KIB * count for size, count in self.pools(node_id).items()},
            )
            for node_id, kb in self.mem_total_kb.items()
        }

    def moved(self, **deltas_kb: int) -> "Boot":
        """The same machine with ``node<N>=<delta kB>`` applied to MemTotal."""
        moved = copy.deepcopy(self)
        for name, delta in deltas_kb.items():
            moved.mem_total_kb[int(name.replace("node", ""))] += delta
        return moved


def entries_of(pods: Mapping[str, Mapping[str, Blocks]]) -> Entries:
    return {
        pod: {
            container: [Block(list(affinity), resource, size) for affinity, resource, size in blocks]
            for container, blocks in containers.items()
        }
        for pod, containers in pods.items()
    }


def recorded_checkpoint(
    boot: Boot,
    reserved: Mapping[int, Mapping[str, int]],
    pods: Mapping[str, Mapping[str, Blocks]],
    layout: str = "legacy",
    policy: str = "Static",
) -> bytes:
    """The file kubelet wrote during ``boot`` (spec 5.1 + 5.2 step 4, then MarshalCheckpoint)."""
    entries = entries_of(pods)
    state, _issues = expected_machine_state(boot.machine(), reserved, entries)
    fields = CheckpointFields(policy_name=policy, machine_state=state, entries=entries)
    return marshal_for_layout(fields, layout)


# Checkpoints the supported releases disagree about (docs/modules.md, unsupported_layout): each is read by some
# releases and refused by the others.
DISAGREEING_DAMAGES = ("zero-legacy-checksum", "damaged-data", "v1-name-checksum")


def with_checksum(raw: bytes, value: int) -> bytes:
    """The legacy (inline) ``checksum`` of ``raw`` replaced by ``value``."""
    return re.sub(rb'"checksum":[0-9]+', b'"checksum":%d' % value, raw, count=1)


def disagreeing_checkpoint(boot: "Boot", pods: Mapping[str, Mapping[str, "Blocks"]], damage: str) -> bytes:
    """The checkpoint kubelet wrote for ``boot`` and ``pods`` (1 GiB reserved per node), damaged the ``damage`` way
    (:data:`DISAGREEING_DAMAGES`): a zero legacy checksum, a damaged V3 data part, the V1-name checksum."""
    reserved = uniform_reserved(sorted(boot.mem_total_kb))
    if damage == "damaged-data":
        return recorded_checkpoint(boot, reserved, pods, "v3").replace(b'"dataChecksum":', b'"dataChecksum":1', 1)
    raw = recorded_checkpoint(boot, reserved, pods)
    if damage == "zero-legacy-checksum":
        return with_checksum(raw, 0)
    return with_checksum(raw, v1_name_checksum(inspect_checkpoint(raw).content))


def kubelet_config(reserved: Mapping[int, Mapping[str, int]], policy: str = "Static") -> Dict[str, object]:
    """A KubeletConfiguration whose Node Allocatable matches ``reserved`` (spec 5.5)."""
    totals: Dict[str, int] = {}
    for limits in reserved.values():
        for resource, size in limits.items():
            totals[resource] = totals.get(resource, 0) + size
    system_reserved = {resource: str(size) for resource, size in totals.items()}
    system_reserved["memory"] = str(totals.get("memory", 0) - EVICTION_HARD_DEFAULT)
    return {
        "memoryManagerPolicy": policy,
        "reservedMemory": [
            {"numaNode": node_id, "limits": {res: str(size) for res, size in limits.items()}}
            for node_id, limits in sorted(reserved.items())
        ],
        "systemReserved": system_reserved,
    }


def uniform_reserved(node_ids: Sequence[int], memory: int = 1 * GIB) -> Dict[int, Dict[str, int]]:
    return {node_id: {"memory": memory} for node_id in node_ids}


def write_kubelet_node(
    root: str,
    recorded: Boot,
    current: Optional[Boot] = None,
    reserved: Optional[Mapping[int, Mapping[str, int]]] = None,
    pods: Optional[Mapping[str, Mapping[str, Blocks]]] = None,
    layout: str = "legacy",
    checkpoint_bytes: Optional[bytes] = None,
    kernel_start: Optional[int] = None,
    iomem: object = None,
    config: object = None,
    **tree_options: object,
) -> str:
    """A node after a reboot: checkpoint from ``recorded``, sysfs from ``current`` (default: same)."""
    current = current or recorded
    reserved = uniform_reserved(sorted(recorded.mem_total_kb)) if reserved is None else reserved
    content = checkpoint_bytes if checkpoint_bytes is not None else recorded_checkpoint(recorded, reserved, pods or {}, layout)
    if iomem is None:
        total = sum(current.mem_total_kb.values()) * KIB
        iomem = iomem_text(ram_end=total) if kernel_start is None else iomem_text(kernel_start=kernel_start, ram_end=total)
    nodes = {
        node_id: {"mem_total_kb": kb, "hugepages": current.pools(node_id)} for node_id, kb in current.mem_total_kb.items()
    }
    os.makedirs(root, exist_ok=True)
    return build_node_tree(
        root,
        nodes=nodes,
        iomem=iomem,
        kubelet_config=kubelet_config(reserved) if config is None else config,
        checkpoint=OMIT if content == b"" else content,
        **tree_options,
    )


def two_node_boot(node0_kb: int = 64 * GIB // KIB, node1_kb: int = 64 * GIB // KIB, hugepages_1g: int = 0) -> Boot:
    pools = {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: hugepages_1g}
    return Boot({0: node0_kb, 1: node1_kb}, {0: dict(pools), 1: dict(pools)})


def guaranteed_pods(count: int, affinity: Sequence[int] = (0,), size: int = 1 * GIB, resource: str = "memory") -> Dict[str, Dict[str, Blocks]]:
    return {
        "pod-%04d-0000-0000-0000-000000000000" % index: {"app": [(list(affinity), resource, size)]}
        for index in range(count)
    }


def checkpoint_file(root: str) -> str:
    return os.path.join(root, "var/lib/kubelet", CHECKPOINT_FILE_NAME)


def tree_snapshot(root: str) -> Dict[str, bytes]:
    """Every file under ``root`` with its bytes, to prove a refusal changed nothing."""
    snapshot = {}
    for directory, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                with open(path, "rb") as handle:
                    snapshot[os.path.relpath(path, root)] = handle.read()
    return snapshot
