# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_mm_checkpoint driven in-process over fake node trees: repair, refusals, sidelining, file safety."""

from __future__ import annotations

import errno
import os
import shutil
import stat

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import files as _files
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import repair as _repair
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import procedure as _procedure
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import states as _states
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import ERAS
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint, numa_drift_facts
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    checkpoint_file,
    tree_snapshot,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import (
    KASLR_KB,
    NON_REPAIRABLE,
    UNREADABLE_CHECKPOINTS,
    boot_with_hugepages,
    kaslr_node,
    kubelet_file_for,
    mixed_pods,
    parsed,
    read_bytes,
)

BACKUPS = "var/lib/nodeops-numa-drift/backups"


def backups_of(root, backup_dir=None):
    directory = backup_dir or os.path.join(root, BACKUPS)
    if not os.path.isdir(directory):
        return {}
    return {name: read_bytes(os.path.join(directory, name)) for name in sorted(os.listdir(directory))}


def probe_verdict(run, root):
    return run(numa_drift_facts, {"root": root})["numa_drift"]["verdict"]


def kaslr_after_boot():
    return boot_with_hugepages().moved(node0=-KASLR_KB, node1=KASLR_KB)


# --- check mode and diff mode ---------------------------------------------------------------


def test_check_mode_reports_the_change_and_touches_nothing(run, tmp_path):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root}, check_mode=True)
    assert tree_snapshot(root) == before
    assert not os.path.exists(os.path.join(root, BACKUPS))
    assert result["changed"] is True
    assert result["verdict"] == "drift_within_bound"
    assert result["written_layout"] == "legacy"
    assert "backup_file" not in result and "after" not in result
    diff = result["diff"]
    assert "node0.memory.total = %d (16 GiB)" % (16 * 1024**3) in diff["before"].splitlines()
    assert "node0.memory.total = %d (16 GiB)" % ((16 * 1024**2 - KASLR_KB) * 1024) in diff["after"].splitlines()
    assert "node1.memory.total = %d (16 GiB)" % ((16 * 1024**2 + KASLR_KB) * 1024) in diff["after"].splitlines()
    assert "node1.hugepages-1Gi.total = %d (4 GiB)" % (4 * 1024**3) in diff["after"].splitlines()
    changed = set(diff["before"].splitlines()) ^ set(diff["after"].splitlines())
    assert {line.split(" = ")[0] for line in changed} == {
        "node0.memory.total", "node0.memory.allocatable", "node1.memory.total", "node1.memory.allocatable",
    }


def test_diff_mode_real_run_returns_the_per_node_diff(run, tmp_path):
    root = kaslr_node(tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root}, diff_mode=True)
    assert result["changed"] is True
    assert result["diff"]["before_header"].endswith("memory_manager_state (recorded)")
    assert result["diff"]["after_header"].endswith("memory_manager_state (recomputed)")
    recomputed = parsed(read_bytes(checkpoint_file(root))).content.machine_state
    for node_id in (0, 1):
        memory = recomputed[node_id].memory_map["memory"]
        assert "node%d.memory.total = %d " % (node_id, memory.total) in result["diff"]["after"]
        assert "node%d.memory.allocatable = %d " % (node_id, memory.allocatable) in result["diff"]["after"]


# --- the repair -----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["legacy", "v3"])
def test_repair_rewrites_in_place_keeping_layout_and_assignments(run, tmp_path, layout):
    root = kaslr_node(tmp_path, layout=layout)
    path = checkpoint_file(root)
    original = read_bytes(path)
    os.chmod(path, 0o644)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    assert result["verdict"] == "drift_within_bound"
    assert result["path"] == path
    assert result["written_layout"] == layout
    assert result["after"]["verdict"] == "in_sync"
    assert result["after"]["summary"].startswith("in_sync;")
    written = read_bytes(path)
    assert written != original
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Exactly the file kubelet writes for this boot, in the same layout, accepted by every era.
    assert written == kubelet_file_for(kaslr_after_boot(), mixed_pods(), layout)
    report, before = parsed(written), parsed(original)
    assert report.layout == before.layout == layout
    assert report.accepted_by == ERAS
    assert report.content.entries == before.content.entries
    assert report.content.policy_name == "Static"
    # The backup: original bytes, in the backup directory, outside the kubelet directory.
    assert os.path.dirname(result["backup_file"]) == os.path.join(root, BACKUPS)
    assert read_bytes(result["backup_file"]) == original
    assert list(backups_of(root).values()) == [original]
    assert stat.S_IMODE(os.stat(result["backup_file"]).st_mode) == 0o600
    assert not [name for name in os.listdir(os.path.dirname(path)) if name.startswith(".")], "temp file left behind"
    assert probe_verdict(run, root) == "in_sync"


def test_second_run_is_idempotent(run, tmp_path):
    root = kaslr_node(tmp_path, layout="v3")
    assert run(kubelet_mm_checkpoint, {"root": root})["changed"] is True
    repaired = tree_snapshot(root)
    mtime = os.stat(checkpoint_file(root)).st_mtime_ns
    again = run(kubelet_mm_checkpoint, {"root": root})
    assert again["changed"] is False
    assert again["verdict"] == "in_sync"
    assert "backup_file" not in again and "diff" not in again
    assert tree_snapshot(root) == repaired
    assert os.stat(checkpoint_file(root)).st_mtime_ns == mtime
    assert run(kubelet_mm_checkpoint, {"root": root}, check_mode=True)["changed"] is False


def test_repair_without_backup(run, tmp_path):
    root = kaslr_node(tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root, "backup": False})
    assert result["changed"] is True
    assert "backup_file" not in result
    assert not os.path.exists(os.path.join(root, BACKUPS))
    assert probe_verdict(run, root) == "in_sync"


def test_repair_into_an_explicit_backup_dir(run, tmp_path):
    root = kaslr_node(tmp_path)
    original = read_bytes(checkpoint_file(root))
    backup_dir = str(tmp_path / "elsewhere" / "backups")
    result = run(kubelet_mm_checkpoint, {"root": root, "backup_dir": backup_dir})
    assert os.path.dirname(result["backup_file"]) == backup_dir
    assert backups_of(root, backup_dir) == {os.path.basename(result["backup_file"]): original}
    assert not os.path.exists(os.path.join(root, BACKUPS))


def test_two_repairs_keep_two_backups(run, tmp_path):
    root = kaslr_node(tmp_path)
    first_original = read_bytes(checkpoint_file(root))
    run(kubelet_mm_checkpoint, {"root": root})
    # The next boot moves the kernel image back: a second repair, a second backup.
    write_kubelet_node(os.path.join(str(tmp_path), "node"), boot_with_hugepages(), checkpoint_bytes=read_bytes(checkpoint_file(root)))
    second_original = read_bytes(checkpoint_file(root))
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    assert sorted(backups_of(root).values()) == sorted([first_original, second_original])
    assert read_bytes(checkpoint_file(root)) == kubelet_file_for(boot_with_hugepages(), mixed_pods(), "legacy")


@pytest.mark.parametrize("verdict_case", ["in_sync", "no_checkpoint"])
def test_nothing_to_do(run, tmp_path, verdict_case):
    boot = boot_with_hugepages()
    options = {"checkpoint_bytes": b""} if verdict_case == "no_checkpoint" else {}
    root = write_kubelet_node(str(tmp_path / "node"), boot, pods=mixed_pods(), **options)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is False
    assert result["verdict"] == verdict_case
    assert result["numa_drift"]["verdict"] == verdict_case
    assert tree_snapshot(root) == before


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("check_mode", [False, True], ids=["run", "check"])
@pytest.mark.parametrize("case", sorted(NON_REPAIRABLE))
def test_every_refusal_fails_and_leaves_every_file_byte_identical(run, tmp_path, case, check_mode):
    build, verdict = NON_REPAIRABLE[case]
    root = build(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root}, check_mode=check_mode)
    assert result["failed"] is True
    assert result.get("changed", False) is False
    assert result["verdict"] == verdict
    assert result["numa_drift"]["verdict"] == verdict
    assert result["msg"].startswith("refusing to repair %s: verdict %s: " % (checkpoint_file(root), verdict))
    assert "What to do: " + result["numa_drift"]["advice"] in result["msg"]
    first_cause = [c["message"] for c in result["numa_drift"]["causes"] if c["verdict"] == verdict][0]
    assert first_cause in result["msg"]
    assert tree_snapshot(root) == before


def test_refusal_is_the_same_with_force(run, tmp_path):
    build, verdict = NON_REPAIRABLE["drift_exceeds_bound"]
    root = build(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "force": True})
    assert result["failed"] is True and result["verdict"] == verdict
    assert tree_snapshot(root) == before


# --- state: absent --------------------------------------------------------------------------


def test_absent_sidelines_the_file_into_the_backup_dir(run, tmp_path):
    build, _verdict = NON_REPAIRABLE["corrupt_garbage"]
    root = build(tmp_path)
    original = read_bytes(checkpoint_file(root))
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "absent"}, diff_mode=True)
    assert result["changed"] is True
    assert result["verdict"] == "corrupt"
    assert not os.path.exists(checkpoint_file(root))
    assert os.path.dirname(result["backup_file"]) == os.path.join(root, BACKUPS)
    assert result["backup_file"].endswith(".sidelined")
    assert read_bytes(result["backup_file"]) == original
    assert result["diff"]["after"] == "(absent)\n"
    assert probe_verdict(run, root) == "no_checkpoint"
    again = run(kubelet_mm_checkpoint, {"root": root, "state": "absent"})
    assert again["changed"] is False
    assert again["verdict"] == "no_checkpoint"


def test_absent_of_a_valid_checkpoint_shows_what_is_lost(run, tmp_path):
    root = kaslr_node(tmp_path, layout="v3")
    original = read_bytes(checkpoint_file(root))
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "absent", "backup": False})
    assert result["changed"] is True
    assert "node0.memory.total = %d " % (16 * 1024**3) in result["diff"]["before"]
    assert backups_of(root) == {os.path.basename(result["backup_file"]): original}  # always kept, whatever backup says


def test_absent_in_check_mode_touches_nothing(run, tmp_path):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "absent"}, check_mode=True)
    assert result["changed"] is True
    assert "backup_file" not in result
    assert tree_snapshot(root) == before


# --- file safety ----------------------------------------------------------------------------


def test_failed_verification_puts_the_original_back(run, tmp_path, monkeypatch):
    root = kaslr_node(tmp_path)
    path = checkpoint_file(root)
    original = read_bytes(path)
    writes = []

    def damaging_write(target, content, *args, **kwargs):
        writes.append(content)
        if len(writes) == 1:
            content = content[:-3] + b"}}}"  # what a torn or damaged write would leave
        _files.atomic_write(target, content, *args, **kwargs)

    monkeypatch.setattr(_repair, "atomic_write", damaging_write)
    monkeypatch.setattr(_procedure, "atomic_write", damaging_write)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True
    assert result["msg"].startswith("the written checkpoint failed verification, the original was put back: ")
    assert "kubelet legacy would reject it" in result["msg"]
    assert read_bytes(path) == original
    assert writes[1] == original
    assert read_bytes(result["backup_file"]) == original
    assert "after" not in result
    assert probe_verdict(run, root) == "drift_within_bound"


def test_a_file_changed_after_the_probe_is_not_overwritten(run, tmp_path, monkeypatch):
    root = kaslr_node(tmp_path)
    path = checkpoint_file(root)
    concurrent = kubelet_file_for(boot_with_hugepages(), {}, "legacy")  # kubelet rewrote it meanwhile
    real_probe = kubelet_mm_checkpoint.probe

    def probe_then_kubelet_writes(files, **kwargs):
        result = real_probe(files, **kwargs)
        with open(path, "wb") as handle:
            handle.write(concurrent)
        return result

    monkeypatch.setattr(kubelet_mm_checkpoint, "probe", probe_then_kubelet_writes)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True
    assert "changed while it was being assessed" in result["msg"]
    assert read_bytes(path) == concurrent
    assert backups_of(root) == {}


@pytest.mark.parametrize("state", ["repaired", "absent"])
def test_unwritable_backup_dir_fails_before_touching_the_checkpoint(run, tmp_path, state):
    root = kaslr_node(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": state, "backup_dir": str(blocker / "backups")})
    assert result["failed"] is True
    assert result["msg"].startswith("could not back up %s into %s" % (checkpoint_file(root), blocker / "backups"))
    assert "the checkpoint was not touched" in result["msg"]
    assert result["verdict"] == "drift_within_bound"
    assert tree_snapshot(root) == before


def test_a_failed_write_leaves_the_original_and_removes_its_backup(run, tmp_path, monkeypatch):
    root = kaslr_node(tmp_path)
    path = checkpoint_file(root)
    original = read_bytes(path)

    def disk_full(target, content, *args, **kwargs):
        raise _files.WriteError(target, "writing a temporary file", OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), replaced=False)

    monkeypatch.setattr(_repair, "atomic_write", disk_full)
    monkeypatch.setattr(_procedure, "atomic_write", disk_full)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True
    assert result["msg"].startswith("could not write %s: " % path)
    assert os.strerror(errno.ENOSPC) in result["msg"]
    assert "%s was not changed; its backup " % path in result["msg"] and "was removed" in result["msg"]
    assert result["touched"] is False
    assert "backup_file" not in result
    assert read_bytes(path) == original
    assert backups_of(root) == {}
    assert "changed" not in result or result["changed"] is False


@pytest.mark.parametrize("state", ["repaired", "absent"])
@pytest.mark.parametrize("kind", sorted(UNREADABLE_CHECKPOINTS))
def test_checkpoint_path_that_is_not_a_file(run, tmp_path, kind, state):
    root = kaslr_node(tmp_path)
    path = UNREADABLE_CHECKPOINTS[kind](root)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": state})
    assert result["failed"] is True
    assert path in result["msg"]
    assert tree_snapshot(root) == before
    assert os.path.lexists(path)

# --- a running kubelet ----------------------------------------------------------------------


@pytest.fixture
def host_root_node(tmp_path, monkeypatch):
    """A drifted node probed as if it were the host (root "/"): the probe is redirected to the fake tree."""
    tree = kaslr_node(tmp_path)
    real_probe = kubelet_mm_checkpoint.probe
    monkeypatch.setattr(kubelet_mm_checkpoint, "probe", lambda files, **kwargs: real_probe(HostFiles(tree), **kwargs))
    return tree


def fake_kubelet(monkeypatch, processes):
    calls = []

    def kubelet_processes(proc_dir="/proc"):
        calls.append(proc_dir)
        return list(processes)

    monkeypatch.setattr(_states, "kubelet_processes", kubelet_processes)
    return calls


@pytest.mark.parametrize("host_root", ["/", "//", "/./"])
def test_refuses_while_kubelet_runs(run, tmp_path, monkeypatch, host_root_node, host_root):
    calls = fake_kubelet(monkeypatch, ["4242:kubelet"])
    backup_dir = str(tmp_path / "backups")
    before = tree_snapshot(host_root_node)
    result = run(kubelet_mm_checkpoint, {"root": host_root, "backup_dir": backup_dir})
    assert calls == ["/proc"]
    assert result["failed"] is True
    assert result["msg"].startswith("kubelet is running (4242:kubelet): stop it before touching ")
    assert "force=true" in result["msg"]
    assert result["verdict"] == "drift_within_bound"
    assert tree_snapshot(host_root_node) == before
    assert not os.path.exists(backup_dir)


def test_kubelet_running_in_check_mode_warns(run, tmp_path, monkeypatch, host_root_node):
    fake_kubelet(monkeypatch, ["4242:kubelet"])
    before = tree_snapshot(host_root_node)
    result = run(kubelet_mm_checkpoint, {"root": "/", "backup_dir": str(tmp_path / "backups")}, check_mode=True)
    assert result["changed"] is True
    assert any("kubelet is running (4242:kubelet)" in str(warning) for warning in result["warnings"])
    assert tree_snapshot(host_root_node) == before


def test_force_repairs_while_kubelet_runs(run, tmp_path, monkeypatch, host_root_node):
    calls = fake_kubelet(monkeypatch, ["4242:kubelet"])
    backup_dir = str(tmp_path / "backups")
    original = read_bytes(checkpoint_file(host_root_node))
    result = run(kubelet_mm_checkpoint, {"root": "/", "backup_dir": backup_dir, "force": True})
    assert calls == []
    assert result["changed"] is True
    assert result["after"]["verdict"] == "in_sync"
    assert read_bytes(result["backup_file"]) == original
    assert os.path.dirname(result["backup_file"]) == backup_dir


def test_no_kubelet_on_the_host_repairs(run, tmp_path, monkeypatch, host_root_node):
    calls = fake_kubelet(monkeypatch, [])
    result = run(kubelet_mm_checkpoint, {"root": "/", "backup_dir": str(tmp_path / "backups")})
    assert calls == ["/proc"]
    assert result["changed"] is True


def test_process_table_is_only_read_for_the_host_root(run, tmp_path, monkeypatch):
    calls = fake_kubelet(monkeypatch, ["4242:kubelet"])
    root = kaslr_node(tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert calls == []
    assert result["changed"] is True


def write_proc(proc, pid, argv):
    directory = proc / str(pid)
    directory.mkdir()
    if argv is not None:
        (directory / "cmdline").write_bytes(b"".join(arg + b"\0" for arg in argv))


def test_kubelet_processes_reads_a_proc_table(tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    write_proc(proc, 1, [b"/sbin/init", b"splash"])
    write_proc(proc, 1234, [b"/usr/bin/kubelet", b"--config=/var/lib/kubelet/config.yaml"])
    write_proc(proc, 77, [b"/usr/local/bin/k3s", b"agent"])
    write_proc(proc, 99, [])  # kernel thread: empty cmdline
    write_proc(proc, 500, None)  # vanished or unreadable
    write_proc(proc, 600, [b"/opt/bin/kubelet-watchdog"])
    write_proc(proc, 700, [b"/usr/bin/containerd"])
    write_proc(proc, 800, [b"kubelet"])
    (proc / "self").mkdir()
    (proc / "self" / "cmdline").write_bytes(b"/usr/bin/kubelet\0")
    (proc / "meminfo").write_text("MemTotal: 1 kB\n")
    assert _files.kubelet_processes(str(proc)) == ["77:k3s", "800:kubelet", "1234:kubelet"]


def test_kubelet_processes_without_a_proc_table(tmp_path):
    assert _files.kubelet_processes(str(tmp_path / "no-proc")) == []
    empty = tmp_path / "proc"
    empty.mkdir()
    write_proc(empty, 1, [b"/sbin/init"])
    assert _files.kubelet_processes(str(empty)) == []


# --- hostile inputs -------------------------------------------------------------------------


def hostile_meminfo(tmp_path):
    root = kaslr_node(tmp_path)
    with open(os.path.join(root, "sys/devices/system/node/node1/meminfo"), "w") as handle:
        handle.write("Node 1 MemTotal: sixteen GiB\n")
    return root


def hostile_iomem(tmp_path):
    iomem = "00100000-1ffffffffffffffff : System RAM\n  10000000001000000-10000000002ffffff : Kernel code\n"
    return kaslr_node(tmp_path, iomem=iomem)


def missing_node_dir(tmp_path):
    root = kaslr_node(tmp_path)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node/node0"))
    return root


def unreadable_config(tmp_path):
    return kaslr_node(tmp_path, config="{{{ not: yaml: [\n")


@pytest.mark.parametrize(
    "build, verdict",
    [
        (hostile_iomem, "bound_unknown"),
        (missing_node_dir, "kubelet_config_rejected"),  # reservedMemory names the vanished node 0
        (unreadable_config, None),
    ],
    ids=["iomem-17-hex-digits", "missing-node-dir", "unreadable-kubelet-config"],
)
def test_hostile_node_is_refused_cleanly(run, tmp_path, build, verdict):
    root = build(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True
    assert result["numa_drift"]["repairable"] is False
    if verdict:
        assert result["verdict"] == verdict
    assert "refusing to repair" in result["msg"]
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("state", ["repaired", "absent", "restored"])
def test_unreadable_node_memory_is_an_error_naming_the_file(run, tmp_path, state):
    root = hostile_meminfo(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": state})
    assert result["failed"] is True
    assert result["msg"] == (
        "cannot read the node under %s: the node's NUMA memory cannot be read: %s/sys/devices/system/node/node1/meminfo: "
        "no 'MemTotal: <number> kB' line" % (root, root)
    )
    assert "verdict" not in result
    assert tree_snapshot(root) == before


@pytest.mark.parametrize("state", ["repaired", "absent"])
def test_invalid_drift_bound_fails_cleanly(run, tmp_path, state):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "drift_bound": "12 parsecs", "state": state})
    assert result["failed"] is True
    assert result["msg"] == "drift_bound: '12 parsecs' is not a Kubernetes quantity (examples: 1Gi, 128Mi, 64Ki, 500M, 4096)"
    assert tree_snapshot(root) == before


def test_invalid_state_is_rejected_by_the_argument_spec(run, tmp_path):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "deleted"})
    assert result["failed"] is True
    assert "state" in result["msg"] and "repaired" in result["msg"]
    assert tree_snapshot(root) == before


def test_explicit_bound_makes_a_large_move_repairable(run, tmp_path):
    build, _verdict = NON_REPAIRABLE["drift_exceeds_bound"]
    root = build(tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root, "drift_bound": "256Mi"})
    assert result["changed"] is True
    assert result["after"]["verdict"] == "in_sync"
    assert run(kubelet_mm_checkpoint, {"root": root})["changed"] is False
