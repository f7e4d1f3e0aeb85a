# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's ``main()`` in-process and read its JSON result; the fake nodes the module tests share.

``run_module`` goes through ``ansible.module_utils.testing.patch_module_args`` (ansible-core 2.19+)
and the module's real ``exit_json``/``fail_json``: the result is the JSON the module prints, as the
controller would receive it. A module that raises instead of exiting makes the test fail with its
traceback, which is exactly what the "never a traceback" tests rely on.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Mapping, Optional

from unittest import mock

import pytest

from ansible.module_utils import _internal as module_utils_internal
from ansible.module_utils.testing import patch_module_args

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import CheckpointReport, inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CHECKPOINT_FILE_NAME
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import iomem_text
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    Boot,
    guaranteed_pods,
    kubelet_config,
    recorded_checkpoint,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)

# The KASLR move of design.md: the kernel image (plus KiB of boot-time reservations) changed node.
KASLR_KB = 45260
# Auto bound of the default fake iomem: kernel image span 32 MiB + 64 MiB.
DEFAULT_AUTO_BOUND = 96 * 1024 * 1024


def run_module(capsys: Any, module: Any, args: Mapping[str, Any], check_mode: bool = False, diff_mode: bool = False) -> Dict[str, Any]:
    """``module.main()`` with ``args``; returns the printed result. Exit status 1 iff ``failed``."""
    module_args = dict(args)
    module_args["_ansible_check_mode"] = check_mode
    module_args["_ansible_diff"] = diff_mode
    capsys.readouterr()
    # Importing controller code (the inventory plugin's tests do) flags the whole process as the
    # controller, and module warnings would then go to the controller's display instead of the
    # result: run the module as it runs on a managed node.
    with mock.patch.object(module_utils_internal, "is_controller", False), patch_module_args(module_args):
        with pytest.raises(SystemExit) as stop:
            module.main()
    output = capsys.readouterr().out
    result = json.loads(output)
    expected_status = 1 if result.get("failed") else 0
    assert stop.value.code == expected_status, "exit status %r for result %s" % (stop.value.code, output)
    return result


def boot_with_hugepages() -> Boot:
    """Two 16 GiB nodes with four 1 GiB pages each (small trees: 128 memory blocks per node)."""
    return two_node_boot(16 * GIB // 1024, 16 * GIB // 1024, hugepages_1g=4)


def mixed_pods() -> Dict[str, Dict[str, Any]]:
    """Three memory pods on node 0, one pod with memory and 1 GiB pages on node 1."""
    pods: Dict[str, Dict[str, Any]] = dict(guaranteed_pods(3, affinity=(0,)))
    pods["pod-node1-0000-0000-0000-000000000000"] = {
        "app": [([1], "memory", 2 * GIB), ([1], "hugepages-1Gi", 2 * GIB)],
        "sidecar": [([1], "memory", 256 * 1024 * 1024)],
    }
    return pods


def kaslr_node(tmp_path: Any, layout: str = "legacy", name: str = "node", pods: Optional[Mapping[str, Any]] = None, **options: Any) -> str:
    """A node whose kernel image moved from node 1 to node 0 (-45260 kB / +45260 kB) since the checkpoint."""
    recorded = boot_with_hugepages()
    current = recorded.moved(node0=-KASLR_KB, node1=KASLR_KB)
    return write_kubelet_node(
        os.path.join(str(tmp_path), name), recorded, current, pods=mixed_pods() if pods is None else pods, layout=layout, **options
    )


def kubelet_file_for(boot: Boot, pods: Mapping[str, Any], layout: str) -> bytes:
    """The file kubelet itself writes for ``boot`` with these pods (default 1 GiB reserved per node)."""
    return recorded_checkpoint(boot, uniform_reserved(sorted(boot.mem_total_kb)), pods, layout)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def parsed(raw: bytes) -> CheckpointReport:
    """The checkpoint as every kubelet era reads it."""
    return inspect_checkpoint(raw)


def _rewrite_checksum(raw: bytes, value: int) -> bytes:
    marker = b'"checksum":'
    start = raw.rindex(marker) + len(marker)
    end = start
    while raw[end:end + 1].isdigit():
        end += 1
    return raw[:start] + str(value).encode() + raw[end:]


def _kubelet_file(layout: str = "legacy") -> bytes:
    return kubelet_file_for(boot_with_hugepages(), mixed_pods(), layout)


def _truncated(tmp_path: Any) -> str:
    raw = _kubelet_file()
    return kaslr_node(tmp_path, checkpoint_bytes=raw[: len(raw) // 2])


def _garbage(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, checkpoint_bytes=b"\x00\xff\xfe not json {{{\n")


def _empty_file(tmp_path: Any) -> str:
    root = kaslr_node(tmp_path)
    with open(os.path.join(root, "var/lib/kubelet", CHECKPOINT_FILE_NAME), "wb"):
        pass
    return root


def _wrong_checksum(tmp_path: Any) -> str:
    raw = _kubelet_file()
    report = parsed(raw)
    return kaslr_node(tmp_path, checkpoint_bytes=_rewrite_checksum(raw, (report.inline.checksum + 1) % 2**32))


def _zero_checksum(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, checkpoint_bytes=_rewrite_checksum(_kubelet_file(), 0))


def _policy_none(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, config=kubelet_config(uniform_reserved([0, 1]), policy="None"))


def _node1_removed(tmp_path: Any) -> str:
    recorded = boot_with_hugepages()
    current = Boot({0: recorded.mem_total_kb[0]}, {0: dict(recorded.pools(0))})
    pods = guaranteed_pods(2, affinity=(0,))
    reserved = {0: {"memory": 2 * GIB}}  # on node 0 only: a reservation on node 1 is a configuration kubelet rejects
    return write_kubelet_node(os.path.join(str(tmp_path), "node"), recorded, current, reserved=reserved, pods=pods)


def _policy_typo(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, config=kubelet_config(uniform_reserved([0, 1]), policy="static"))


def _reservation_as_a_fraction(tmp_path: Any) -> str:
    config = kubelet_config(uniform_reserved([0, 1]))
    config["reservedMemory"][0]["limits"]["memory"] = "1.0Gi"  # memory_manager.go convertReserved: not an int64
    return kaslr_node(tmp_path, config=config)


def _reserved_doubled(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, config=kubelet_config(uniform_reserved([0, 1], memory=2 * GIB)))


def _hugepages_lost(tmp_path: Any) -> str:
    recorded = boot_with_hugepages()
    current = recorded.moved(node0=-KASLR_KB, node1=KASLR_KB)
    current.hugepages[1] = dict(current.pools(1))
    current.hugepages[1][1048576] = 2
    return write_kubelet_node(os.path.join(str(tmp_path), "node"), recorded, current, pods=mixed_pods())


def _iomem_zeroed(tmp_path: Any) -> str:
    return kaslr_node(tmp_path, iomem=iomem_text(ram_end=128 * GIB, zeroed=True))


def _moved_200_mib(tmp_path: Any) -> str:
    recorded = boot_with_hugepages()
    current = recorded.moved(node0=-200 * 1024, node1=200 * 1024)
    return write_kubelet_node(os.path.join(str(tmp_path), "node"), recorded, current, pods=mixed_pods())


def node0_allocatable_after_kaslr() -> int:
    """Node 0's recomputed allocatable memory after the KASLR move (spec 5.1: total - reserved - hugepages)."""
    return (boot_with_hugepages().mem_total_kb[0] - KASLR_KB) * 1024 - 1 * GIB - 4 * GIB


def nearly_full_node(tmp_path: Any, short_by: int) -> str:
    """Node 0 filled by one pod that fits after the KASLR move when ``short_by`` is 0, else misses by it."""
    pods = {"pod-full-0000-0000-0000-000000000000": {"app": [([0], "memory", node0_allocatable_after_kaslr() + short_by)]}}
    return kaslr_node(tmp_path, pods=pods)


# name -> (builder(tmp_path) -> root, the verdict of the probe); none of them may be repaired.
NON_REPAIRABLE = {
    "corrupt_truncated": (_truncated, "corrupt"),
    "corrupt_garbage": (_garbage, "corrupt"),
    "corrupt_empty_file": (_empty_file, "corrupt"),
    "corrupt_wrong_checksum": (_wrong_checksum, "corrupt"),
    "unsupported_layout_zero_checksum": (_zero_checksum, "unsupported_layout"),
    "policy_mismatch": (_policy_none, "policy_mismatch"),
    "kubelet_config_rejected_policy_typo": (_policy_typo, "kubelet_config_rejected"),
    "kubelet_config_rejected_fraction": (_reservation_as_a_fraction, "kubelet_config_rejected"),
    "topology_changed_node_removed": (_node1_removed, "topology_changed"),
    "reserved_changed": (_reserved_doubled, "reserved_changed"),
    "hugepages_changed": (_hugepages_lost, "hugepages_changed"),
    "bound_unknown_zeroed_iomem": (_iomem_zeroed, "bound_unknown"),
    "drift_exceeds_bound": (_moved_200_mib, "drift_exceeds_bound"),
    "assignments_do_not_fit_short_by_one_page": (lambda tmp_path: nearly_full_node(tmp_path, 4096), "assignments_do_not_fit"),
}


def checkpoint_is_a_directory(root: str) -> str:
    path = os.path.join(root, "var/lib/kubelet", CHECKPOINT_FILE_NAME)
    os.unlink(path)
    os.mkdir(path)
    return path


def checkpoint_is_a_symlink_loop(root: str) -> str:
    path = os.path.join(root, "var/lib/kubelet", CHECKPOINT_FILE_NAME)
    os.unlink(path)
    os.symlink(path, path)
    return path


# Checkpoint paths that cannot be read as a file: a clean failure naming the path, or a verdict.
UNREADABLE_CHECKPOINTS = {"directory": checkpoint_is_a_directory, "symlink-loop": checkpoint_is_a_symlink_loop}
