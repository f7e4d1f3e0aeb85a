# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault injection against the real modules: no partial checkpoint, no stray file, no false "changed".

- kill -9 at every fsync and every rename of a repair, a sideline and a restore (strace's syscall
  fault injection against the module run as its own process), then the next run: the repair
  history stays true (a write that happened is counted by the loop guard, one that did not is
  not) and the next run leaves exactly one entry for it;
- ENOSPC on a small tmpfs and EROFS on a read-only bind mount (root only: mount(2));
- two repairs of one node at once, as two processes;
- a FIFO, socket, device, directory, dangling symlink or symlink as the checkpoint;
- hostile checkpoints through both modules (hypothesis over the JSON structure and values);
- hostile sysfs and /proc/iomem files.

Each case asserts: the checkpoint holds the original or the complete repaired bytes, never
anything else; no temporary file, lock or misleading backup is left; the run fails cleanly
(a message naming the file) or says truthfully whether it changed the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ansible_collections.nodeops.numa_drift as collection
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import files as _files
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history as _history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import VERDICTS
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint, numa_drift_facts
from ansible_collections.nodeops.numa_drift.tests.support import cputree
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import kaslr_node, parsed, read_bytes, run_module

STATE = "var/lib/nodeops-numa-drift"
COLLECTIONS_PATH = os.path.dirname(os.path.dirname(os.path.dirname(list(collection.__path__)[0])))
# The module as a process, the way Ansible runs it on a node (arguments through patch_module_args).
DRIVER = (
    "import importlib, json, sys\n"
    "from ansible.module_utils.testing import patch_module_args\n"
    "module = importlib.import_module('ansible_collections.nodeops.numa_drift.plugins.modules.' + sys.argv[1])\n"
    "if len(sys.argv) > 3:  # --start-together: imports done, say so and wait for the word\n"
    "    sys.stderr.write('ready\\n'); sys.stderr.flush(); sys.stdin.read(1)\n"
    "with patch_module_args(json.loads(sys.argv[2])):\n"
    "    module.main()\n"
)
STRACE = shutil.which("strace")


@pytest.fixture
def run(capsys):
    def _run(module, args, check_mode=False):
        return run_module(capsys, module, args, check_mode=check_mode)

    return _run


def module_process(module_name, args, strace_inject=None, timeout=120):
    """Run a module in its own process; (exit status, parsed result or None)."""
    command = [sys.executable, "-c", DRIVER, module_name, json.dumps(args)]
    if strace_inject:
        command = [STRACE, "-f", "-qq", "-o", "/dev/null", "-e", "inject=" + strace_inject] + command
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_PATH)
    done = subprocess.run(command, capture_output=True, env=env, timeout=timeout, check=False)
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        return done.returncode, None


def tree_snapshot(root):
    """Every entry under ``root``: a regular file's bytes, else its type (never opens a FIFO or device)."""
    snapshot = {}
    for directory, dirs, files in os.walk(root):
        for name in files + dirs:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                snapshot[os.path.relpath(path, root)] = read_bytes(path)
            elif not stat.S_ISDIR(mode):
                snapshot[os.path.relpath(path, root)] = ("type", stat.S_IFMT(mode), os.readlink(path) if stat.S_ISLNK(mode) else None)
    return snapshot


def our_leftovers(root, *directories):
    """Temporary files of ours, and the node lock, anywhere under ``root`` and ``directories``."""
    found = []
    for top in (root,) + directories:
        for directory, _dirs, files in os.walk(top):
            found += [os.path.join(directory, name) for name in files if _files.is_our_temp_file(name)]
    lock = os.path.join(root, STATE, "lock")
    return found + ([lock] if os.path.lexists(lock) else [])


ACTIONS = {"repaired": "repaired", "absent": "sidelined", "restored": "restored"}


def history(root):
    """The entries of the node's repair history ([] when there is none)."""
    path = os.path.join(root, STATE, "history.json")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return json.load(handle)["repairs"]


def backups(root):
    directory = os.path.join(root, STATE, "backups")
    return {name: read_bytes(os.path.join(directory, name)) for name in sorted(os.listdir(directory))} if os.path.isdir(directory) else {}


@pytest.fixture(scope="module")
def drifted(tmp_path_factory):
    """A drifted node, its original checkpoint and the bytes a repair writes (built once, copied per case)."""
    base = tmp_path_factory.mktemp("drifted")
    root = kaslr_node(base)
    original = read_bytes(checkpoint_file(root))
    repaired_copy = str(base / "repaired")
    shutil.copytree(root, repaired_copy, symlinks=True)
    capsys_free = module_process("kubelet_mm_checkpoint", {"root": repaired_copy})
    assert capsys_free[0] == 0 and capsys_free[1]["changed"] is True
    return root, original, read_bytes(checkpoint_file(repaired_copy))


def copy_of(drifted, tmp_path, name="node"):
    target = str(tmp_path / name)
    shutil.copytree(drifted[0], target, symlinks=True)
    return target


# --- kill -9 at each fsync and rename ----------------------------------------------------------


def syscall_counts(args):
    """How many fsync and rename calls the module makes for ``args`` (strace -c on a dry copy)."""
    command = [STRACE, "-f", "-qq", "-c", "-U", "name,calls", "-e", "trace=fsync,rename,renameat,renameat2",
               sys.executable, "-c", DRIVER, "kubelet_mm_checkpoint", json.dumps(args)]
    done = subprocess.run(command, capture_output=True, env=dict(os.environ, PYTHONPATH=COLLECTIONS_PATH), check=False, timeout=120)
    counts = {}
    for line in done.stderr.decode().splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].isdigit() and fields[0] != "total":
            counts[fields[0]] = int(fields[1])
    return counts


def strace_usable():
    if not STRACE:
        return "strace is not installed (tests/integration/requirements.sh installs it)"
    probe = subprocess.run([STRACE, "-qq", "-o", "/dev/null", "true"], capture_output=True, check=False)
    return None if probe.returncode == 0 else "strace cannot trace here: %s" % probe.stderr.decode().strip()[:200]


@pytest.mark.parametrize("state", ["repaired", "absent", "restored"])
def test_kill_9_at_every_fsync_and_rename(run, drifted, tmp_path, state):
    reason = strace_usable()
    if reason:
        pytest.skip(reason)
    _root, original, repaired = drifted
    template = copy_of(drifted, tmp_path, "template")
    if state == "restored":  # a repaired node with its before-repair backup: the restore puts the original back
        assert run(kubelet_mm_checkpoint, {"root": template})["changed"] is True
    start = read_bytes(checkpoint_file(template))
    final = {"repaired": repaired, "absent": None, "restored": original}[state]
    dry = str(tmp_path / "count")
    shutil.copytree(template, dry, symlinks=True)
    counts = syscall_counts({"root": dry, "state": state})
    points = [(name, n) for name, total in sorted(counts.items()) for n in range(1, total + 1)]
    assert counts.get("fsync", 0) >= 3 and len(points) >= 4, counts
    for name, n in points:
        root = str(tmp_path / ("%s-%d" % (name, n)))
        shutil.copytree(template, root, symlinks=True)
        backups_before = backups(root)
        history_before = history(root)
        status, result = module_process("kubelet_mm_checkpoint", {"root": root, "state": state},
                                        strace_inject="%s:signal=SIGKILL:when=%d" % (name, n))
        assert status in (-9, 137) and result is None, (name, n, status, result)
        path = checkpoint_file(root)
        now = read_bytes(path) if os.path.lexists(path) else None
        assert now in (start, final), "kill at %s #%d left a checkpoint that is neither the original nor the result" % (name, n)
        # The history after the kill: a write that happened has its entry (pending or complete, the
        # loop guard counts both), and no complete entry claims a write that did not happen.
        killed = history(root)[len(history_before):]
        assert history(root)[:len(history_before)] == history_before, (name, n)
        assert len(killed) <= 1 and all(entry["action"] == ACTIONS[state] for entry in killed), (name, n, killed)
        if now == final:
            assert len(killed) == 1, "kill at %s #%d: the checkpoint was written but the history has no entry for it" % (name, n)
            if state == "repaired":
                assert len(_history.recent_repairs(history(root), 24, time.time())) == 1, (name, n, killed)
        else:
            assert all("pending" in entry for entry in killed), "kill at %s #%d: an entry for a write that did not happen" % (name, n)
        for backup_name, content in backups(root).items():  # every backup is complete and holds real bytes of the file
            assert content in (original, repaired), (name, n, backup_name)
            assert backup_name in backups_before or content == start
        # The next run finishes the job (or finds it done) and cleans up after the killed one.
        again = run(kubelet_mm_checkpoint, {"root": root, "state": state})
        assert not again.get("failed"), (name, n, again.get("msg"))
        assert again["changed"] is (now != final), (name, n, again)
        assert (read_bytes(path) if os.path.lexists(path) else None) == final
        assert our_leftovers(root) == [], (name, n)
        # One entry for the one write, settled; the loop guard counts it.
        assert history(root)[:len(history_before)] == history_before, (name, n)
        assert [entry["action"] for entry in history(root)[len(history_before):]] == [ACTIONS[state]], (name, n, history(root))
        assert not any("pending" in entry for entry in history(root)), (name, n, history(root))
        if state == "repaired":  # the drift comes back: with loop_max_repairs=1 that repair is refused
            with open(path, "wb") as handle:
                handle.write(start)
            guarded = run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1})
            assert guarded.get("failed") and "loop guard" in guarded["msg"], (name, n, guarded)
            assert read_bytes(path) == start


def test_kill_9_at_every_fsync_and_rename_of_a_repair_of_both_files(run, drifted, tmp_path):
    """cpu_manager_state is written first, then memory_manager_state: a kill anywhere leaves each file whole (its
    original or its repaired bytes), every write that happened counted in the history, and the next run finishes."""
    reason = strace_usable()
    if reason:
        pytest.skip(reason)
    template = copy_of(drifted, tmp_path, "template")
    # CPUs 6,7,14,15 came online, recorded nowhere: cpu_default_set_stale, both files repaired in one call.
    cpu_path = cputree.add_static_cpu_manager(template, range(16), "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}})
    done = str(tmp_path / "done")
    shutil.copytree(template, done, symlinks=True)
    assert run(kubelet_mm_checkpoint, {"root": done})["cpu_written_layout"] == "v2"
    relative = os.path.relpath(cpu_path, template)
    start = (read_bytes(checkpoint_file(template)), read_bytes(cpu_path))
    final = (read_bytes(checkpoint_file(done)), read_bytes(os.path.join(done, relative)))
    dry = str(tmp_path / "count")
    shutil.copytree(template, dry, symlinks=True)
    counts = syscall_counts({"root": dry})
    points = [(name, n) for name, total in sorted(counts.items()) for n in range(1, total + 1)]
    assert sum(counts.get(call, 0) for call in ("rename", "renameat", "renameat2")) >= 4, counts  # two files, the history twice
    for name, n in points:
        root = str(tmp_path / ("%s-%d" % (name, n)))
        shutil.copytree(template, root, symlinks=True)
        status, result = module_process("kubelet_mm_checkpoint", {"root": root}, strace_inject="%s:signal=SIGKILL:when=%d" % (name, n))
        assert status in (-9, 137) and result is None, (name, n, status, result)
        memory, cpu = read_bytes(checkpoint_file(root)), read_bytes(os.path.join(root, relative))
        assert memory in (start[0], final[0]) and cpu in (start[1], final[1]), "kill at %s #%d left a partial file" % (name, n)
        assert not (memory == final[0] and cpu == start[1]), "kill at %s #%d: memory_manager_state written before cpu_manager_state" % (name, n)
        killed = history(root)
        if cpu == final[1]:
            assert len(killed) == 1, "kill at %s #%d: cpu_manager_state was written but the history has no entry for it" % (name, n)
        else:
            assert all("pending" in entry for entry in killed), (name, n, killed)
        # The next run finishes the job (or finds it done) and cleans up after the killed one.
        again = run(kubelet_mm_checkpoint, {"root": root})
        assert not again.get("failed"), (name, n, again.get("msg"))
        assert (read_bytes(checkpoint_file(root)), read_bytes(os.path.join(root, relative))) == final, (name, n)
        assert our_leftovers(root) == [], (name, n)
        settled = history(root)
        assert not any("pending" in entry for entry in settled), (name, n, settled)
        # One entry per write that happened: a kill between the two files leaves two repairs (the loop guard errs on counting).
        half_done = cpu == final[1] and memory == start[0]
        assert [entry["action"] for entry in settled] == ["repaired"] * (2 if half_done else 1), (name, n, settled)


# --- full and read-only file systems (root only) ----------------------------------------------


@contextlib.contextmanager
def mounted(*command_lists):
    """Run mount commands; skip with the reason when mount(2) is not permitted; unmount at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs or a read-only bind mount needs root")
    targets = []
    try:
        for command in command_lists:
            done = subprocess.run(command, capture_output=True, check=False)
            if done.returncode != 0:
                pytest.skip("%s is not permitted here: %s" % (" ".join(command), done.stderr.decode().strip()))
            targets.append(command[-1])
        yield
    finally:
        for target in reversed(targets):
            subprocess.run(["umount", target], capture_output=True, check=False)


def fill(directory):
    """Fill the file system of ``directory`` so that no checkpoint-sized file fits."""
    with open(os.path.join(directory, "filler"), "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 512)
        except OSError:
            pass


def test_enospc_on_the_kubelet_directory(run, drifted, tmp_path):
    root = copy_of(drifted, tmp_path)
    kubelet = os.path.dirname(checkpoint_file(root))
    saved = {name: read_bytes(os.path.join(kubelet, name)) for name in os.listdir(kubelet)}
    with mounted(["mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=64", "tmpfs", kubelet]):
        for name, content in saved.items():
            with open(os.path.join(kubelet, name), "wb") as handle:
                handle.write(content)
        fill(kubelet)
        result = run(kubelet_mm_checkpoint, {"root": root})
        assert result["failed"] is True
        assert "No space left on device" in result["msg"]
        assert "%s was not changed; its backup" % checkpoint_file(root) in result["msg"] and "was removed" in result["msg"]
        assert result["touched"] is False
        assert read_bytes(checkpoint_file(root)) == drifted[1]
        assert backups(root) == {}
        assert our_leftovers(root) == []


def test_enospc_on_the_backup_directory(run, drifted, tmp_path):
    root = copy_of(drifted, tmp_path)
    backup_dir = str(tmp_path / "backups")
    os.mkdir(backup_dir)
    before = tree_snapshot(root)
    with mounted(["mount", "-t", "tmpfs", "-o", "size=16k,nr_inodes=64", "tmpfs", backup_dir]):
        fill(backup_dir)
        for state in ("repaired", "absent"):
            result = run(kubelet_mm_checkpoint, {"root": root, "state": state, "backup_dir": backup_dir})
            assert result["failed"] is True
            assert result["msg"].startswith("could not back up %s into %s, the checkpoint was not touched" % (checkpoint_file(root), backup_dir))
            assert tree_snapshot(root) == before
            assert sorted(os.listdir(backup_dir)) == ["filler"]


@pytest.mark.parametrize("state", ["repaired", "absent", "restored"])
def test_erofs_on_the_kubelet_directory(run, drifted, tmp_path, state):
    root = copy_of(drifted, tmp_path)
    if state == "restored":
        assert run(kubelet_mm_checkpoint, {"root": root})["changed"] is True
    kubelet = os.path.dirname(checkpoint_file(root))
    start, backups_before = read_bytes(checkpoint_file(root)), backups(root)
    with mounted(["mount", "--bind", kubelet, kubelet], ["mount", "-o", "remount,bind,ro", kubelet]):
        result = run(kubelet_mm_checkpoint, {"root": root, "state": state})
        assert result["failed"] is True
        assert "Read-only file system" in result["msg"]
        assert "was not changed; its backup" in result["msg"] and "was removed" in result["msg"]
        assert result["touched"] is False
        assert read_bytes(checkpoint_file(root)) == start
        assert backups(root) == backups_before  # no "...sidelined" copy of a file that was not moved
        assert our_leftovers(root) == []


# --- concurrent runs --------------------------------------------------------------------------


@pytest.mark.parametrize("attempt", range(3))
def test_two_concurrent_repairs_exactly_one_changes(drifted, tmp_path, attempt):
    root = copy_of(drifted, tmp_path)
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_PATH)
    args = json.dumps({"root": root})
    processes = [subprocess.Popen([sys.executable, "-c", DRIVER, "kubelet_mm_checkpoint", args], stdout=subprocess.PIPE, env=env)
                 for _attempt_process in range(2)]
    results = [json.loads(process.communicate(timeout=120)[0]) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], results
    assert sorted(result["changed"] for result in results) == [False, True]
    assert read_bytes(checkpoint_file(root)) == drifted[2]
    assert list(backups(root).values()) == [drifted[1]]
    with open(os.path.join(root, STATE, "history.json")) as handle:
        assert [entry["action"] for entry in json.load(handle)["repairs"]] == ["repaired"]
    assert our_leftovers(root) == []


GUARD = (
    "import sys\n"
    "from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard.program import main\n"
    "sys.stderr.write('ready\\n'); sys.stderr.flush(); sys.stdin.read(1)  # imports done: say so, wait for the word\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
RACES = 50


def _start(kind, root):
    """One writer as its own process: the repair module, or the boot guard as kubelet's ExecStartPre runs it. Each
    imports what it runs, then waits for a word on its standard input (:func:`_go`), so a race starts when both are
    ready, whichever of them imports more (the module imports Ansible's module code, the guard does not)."""
    env = dict(os.environ, PYTHONPATH=COLLECTIONS_PATH)
    if kind == "module":
        command = [sys.executable, "-c", DRIVER, "kubelet_mm_checkpoint", json.dumps({"root": root, "repaired_by": "module"}),
                   "--start-together"]
    else:
        # A time limit far above the guard's 20 s default: on a loaded test machine the default can pass
        # before the probe ends, and then the guard (rightly) gives up, touching nothing, with no decision.
        command = [sys.executable, "-c", GUARD, "--root", root, "--time-limit", "300"]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _go(processes):
    """Let the writers go at once, once each has imported what it runs (it says ``ready``, then reads one byte)."""
    for process in processes:
        assert process.stderr.readline() == b"ready\n", process.args[:3]
    for process in processes:
        process.stdin.write(b"g")
        process.stdin.flush()


def _outcome(kind, process, root):
    """(whether it reports the repair, what it says); the guard's decision is the one it records in guard.json."""
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (kind, process.returncode, out, err)
    if kind == "module":
        result = json.loads(out)
        assert not result.get("failed"), result
        return result["changed"], result["message"] if "message" in result else result.get("msg", "")
    state = os.path.join(root, STATE, "guard.json")
    assert os.path.exists(state), ("the guard recorded no decision", err.decode(errors="replace"))
    with open(state) as handle:
        decision = json.load(handle)
    assert decision["action"] in ("repaired", "none"), (decision, err)
    return decision["action"] == "repaired", "%s: %s" % (decision["verdict"], decision["message"])


def _race(drifted, tmp_path, kinds, index):
    """Start both writers together; while they run, every read of the checkpoint is a complete file."""
    _root, original, repaired = drifted
    root = copy_of(drifted, tmp_path, "race-%d" % index)
    path = checkpoint_file(root)
    processes = [_start(kind, root) for kind in kinds]
    _go(processes)  # the race is the probe and the lock, not Python's start-up
    while any(process.poll() is None for process in processes):
        assert read_bytes(path) in (original, repaired), "race %d: a reader saw a partial checkpoint" % index
    outcomes = [_outcome(kind, process, root) for kind, process in zip(kinds, processes)]
    assert sorted(changed for changed, _message in outcomes) == [False, True], (index, outcomes)
    idle = [message for changed, message in outcomes if not changed][0]
    assert "in_sync" in idle or "already in sync (another run repaired it meanwhile)" in idle, (index, idle)
    assert read_bytes(path) == repaired and parsed(repaired).verified
    writer = kinds[[changed for changed, _message in outcomes].index(True)]
    assert [(entry["action"], entry["by"], "pending" in entry) for entry in history(root)] == [("repaired", writer, False)], index
    assert list(backups(root).values()) == [original]
    assert our_leftovers(root) == []
    shutil.rmtree(root)
    return writer


@pytest.mark.parametrize("kinds", [("module", "module"), ("module", "guard")], ids=["module-module", "module-guard"])
def test_two_writers_at_once_50_times(drifted, tmp_path, kinds):
    """The repair module against itself and against the boot guard, started together: the node lock
    makes exactly one of them write; the other says why it did nothing; one history entry per write."""
    started = time.monotonic()
    writers = [_race(drifted, tmp_path, kinds, index) for index in range(RACES)]
    counts = {writer: writers.count(writer) for writer in set(writers)}
    if kinds[1] == "guard":  # each wins some races: they really ran at the same time
        assert set(counts) == {"module", "guard"}, counts
    sys.stderr.write("%s: %d races in %.1f s; writers %s\n" % ("-".join(kinds), RACES, time.monotonic() - started, counts))


# --- checkpoints that are not regular files ---------------------------------------------------


def make_fifo(path):
    os.mkfifo(path)


def make_socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.close()


def make_device(path):
    if os.geteuid() != 0:
        pytest.skip("mknod of a device needs root")
    os.mknod(path, 0o600 | 0o020000, os.makedev(1, 3))  # a character device like /dev/null


def make_dangling_symlink(path):
    os.symlink(path + ".gone", path)


def make_symlink_to_the_real_file(path):
    # Relative, so it points at the real file on the node as here (an absolute target is the node's path, under root).
    os.rename(path, path + ".real")
    os.symlink(os.path.basename(path) + ".real", path)


NOT_REGULAR = {
    "fifo": (make_fifo, "is a FIFO (named pipe), not a regular file"),
    "socket": (make_socket, "is a socket, not a regular file"),
    "char-device": (make_device, "is a character device, not a regular file"),
    "directory": (os.mkdir, "is a directory, not a regular file"),
    "dangling-symlink": (make_dangling_symlink, "is a dangling symbolic link (to "),
    "symlink": (make_symlink_to_the_real_file, "is a symbolic link (to "),
}


@pytest.mark.parametrize("state", ["repaired", "absent", "restored", "facts"])
@pytest.mark.parametrize("kind", sorted(NOT_REGULAR))
def test_a_checkpoint_that_is_not_a_regular_file_fails_at_once(run, drifted, tmp_path, kind, state):
    root = copy_of(drifted, tmp_path)
    path = checkpoint_file(root)
    make, text = NOT_REGULAR[kind]
    if kind != "symlink":
        os.unlink(path)
    make(path)
    before = tree_snapshot(root)
    module, args = (numa_drift_facts, {"root": root}) if state == "facts" else (kubelet_mm_checkpoint, {"root": root, "state": state})
    started = time.monotonic()
    result = run(module, args)
    assert time.monotonic() - started < 1.0, "a %s checkpoint must fail within a second" % kind
    assert result["failed"] is True
    assert result["msg"].startswith("cannot read the node under %s: %s %s" % (root, path, text))
    assert tree_snapshot(root) == before
    assert os.path.lexists(path)
    assert our_leftovers(root) == []


def test_a_fifo_checkpoint_does_not_hang_the_module_process(drifted, tmp_path):
    root = copy_of(drifted, tmp_path)
    path = checkpoint_file(root)
    os.unlink(path)
    os.mkfifo(path)
    for module_name in ("numa_drift_facts", "kubelet_mm_checkpoint"):
        status, result = module_process(module_name, {"root": root}, timeout=60)
        assert status == 1 and "is a FIFO (named pipe), not a regular file" in result["msg"]


# --- hostile checkpoints through both modules -------------------------------------------------

HOSTILE_BYTES = {
    "empty": b"",
    "bom": b"\xef\xbb\xbf",
    "invalid-utf8": b'{"policyName":"\xff\xfe"}',
    "deep-nesting": b"[" * 100000 + b"]" * 100000,
    "huge-number": b'{"policyName":"Static","machineState":{},"checksum":1e400}',
    "two-to-the-70": b'{"policyName":"Static","machineState":{},"checksum":1180591620717411303424}',
    "duplicate-keys": b'{"policyName":"Static","policyName":"None","machineState":{},"checksum":1}',
    "five-megabytes": b'{"policyName":"' + b"x" * (5 * 1024 * 1024) + b'"}',
}


def assert_clean_handling(run, root, raw):
    """Write ``raw`` as the checkpoint; the probe gives a verdict, a repair is all or nothing and truthful."""
    path = checkpoint_file(root)
    with open(path, "wb") as handle:
        handle.write(raw)
    for name in os.listdir(os.path.join(root, STATE)) if os.path.isdir(os.path.join(root, STATE)) else ():
        shutil.rmtree(os.path.join(root, STATE, name)) if os.path.isdir(os.path.join(root, STATE, name)) else os.unlink(os.path.join(root, STATE, name))
    facts = run(numa_drift_facts, {"root": root})
    assert not facts.get("failed"), facts.get("msg")
    verdict = facts["numa_drift"]["verdict"]
    assert verdict in VERDICTS
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["verdict"] == verdict
    if verdict == "drift_within_bound":
        assert result["changed"] is True and result["after"]["verdict"] == "in_sync"
        assert read_bytes(result["backup_file"]) == raw
    else:
        assert result.get("changed") in (None, False)
        assert tree_snapshot(root) == before
    assert our_leftovers(root) == []


@pytest.mark.parametrize("name", sorted(HOSTILE_BYTES))
def test_hostile_checkpoint_bytes(run, drifted, tmp_path, name):
    assert_clean_handling(run, copy_of(drifted, tmp_path), HOSTILE_BYTES[name])


JSON_LEAVES = (
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES, lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


def paths_of(document, prefix=()):
    """Every path (tuple of keys/indices) into a JSON document, the root excluded."""
    found = []
    items = document.items() if isinstance(document, dict) else enumerate(document) if isinstance(document, list) else ()
    for key, value in items:
        found.append(prefix + (key,))
        found += paths_of(value, prefix + (key,))
    return found


def mutated(document, path, value, delete):
    copy = json.loads(json.dumps(document))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


@pytest.fixture(scope="module")
def fuzz_root(drifted, tmp_path_factory):
    target = str(tmp_path_factory.mktemp("fuzz") / "node")
    shutil.copytree(drifted[0], target, symlinks=True)
    return target


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True)
@given(data=st.data())
def test_hostile_checkpoint_json(run, drifted, fuzz_root, data):
    document = json.loads(drifted[1])
    path = data.draw(st.sampled_from(paths_of(document)), label="path")
    delete = data.draw(st.booleans(), label="delete")
    value = data.draw(JSON_VALUES, label="value")
    assert_clean_handling(run, fuzz_root, json.dumps(mutated(document, path, value, delete)).encode())


# --- hostile sysfs and /proc/iomem ------------------------------------------------------------

NODE0 = "sys/devices/system/node/node0"
HOSTILE_NODE_FILES = {
    "meminfo-empty": (NODE0 + "/meminfo", b"", "no 'MemTotal: <number> kB' line"),
    "meminfo-garbage": (NODE0 + "/meminfo", b"\x00\xff garbage\n", "no 'MemTotal: <number> kB' line"),
    "meminfo-absurd": (NODE0 + "/meminfo", b"Node 0 MemTotal: 99999999999999999999999999 kB\n", "does not fit in 64 bits"),
    "meminfo-fifo": (NODE0 + "/meminfo", None, "it is a FIFO (named pipe), not a regular file"),
    "nr_hugepages-letters": (NODE0 + "/hugepages/hugepages-2048kB/nr_hugepages", b"four\n", "is not a page count"),
    "nr_hugepages-huge": (NODE0 + "/hugepages/hugepages-1048576kB/nr_hugepages", b"%d\n" % 2 ** 60, "do not fit in 64 bits"),
    "nr_hugepages-fifo": (NODE0 + "/hugepages/hugepages-2048kB/nr_hugepages", None, "it is a FIFO (named pipe)"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_NODE_FILES))
def test_hostile_node_files_are_named_errors(run, drifted, tmp_path, name):
    root = copy_of(drifted, tmp_path)
    relative, content, text = HOSTILE_NODE_FILES[name]
    target = os.path.join(root, relative)
    os.unlink(target)
    if content is None:
        os.mkfifo(target)
    else:
        with open(target, "wb") as handle:
            handle.write(content)
    before = tree_snapshot(root)
    for module in (numa_drift_facts, kubelet_mm_checkpoint):
        started = time.monotonic()
        result = run(module, {"root": root})
        assert time.monotonic() - started < 1.0
        assert result["failed"] is True
        assert result["msg"].startswith("cannot read the node under %s: the node's NUMA memory cannot be read: " % root)
        assert target in result["msg"] and text in result["msg"]
        assert "verdict" not in result
    assert tree_snapshot(root) == before


HOSTILE_IOMEM = {
    "zeroed": b"00000000-00000000 : System RAM\n  00000000-00000000 : Kernel code\n  00000000-00000000 : Kernel data\n",
    "garbage": b"\xff\xfe\x00 not iomem at all\n",
    "empty": b"",
    "fifo": None,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_IOMEM))
def test_hostile_iomem_is_a_refusal_naming_it(run, drifted, tmp_path, name):
    root = copy_of(drifted, tmp_path)
    target = os.path.join(root, "proc/iomem")
    os.unlink(target)
    if HOSTILE_IOMEM[name] is None:
        os.mkfifo(target)
    else:
        with open(target, "wb") as handle:
            handle.write(HOSTILE_IOMEM[name])
    before = tree_snapshot(root)
    facts = run(numa_drift_facts, {"root": root})["numa_drift"]
    assert facts["verdict"] == "bound_unknown"
    assert facts["bound_source"].startswith("auto: unknown (") and target in facts["bound_source"], facts["bound_source"]
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True and result["verdict"] == "bound_unknown"
    assert result["msg"].startswith("refusing to repair %s: verdict bound_unknown" % checkpoint_file(root))
    assert tree_snapshot(root) == before
    # With an explicit bound the kernel image is not needed: the same node is repaired.
    assert run(kubelet_mm_checkpoint, {"root": root, "drift_bound": "128Mi"})["changed"] is True
