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
    for kind in ("noop", "probe", "probe_cold"):
        figures = results["modules"][kind]
        assert len(figures["wall_s"]) == 1 and len(figures["cpu_s"]) == 1
        assert figures["wall_ms_per_host"] > 0 and figures["cpu_ms_per_host"] > 0
    for kind, key in (("probe", "ratio"), ("probe_cold", "ratio_cold")):
        ratio = results["modules"][key]
        assert ratio["cpu"] == round(results["modules"][kind]["cpu_ms_per_host"] / results["modules"]["noop"]["cpu_ms_per_host"], 3)
    payload = results["payload"]
    assert payload["noop"]["module"] == "ansible.builtin.ping"
    assert [entry["module"] for entry in payload["noop"]["sent"]] == ["ping"]
    assert payload["noop"]["sent"][0]["collection_files"] == {}
    # With the node's bytecode cache filled, the probe sends only __cached_run: the cache itself, no engine source.
    warm = payload["probe"]["sent"]
    assert payload["probe"]["module"] == "nodeops.numa_drift.numa_drift_facts"
    assert [entry["module"] for entry in warm] == ["__cached_run"]
    assert sorted(name.rsplit("/", 1)[1] for name in warm[0]["collection_files"]) == ["__cached_run.py", "_bytecode.py"]
    # With the cache off, __cached_run answers "off" and the probe module (with the whole engine) runs.
    cold = {entry["module"]: entry for entry in payload["probe_cold"]["sent"]}
    assert sorted(cold) == ["__cached_run", "numa_drift_facts"]
    probe_files = cold["numa_drift_facts"]["collection_files"]
    assert "ansible_collections/nodeops/numa_drift/plugins/modules/numa_drift_facts.py" in probe_files
    assert "ansible_collections/nodeops/numa_drift/plugins/module_utils/_drift.py" in probe_files
    assert payload["difference_bytes"] == payload["probe"]["ansiballz_bytes"] - payload["noop"]["ansiballz_bytes"]
    assert payload["probe"]["ansiballz_bytes"] == warm[0]["ansiballz_bytes"]
    role = results["role"]
    assert set(role) == {"repaired", "in_sync", "no_checkpoint"}
    for case, entry in role.items():
        assert entry["failed"] == 0, (case, entry)
        assert entry["task_starts"] >= entry["ok"] + entry["skipped"] > 0, (case, entry)
    assert role["repaired"]["changed"] > 0 and role["in_sync"]["changed"] == 0 and role["no_checkpoint"]["changed"] == 0
    assert role["repaired"]["task_starts"] > role["in_sync"]["task_starts"]
    assert "ratio probe/noop: wall" in completed.stdout and "payload difference:" in completed.stdout
    assert "role repaired" in completed.stdout
