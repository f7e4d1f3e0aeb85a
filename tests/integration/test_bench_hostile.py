# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchmarks/bench_hostile.py: what honest, odd and hostile node answers cost the controller, under bounds loose enough
for a shared machine: no answer costs more per MiB than the honest one (a big checkpoint) times 3, none more than 10 s
of CPU, the odd trees (a self-naming flags file, 60 MiB of zero-filled drop-ins) are cheap both sides."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(CHECKOUT, "benchmarks", "bench_hostile.py")


def test_no_node_answer_costs_the_controller_more_than_a_small_multiple_of_an_honest_one(tmp_path) -> None:
    output = tmp_path / "hostile.json"
    completed = subprocess.run([sys.executable, BENCH, "--max-ratio", "3", "--max-seconds", "10", "--json", str(output)], cwd=CHECKOUT,
                               check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout
    results = json.loads(output.read_text(encoding="utf-8"))
    assert results["problems"] == []
    rows = {row["case"]: row for row in results["rows"]}
    assert len(rows) == 12 and all(row["controller_ms"] > 0 and row["bytes"] > 0 for row in rows.values())
    cpus, uncore = "honest: 384 CPUs with L3 caches, static CPU manager", "honest: the same, prefer-align-cpus-by-uncorecache"
    for case in ("honest: kubeadm, 2 pods", "honest: kubeadm, 250 pods", "honest: kubeadm, 10,000 pods (a 1 MiB checkpoint)", cpus, uncore):
        assert rows[case]["outcome"] == "drift_within_bound", rows[case]
    # The CPUs' cache files cross only with the option (about 25 paths a CPU): several times the bytes, in the same read.
    assert rows[uncore]["bytes"] > 4 * rows[cpus]["bytes"]
    zeros = rows["odd: 60 MiB of zero-filled drop-ins"]
    assert zeros["bytes"] < 64 * 1024 and zeros["outcome"] == "kubelet_config_unknown"  # each file crosses as its size
    assert rows["odd: a flags file naming itself 40 times"]["reader_ms"] < 1000  # read once, not 40 ** 4 times
    assert results["summary"]["worst_x_honest_per_mib"] <= 3 and results["summary"]["max_rounds"] == 4
