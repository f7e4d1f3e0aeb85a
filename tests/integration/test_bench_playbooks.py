# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchmarks/bench_playbooks.py on 60 hosts, forks 2, one round: every figure reported, and the playbooks operators
run within the bounds of issue 36 on a shared CI machine. The bounds are loose against noise but far below what the
playbooks cost before they were rebuilt (probe 2.9x, in-sync remediate 4.1x of a ping playbook on 60 hosts): a
playbook that goes back to per-host plumbing fails here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(CHECKOUT, "benchmarks", "bench_playbooks.py")
# Probe playbook, in-sync remediate: the targets are 0.5 and 1.0 (docs/fleet-scale.md has the measured figures).
MAX_RATIO = "0.65,1.1"


def test_playbook_benchmark_reports_every_figure_and_the_playbooks_stay_near_ansibles_floor(tmp_path) -> None:
    output = tmp_path / "playbooks.json"
    completed = subprocess.run([sys.executable, BENCH, "--hosts", "60", "--forks", "2", "--rounds", "1", "--small", "5",
                                "--kubelet", "script", "--max-ratio", MAX_RATIO, "--json", str(output)],
                               cwd=CHECKOUT, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    assert completed.returncode == 0, completed.stdout[-6000:]
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["problems"] == []
    fleet = results["fleet"]
    for name in ("ping", "probe", "remediate_in_sync", "remediate_dry_run"):
        assert len(fleet[name]["cpu_s"]) == 1 and fleet[name]["cpu_ms_per_host"] > 0 and fleet[name]["wall_ms_per_host"] > 0
        assert fleet["fleet_1000"][name]["cpu_s"] == round(fleet[name]["cpu_ms_per_host"], 1)
    ping = fleet["ping"]["cpu_ms_per_host"]
    for name in ("probe", "remediate_in_sync", "remediate_dry_run"):
        assert fleet["ratio"][name] == round(fleet[name]["cpu_ms_per_host"] / ping, 3)
    assert 0 < fleet["ratio"]["probe"] <= 0.65 and 0 < fleet["ratio"]["remediate_in_sync"] <= 1.1
    small = results["small"]
    assert small["check_over_probe_wall"] == round(small["remediate_check"]["wall_s"] / small["probe"]["wall_s"], 2)
    assert "remediate_in_sync" in completed.stdout and "5 nodes: probe" in completed.stdout
