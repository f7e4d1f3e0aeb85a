# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/sideline.py: moving a checkpoint aside (state absent) and putting a backup back
(state restored), called directly on node trees: the files, the backups, the history, and that a refusal touches nothing."""

from __future__ import annotations

import json
import os
import re

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import sideline
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import write_backup
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import RepairError, default_backup_dir
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    KIB,
    MIB,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)

BACKUP_NAME = re.compile(r"^memory_manager_state\.[0-9]{8}T[0-9]{6}Z\.(sidelined|before-restore|before-repair)(\.[0-9]+)?$")


def node(tmp_path, name="node", drift_kib=40 * MIB // KIB, checkpoint=True):
    recorded = two_node_boot()
    return write_kubelet_node(str(tmp_path / name), recorded, recorded.moved(node0=-drift_kib, node1=drift_kib),
                              pods=guaranteed_pods(2, (0,)), checkpoint_bytes=None if checkpoint else b"")


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def history(root):
    return json.loads(read(history_path(root)))["repairs"]


# --------------------------------------------------------------------------- sideline_checkpoint


def test_sideline_moves_the_checkpoint_into_the_backup_dir_whatever_its_verdict(tmp_path):
    root = node(tmp_path, drift_kib=4 * GIB // KIB)
    result = probe(HostFiles(root))
    assert result.assessment.verdict == "drift_exceeds_bound"  # not repairable: absent still sidelines it
    outcome = sideline.sideline_checkpoint(result, by="role")
    assert (outcome.changed, outcome.action, outcome.verdict_before, outcome.verdict_after) == (
        True, "sidelined", "drift_exceeds_bound", "no_checkpoint")
    assert not os.path.lexists(result.path)
    assert os.path.dirname(outcome.backup_file) == default_backup_dir(root)
    assert BACKUP_NAME.match(os.path.basename(outcome.backup_file)).group(1) == "sidelined"
    assert read(outcome.backup_file) == result.raw
    assert outcome.message == "moved %s to %s" % (result.path, outcome.backup_file)
    [entry] = history(root)
    assert (entry["action"], entry["by"], entry["backup_file"]) == ("sidelined", "role", outcome.backup_file) and "pending" not in entry
    assert probe(HostFiles(root)).assessment.verdict == "no_checkpoint"


def test_sideline_dry_run_touches_nothing(tmp_path):
    root = node(tmp_path)
    before = tree_snapshot(root)
    result = probe(HostFiles(root))
    outcome = sideline.sideline_checkpoint(result, dry_run=True)
    assert (outcome.changed, outcome.action, outcome.verdict_after) == (True, "dry_run", "no_checkpoint")
    assert outcome.message == "dry run: would move %s into %s" % (result.path, default_backup_dir(root))
    assert tree_snapshot(root) == before


def test_sideline_without_a_checkpoint_has_nothing_to_do(tmp_path):
    root = node(tmp_path, checkpoint=False)
    before = tree_snapshot(root)
    result = probe(HostFiles(root))
    outcome = sideline.sideline_checkpoint(result)
    assert (outcome.changed, outcome.action, outcome.backup_file) == (False, "none", None)
    assert outcome.message == "%s does not exist: nothing to do" % result.path
    assert tree_snapshot(root) == before


def test_sideline_refuses_a_checkpoint_rewritten_since_the_probe(tmp_path):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    with open(result.path, "ab") as handle:
        handle.write(b" ")  # kubelet wrote meanwhile
    before = tree_snapshot(root)
    with pytest.raises(RepairError, match="changed while it was being assessed: is kubelet running. Nothing was touched"):
        sideline.sideline_checkpoint(result)
    assert tree_snapshot(root) == before and not os.path.exists(default_backup_dir(root))


def test_when_the_unlink_fails_the_copy_is_removed_again(tmp_path, monkeypatch):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    unlink = os.unlink

    def refuse_the_checkpoint(path, *args, **kwargs):
        if path == result.path:
            raise PermissionError(1, "Operation not permitted", path)
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(sideline.os, "unlink", refuse_the_checkpoint)
    with pytest.raises(RepairError) as raised:
        sideline.sideline_checkpoint(result)
    assert raised.value.message.startswith("could not remove %s: " % result.path)
    assert "%s was not changed; its backup " % result.path in raised.value.message and raised.value.message.endswith(" was removed")
    assert read(result.path) == result.raw and os.listdir(default_backup_dir(root)) == []
    assert history(root) == []  # the pending entry was dropped: nothing was written


# --------------------------------------------------------------------------- restore_checkpoint


def test_restore_puts_the_sidelined_original_back(tmp_path):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    sidelined = sideline.sideline_checkpoint(result).backup_file
    outcome = sideline.restore_checkpoint(probe(HostFiles(root)), by="role")
    assert (outcome.changed, outcome.action, outcome.restored_from) == (True, "restored", sidelined)
    assert (outcome.verdict_before, outcome.verdict_after, outcome.backup_file) == ("no_checkpoint", "drift_within_bound", None)
    assert read(result.path) == result.raw
    assert outcome.message == "restored %s to %s (now drift_within_bound); the replaced checkpoint did not exist" % (sidelined, result.path)
    assert [entry["action"] for entry in history(root)] == ["sidelined", "restored"]


def test_restore_keeps_the_checkpoint_it_replaces_and_never_chooses_that_copy_later(tmp_path):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    original = write_backup(default_backup_dir(root), "memory_manager_state", b"the original", "before-repair")
    outcome = sideline.restore_checkpoint(result)
    assert read(result.path) == b"the original" and outcome.restored_from == original
    assert BACKUP_NAME.match(os.path.basename(outcome.backup_file)).group(1) == "before-restore"
    assert read(outcome.backup_file) == result.raw
    assert outcome.message.endswith("; the replaced checkpoint was kept in %s" % outcome.backup_file)
    # The default restore takes the newest original (before-repair or sidelined), not the before-restore copy.
    again = sideline.restore_checkpoint(probe(HostFiles(root)))
    assert (again.changed, again.restored_from) == (False, original)
    assert again.message == "%s already holds the bytes of %s: nothing to do" % (result.path, original)


def test_restore_of_a_named_backup_without_keeping_the_replaced_file(tmp_path):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    named = str(tmp_path / "elsewhere.json")
    with open(named, "wb") as handle:
        handle.write(b"garbage")  # any bytes: a restore puts back what it is told to, and says what kubelet will find
    outcome = sideline.restore_checkpoint(result, backup_file=named, backup=False)
    assert outcome.restored_from == named and outcome.backup_file is None and read(result.path) == b"garbage"
    assert outcome.verdict_after == "corrupt" and outcome.message.endswith("; the replaced checkpoint was not kept")


def test_restore_dry_run_says_what_it_would_put_back(tmp_path):
    root = node(tmp_path)
    result = probe(HostFiles(root))
    backup = write_backup(default_backup_dir(root), "memory_manager_state", b"garbage", "sidelined")
    before = tree_snapshot(root)
    outcome = sideline.restore_checkpoint(result, dry_run=True)
    assert (outcome.changed, outcome.action, outcome.verdict_after) == (True, "dry_run", "corrupt")
    assert outcome.message == "dry run: would restore %s to %s" % (backup, result.path)
    assert tree_snapshot(root) == before


def test_restore_without_any_backup_refuses_naming_what_it_looked_for(tmp_path):
    root = node(tmp_path)
    before = tree_snapshot(root)
    with pytest.raises(RepairError) as raised:
        sideline.restore_checkpoint(probe(HostFiles(root)))
    assert raised.value.message == ("no backup of memory_manager_state in %s (*.before-repair*, *.sidelined*): nothing to "
                                    "restore, nothing was touched" % default_backup_dir(root))
    assert tree_snapshot(root) == before


def test_restore_of_an_unreadable_backup_refuses(tmp_path):
    root = node(tmp_path)
    with pytest.raises(RepairError, match="^cannot read the backup: .*; nothing was touched$"):
        sideline.restore_checkpoint(probe(HostFiles(root)), backup_file=str(tmp_path / "missing"))
