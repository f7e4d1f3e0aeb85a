# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/history.py: the repair history and the loop guard."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history

NOW = 1796205300.0
HOUR = 3600.0


def entry(age_hours, action="repaired", by="module"):
    return history.new_entry(action, by, "drift_within_bound", None, "summary", NOW - age_hours * HOUR)


def test_history_lives_under_root_and_a_missing_file_is_empty(tmp_path):
    path = history.history_path(str(tmp_path))
    assert path == os.path.join(str(tmp_path), "var/lib/nodeops-numa-drift/history.json")
    assert history.read_history(path) == []


def test_written_history_reads_back(tmp_path):
    path = history.history_path(str(tmp_path))
    entries = [entry(1), entry(2, by="guard")]
    history.write_history(path, entries)
    assert history.read_history(path) == entries
    with open(path, encoding="utf-8") as handle:
        assert json.load(handle) == {"repairs": entries}


@pytest.mark.parametrize("raw, problem", [
    (b"{", "is not valid JSON"),
    (b'{"repairs": {}}', 'is not {"repairs": [{"time": <number>, ...}, ...]}'),
    (b'{"repairs": [{"time": true}]}', 'is not {"repairs"'),
    (b"\xff", "is not valid JSON"),
])
def test_a_malformed_history_is_an_error_naming_the_file_and_the_way_out(raw, problem):
    with pytest.raises(history.HistoryError) as raised:
        history.parse_history(raw, "/h.json")
    assert problem in str(raised.value) and "/h.json" in str(raised.value) and "delete it to clear the loop guard" in str(raised.value)


def test_the_loop_guard_counts_repair_attempts_of_the_window_only():
    entries = [entry(1), entry(5), entry(30), entry(2, action="restored"), entry(3, action="sidelined"), entry(4, action="rolled_back")]
    assert [e["time"] for e in history.recent_repairs(entries, 24, NOW)] == [NOW - HOUR, NOW - 5 * HOUR, NOW - 4 * HOUR]
    assert history.loop_guard_message(entries, 4, 24, NOW, "/h.json") is None
    message = history.loop_guard_message(entries, 3, 24, NOW, "/h.json")
    assert message.startswith("loop guard: this node was repaired 3 times in the last 24 hours (loop_max_repairs=3)")
    assert "read /h.json on the node" in message


def through_the_reader(path):
    """history_in over what the node reader answers for ``path`` (the remediate plan's read on the controller)."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import AnsweredFiles  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader  # pylint: disable=import-outside-toplevel

    entries = json.loads(json.dumps(plan_reader.read_plan("/", [{"read": path, "raw": True, "literal": True, "follow": []}], {})))
    return history.history_in(AnsweredFiles("/", entries), path)


@pytest.mark.parametrize("content", [None, b'{"repairs": []}', "entries", b"{", b'{"repairs": {}}', "link", "directory", "huge"])
def test_the_history_read_through_the_node_reader_is_the_history_read_on_the_node(tmp_path, content):
    path = history.history_path(str(tmp_path))
    os.makedirs(os.path.dirname(path))
    if content == "entries":
        history.write_history(path, [entry(1), entry(2, by="guard")])
    elif content == "link":
        history.write_history(str(tmp_path / "elsewhere.json"), [entry(1)])
        os.symlink(str(tmp_path / "elsewhere.json"), path)
    elif content == "directory":
        os.mkdir(path)
    elif content == "huge":
        with open(path, "wb") as handle:
            handle.write(b'{"repairs": [' + b" " * (4 * 1024 * 1024) + b"]}")
    elif content is not None:
        with open(path, "wb") as handle:
            handle.write(content)
    outcomes = []
    for read in (history.read_history, through_the_reader):
        try:
            outcomes.append(("entries", read(path)))
        except history.HistoryError as error:
            outcomes.append(("error", str(error)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == ("entries" if content in (None, b'{"repairs": []}', "entries") else "error"), outcomes[0]
    # The probe reads the same file in its own read (the remediate role's loop guard decides from its facts): the
    # times of the attempts the loop guard counts, or the same error.
    probed = probe_history(str(tmp_path))
    assert probed["path"] == path
    if outcomes[0][0] == "entries":
        assert (probed["repairs"], probed["error"]) == (sorted(item["time"] for item in outcomes[0][1]), None)
    else:  # the same refusal (a link is not followed, a directory or a huge file not read), in the reader's words
        assert probed["repairs"] == [] and "history.json" in probed["error"], probed
        # "cannot read the repair history: ...", "the repair history <file> is not ...": the node's path, not the host's
        assert probed["error"].split()[:3] == outcomes[0][1].split()[:3], probed


def probe_history(root):
    """The ``history`` of the probe's facts for the node at ``root``, read as the probe reads (the node reader's
    answer assessed on the controller)."""
    # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import AnsweredFiles
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader

    rules = [dict(rule, follow=[]) for rule in _probe.HISTORY_READS]
    entries = json.loads(json.dumps(plan_reader.read_plan(root, rules, {})))
    return _probe._history(AnsweredFiles(root, entries))  # pylint: disable=protected-access


def test_the_probe_carries_the_times_the_loop_guard_counts_most_recent_last():
    class Files:  # what history_in reads through: the engine's node files
        def __init__(self, entries):
            self.raw = json.dumps({"repairs": entries}).encode()

        def read_bytes(self, _path, _limit):
            return self.raw

        def host_path(self, path, follow=True):
            return "/host" + path

    from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe  # pylint: disable=import-outside-toplevel

    entries = [entry(1), entry(3, action="restored"), entry(5, action="sidelined"), entry(2, by="guard"), dict(entry(4), action={"odd": 1})]
    probed = _probe._history(Files(entries))  # pylint: disable=protected-access
    assert probed == {"path": "/host" + _probe.HISTORY, "repairs": [NOW - 4 * HOUR, NOW - 2 * HOUR, NOW - HOUR], "error": None}
    # As many as the loop guard needs to decide alike for any loop_max_repairs up to MAX_REPAIR_TIMES.
    many = [entry(hours / 100.0) for hours in range(_probe.MAX_REPAIR_TIMES + 5)]
    repairs = _probe._history(Files(many))["repairs"]  # pylint: disable=protected-access
    assert len(repairs) == _probe.MAX_REPAIR_TIMES and repairs[-1] == NOW and repairs == sorted(repairs)
