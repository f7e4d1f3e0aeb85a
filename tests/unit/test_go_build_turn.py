# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/kubelet_judge/build.py go_build_turn: the one queue of the tests' Go builds (the judges, the guests'
kubelet, the control plane). A builder builds only holding the lock; a waiter whose binary someone else made
goes on at once, even while that builder still holds the lock for its next build."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kubelet_judge"))

import build as judge_build  # noqa: E402

HOLDER = """
import fcntl, sys, time
with open(sys.argv[1], "a+") as handle:
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(judge_build, "CACHE_ROOT", str(tmp_path / "kubelet-judge"))
    return tmp_path


@pytest.fixture
def other_builder(cache):
    """Another process holding the lock until told to let go."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(cache / ".lock")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield proc
    proc.stdin.close()
    proc.wait(timeout=10)


def lock_is_free(cache) -> bool:
    probe = subprocess.run([sys.executable, "-c", "import fcntl, sys\nwith open(sys.argv[1], 'a+') as h:\n"
                            "    try:\n        fcntl.flock(h.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
                            "    except BlockingIOError:\n        sys.exit(1)", str(cache / ".lock")], check=False)
    return probe.returncode == 0


def test_a_builder_with_nothing_built_holds_the_lock(cache):
    with judge_build.go_build_turn(lambda: False) as mine:
        assert mine is True
        assert not lock_is_free(cache)
    assert lock_is_free(cache)


def test_nothing_to_build_takes_no_lock(cache, other_builder):
    started = time.monotonic()
    with judge_build.go_build_turn(lambda: True) as mine:
        assert mine is False
    assert time.monotonic() - started < 1


def test_a_waiter_goes_on_when_its_binary_appears_while_the_lock_stays_held(cache, other_builder):
    target = cache / "binary"
    outcome = {}

    def wait_for_turn():
        with judge_build.go_build_turn(target.exists, poll_seconds=0.05) as mine:
            outcome["mine"] = mine

    waiter = threading.Thread(target=wait_for_turn)
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive()  # the other builder holds the lock and the binary is not there
    target.write_text("built by the other builder")
    waiter.join(timeout=5)
    assert not waiter.is_alive() and outcome == {"mine": False}
    assert not lock_is_free(cache)  # the other builder still holds it


def test_a_waiter_gets_its_turn_when_the_builder_lets_go_without_its_binary(cache, other_builder):
    outcome = {}

    def wait_for_turn():
        with judge_build.go_build_turn(lambda: False, poll_seconds=0.05) as mine:
            outcome["mine"] = mine
            outcome["held"] = not lock_is_free(cache)

    waiter = threading.Thread(target=wait_for_turn)
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive()
    other_builder.stdin.close()
    other_builder.wait(timeout=10)
    waiter.join(timeout=5)
    assert outcome == {"mine": True, "held": True}
