# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/test.sh: stage names that say what they run, in CI's order; ``unit`` installs nothing."""

from __future__ import annotations

import os
import re
import subprocess

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEST_SH = os.path.join(CHECKOUT, "scripts", "test.sh")


def _function(name):
    with open(TEST_SH, encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"^%s\(\) \{\n(.*?)^\}" % re.escape(name), text, re.MULTILINE | re.DOTALL)
    assert match, name
    return "\n".join(line for line in match.group(1).splitlines() if not line.strip().startswith("#"))


def test_the_stages_in_order():
    done = subprocess.run(["bash", TEST_SH, "no-such-stage"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "[unit|integration|kubelet|sanity|lint|changelog|molecule]" in done.stderr, done.stderr


def test_unit_runs_tests_unit_only_and_installs_nothing():
    unit = _function("stage_unit")
    assert "tests/unit" in unit and "tests/integration" not in unit
    assert "requirements.sh" not in unit and "apt" not in unit
    integration = _function("stage_integration")
    assert "tests/integration/requirements.sh" in integration and "run_pytest tests/integration" in integration


def test_kubelet_runs_the_judges_with_a_go_from_go_toolchain():
    kubelet = _function("stage_kubelet")
    assert "scripts/go-toolchain.sh" in kubelet and "run_pytest tests/kubelet_judge" in kubelet
    builds = _function("go_build_step")
    assert "scripts/go-toolchain.sh" in builds
    for builder in ("tests/integration/controlplane.py\" build", "tests/vm/kubelet_disk.py", "tests/kubelet_judge/build.py"):
        assert builder in builds, builder


def test_the_go_build_queue_builds_in_the_order_the_stages_need():
    queue = _function("start_go_builds")
    order = [queue.index("steps+=(%s)" % step) for step in ("control-plane", "guest-kubelet", "kubelet-judges")]
    assert order == sorted(order)


def test_children_cpu_counts_what_finished_children_and_their_children_used():
    # The Go build queue's "CPU Ns" per step: a child that spends 1.2 s of CPU in its own child.
    script = "CLK_TCK=$(getconf CLK_TCK)\nchildren_cpu() {\n%s\n}\n" % _function("children_cpu") + r"""
children_cpu; before=$CHILDREN_CPU
python3 -c 'import subprocess, sys; subprocess.run([sys.executable, "-c", sys.argv[1]])' \
  "import time
end = time.process_time() + 1.2
while time.process_time() < end: pass"
children_cpu; echo "$((CHILDREN_CPU - before))"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) in (1, 2), done.stdout  # whole seconds: 1.2 s plus the interpreters' start-up


def test_unit_runs_the_shipped_tests_from_the_installed_tarball_and_the_rest_from_the_checkout():
    unit = _function("stage_unit")
    assert "install_collection" in unit and "run_pytest tests/unit" in unit and 'run_pytest "${own[@]}"' in unit
    install = _function("install_collection")
    assert "ansible-galaxy collection build" in install and "ansible-galaxy collection install --offline" in install
