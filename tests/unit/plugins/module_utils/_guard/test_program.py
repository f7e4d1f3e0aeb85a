# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot guard program (_guard.main) with --root on fake node trees, and its metrics."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard import program as _guard
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import lock as _lock
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    KIB,
    GIB,
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import run_module

KASLR_KB = 45260
STATE = "var/lib/nodeops-numa-drift"
METRICS = "var/lib/node_exporter/textfile_collector/nodeops_numa_drift.prom"


def node(tmp_path, name, **moves):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / name), before, before.moved(**moves), pods=guaranteed_pods(4, (0,)))
    set_boot(root, "boot-1")
    return root


def set_boot(root, boot_id):
    path = os.path.join(root, _guard.BOOT_ID)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="ascii") as handle:
        handle.write(boot_id + "\n")


def metric_lines(root):
    with open(os.path.join(root, METRICS), encoding="utf-8") as handle:
        return [line for line in handle.read().splitlines() if not line.startswith("#")]


def verdict_metric(root):
    found = [line for line in metric_lines(root) if line.startswith("nodeops_numa_drift_verdict{") and line.endswith(" 1")]
    assert len(found) == 1
    return found[0].split('"')[1]


def guard_record(root):
    with open(os.path.join(root, STATE, "guard.json"), encoding="utf-8") as handle:
        return json.load(handle)


def without_our_state(snapshot):
    return {path: data for path, data in snapshot.items() if not path.startswith((STATE, "var/lib/node_exporter"))}


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def test_repairs_drift_within_bound_to_the_bytes_the_module_writes(tmp_path, capsys):
    root = node(tmp_path, "guarded", node0=-KASLR_KB, node1=KASLR_KB)
    twin = str(tmp_path / "module")
    shutil.copytree(root, twin, symlinks=True)
    before = read(checkpoint_file(root))

    assert _guard.main(["--root", root]) == 0
    log = capsys.readouterr().err
    result = run_module(capsys, kubelet_mm_checkpoint, {"root": twin, "state": "repaired"})

    assert result["changed"] is True
    assert read(checkpoint_file(root)) == read(checkpoint_file(twin)) != before
    assert _probe.probe(HostFiles(root)).assessment.verdict == "in_sync"
    record = guard_record(root)
    assert (record["boot_id"], record["verdict"], record["action"]) == ("boot-1", "drift_within_bound", "repaired")
    backups = os.listdir(os.path.join(root, STATE, "backups"))
    assert len(backups) == 1 and read(os.path.join(root, STATE, "backups", backups[0])) == before
    with open(os.path.join(root, STATE, "history.json"), encoding="utf-8") as handle:
        assert [entry["by"] for entry in json.load(handle)["repairs"]] == ["guard"]
    assert verdict_metric(root) == "drift_within_bound"
    assert 'nodeops_numa_drift_repairs_total{by="guard"} 1' in metric_lines(root)
    assert 'nodeops_numa_drift_memory_drift_bytes{numa_node="0",resource="memory"} %d' % (-KASLR_KB * KIB) in metric_lines(root)
    assert "verdict drift_within_bound" in log and "action repaired" in log and "vs bound" in log


def test_acts_once_per_boot_and_again_at_the_next_boot(tmp_path, capsys):
    root = node(tmp_path, "n", node0=-KASLR_KB, node1=KASLR_KB)
    assert _guard.main(["--root", root]) == 0
    repaired = read(checkpoint_file(root))
    first = guard_record(root)
    # Same boot: kubelet restarted; only the metrics are refreshed, still with this boot's verdict.
    assert _guard.main(["--root", root]) == 0
    assert "already handled" in capsys.readouterr().err
    assert guard_record(root) == first and read(checkpoint_file(root)) == repaired
    assert verdict_metric(root) == "drift_within_bound"
    # Next boot: in sync now, nothing to do.
    set_boot(root, "boot-2")
    assert _guard.main(["--root", root]) == 0
    assert (guard_record(root)["boot_id"], guard_record(root)["action"]) == ("boot-2", "none")
    assert verdict_metric(root) == "in_sync"


def test_missing_boot_id_counts_as_a_new_boot(tmp_path):
    root = node(tmp_path, "n", node0=-KASLR_KB, node1=KASLR_KB)
    os.unlink(os.path.join(root, _guard.BOOT_ID))
    assert _guard.main(["--root", root]) == 0
    assert (guard_record(root)["boot_id"], guard_record(root)["action"]) == (None, "repaired")


@pytest.mark.parametrize("moves, verdict", [
    ({"node0": -GIB // KIB}, "drift_exceeds_bound"),
    ({}, "in_sync"),
])
def test_other_verdicts_touch_nothing(tmp_path, capsys, moves, verdict):
    root = node(tmp_path, "n", **moves)
    before = tree_snapshot(root)
    assert _guard.main(["--root", root]) == 0
    assert without_our_state(tree_snapshot(root)) == without_our_state(before)
    assert not os.path.exists(os.path.join(root, STATE, "backups"))
    assert guard_record(root)["verdict"] == verdict
    assert guard_record(root)["action"] == ("refused" if verdict == "drift_exceeds_bound" else "none")
    assert verdict_metric(root) == verdict
    assert "verdict %s" % verdict in capsys.readouterr().err


def test_dry_run_touches_no_checkpoint(tmp_path):
    root = node(tmp_path, "n", node0=-KASLR_KB, node1=KASLR_KB)
    before = tree_snapshot(root)
    assert _guard.main(["--root", root, "--dry-run"]) == 0
    assert without_our_state(tree_snapshot(root)) == without_our_state(before)
    assert guard_record(root)["action"] == "dry_run"


def test_time_limit_gives_up_touching_nothing(tmp_path, capsys):
    root = node(tmp_path, "n", node0=-KASLR_KB, node1=KASLR_KB)
    before = tree_snapshot(root)
    assert _guard.main(["--root", root, "--time-limit", "0"]) == 0
    assert tree_snapshot(root) == before
    assert "gave up after the time limit" in capsys.readouterr().err


def test_bad_usage_exits_2(tmp_path):
    assert _guard.main(["--drift-bound", "lots"]) == 2
    assert _guard.main(["--no-such-option"]) == 2


def test_metrics_module_writes_the_probes_verdict(tmp_path, capsys):
    from ansible_collections.nodeops.numa_drift.plugins.modules import numa_drift_metrics  # pylint: disable=import-outside-toplevel

    root = node(tmp_path, "n", node0=-KASLR_KB, node1=KASLR_KB)
    before = read(checkpoint_file(root))
    result = run_module(capsys, numa_drift_metrics, {"root": root})
    assert result["verdict"] == "drift_within_bound" and verdict_metric(root) == "drift_within_bound"
    assert read(checkpoint_file(root)) == before


def test_the_boot_record_is_written_under_the_node_lock(tmp_path):
    """A writer holding the node lock removes our temporary files in the state directory as a killed
    run's leftovers; the guard's record must wait for that lock, or its temporary file can vanish
    before the rename (seen as a missing guard.json in the module-against-guard races)."""
    root = str(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        "path = sys.argv[1]\n"
        "os.makedirs(os.path.dirname(path), exist_ok=True)\n"
        "handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(handle, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(30)\n"), _lock.lock_path(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(_lock.LockTimeout):
            _guard._write_state(root, {"boot_id": "b", "action": "none"}, 0.5)  # pylint: disable=protected-access
        assert time.monotonic() - started >= 0.4
        assert not os.path.exists(os.path.join(root, _guard.GUARD_STATE.lstrip("/")))
    finally:
        holder.kill()
        holder.wait()
    _guard._write_state(root, {"boot_id": "b", "action": "none"}, 5)  # pylint: disable=protected-access
    assert guard_record(root)["boot_id"] == "b"


def test_repairs_a_stale_default_cpu_set_beside_the_drift_to_the_bytes_the_module_writes(tmp_path, capsys):
    """The same decision before kubelet starts: with CPUs recorded nowhere in cpu_manager_state beside a memory drift,
    the guard writes both files as the module does, and the node is in sync."""
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    root = node(tmp_path, "guarded", node0=-KASLR_KB, node1=KASLR_KB)
    cpu_state = cputree.add_static_cpu_manager(root, range(16), "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}})
    twin = str(tmp_path / "module")
    shutil.copytree(root, twin, symlinks=True)
    assert _probe.probe(HostFiles(root)).assessment.verdict == "cpu_default_set_stale"

    assert _guard.main(["--root", root]) == 0
    result = run_module(capsys, kubelet_mm_checkpoint, {"root": twin, "state": "repaired"})

    assert result["changed"] is True and result["cpu_written_layout"] == "v2"
    assert read(cpu_state) == read(os.path.join(twin, os.path.relpath(cpu_state, root)))
    assert read(checkpoint_file(root)) == read(checkpoint_file(twin))
    assert cputree.read_cpu_checkpoint(read(cpu_state))[1:] == ("0-1,3-9,11-15", {"pod-a": {"app": "2,10"}})
    again = _probe.probe(HostFiles(root))
    assert (again.assessment.verdict, again.cpu.cls) == ("in_sync", "in_sync")
    record = guard_record(root)
    assert (record["verdict"], record["action"]) == ("cpu_default_set_stale", "repaired")
