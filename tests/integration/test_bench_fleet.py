# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchmarks/bench_fleet.py --quick runs end to end and reports every figure (shape only, never timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(CHECKOUT, "benchmarks", "bench_fleet.py")


def test_quick_fleet_benchmark_reports_modules_payloads_and_role_task_counts(tmp_path) -> None:
    output = tmp_path / "fleet.json"
    completed = subprocess.run([sys.executable, BENCH, "--quick", "--json", str(output)], cwd=CHECKOUT, check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["settings"]["hosts"] == 5 and results["settings"]["rounds"] == 1 and results["settings"]["pipelining"] is True
    for kind in ("noop", "probe"):
        figures = results["modules"][kind]
        assert len(figures["wall_s"]) == 1 and len(figures["cpu_s"]) == 1
        assert figures["wall_ms_per_host"] > 0 and figures["cpu_ms_per_host"] > 0
    ratio = results["modules"]["ratio"]
    assert ratio["cpu"] == round(results["modules"]["probe"]["cpu_ms_per_host"] / results["modules"]["noop"]["cpu_ms_per_host"], 3)
    payload = results["payload"]
    assert payload["noop"]["module"] == "ansible.builtin.ping"
    assert payload["probe"]["module"] == "nodeops.numa_drift.numa_drift_facts"
    # The probe's zip carries its own module and engine files; the do-nothing module none of ours.
    probe_files = payload["probe"]["collection_files"]
    assert "ansible_collections/nodeops/numa_drift/plugins/modules/numa_drift_facts.py" in probe_files
    assert any(name.startswith("ansible_collections/nodeops/numa_drift/plugins/module_utils/") for name in probe_files)
    assert payload["noop"]["collection_files"] == {}
    assert payload["difference_bytes"] == payload["probe"]["ansiballz_bytes"] - payload["noop"]["ansiballz_bytes"]
    role = results["role"]
    assert set(role) == {"repaired", "in_sync", "no_checkpoint"}
    for case, entry in role.items():
        assert entry["failed"] == 0, (case, entry)
        assert entry["task_starts"] >= entry["ok"] + entry["skipped"] > 0, (case, entry)
    assert role["repaired"]["changed"] > 0 and role["in_sync"]["changed"] == 0 and role["no_checkpoint"]["changed"] == 0
    assert role["repaired"]["task_starts"] > role["in_sync"]["task_starts"]
    assert "ratio probe/noop: wall" in completed.stdout and "payload difference:" in completed.stdout
    assert "role repaired" in completed.stdout
