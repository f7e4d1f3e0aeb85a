# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time of one boot-guard run on a large node: 8 NUMA nodes, 200 pods, drift within the bound.

Run: ``.venv/bin/python benchmarks/bench_guard.py``. Each sample builds a fresh node tree (outside
the timing) and times ``_guard.main(["--root", tree])`` in-process (probe, repair with backup and
history, guard.json, metrics), and once the built zipapp under the plain ``python3`` (process
start included). Writes ``benchmarks/output/guard.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, CHECKOUT)
import conftest  # noqa: E402,F401  pylint: disable=unused-import,wrong-import-position

from ansible_collections.nodeops.numa_drift.plugins.action.__guard_program import build_zipapp  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard import program as _guard  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support import scenario  # noqa: E402

NUMA_NODES, PODS = 8, 200


def big_node(root: str) -> None:
    before = scenario.Boot({n: 64 * scenario.GIB // scenario.KIB for n in range(NUMA_NODES)})
    pods = {"pod-%06d" % i: {"app": [([i % NUMA_NODES], "memory", 64 * scenario.MIB)], "side": [([i % NUMA_NODES], "memory", 16 * scenario.MIB)]}
            for i in range(PODS)}
    scenario.write_kubelet_node(root, before, before.moved(node0=-45260, node3=45260), pods=pods)


def main() -> None:
    samples = []
    devnull = open(os.devnull, "w", encoding="utf-8")
    for _run in range(10):
        with tempfile.TemporaryDirectory() as root:
            big_node(root)
            stderr, sys.stderr = sys.stderr, devnull
            start = time.perf_counter()
            _guard.main(["--root", root])
            samples.append(time.perf_counter() - start)
            sys.stderr = stderr
            with open(os.path.join(root, _guard.GUARD_STATE), encoding="utf-8") as handle:
                assert json.load(handle)["action"] == "repaired"
    with tempfile.TemporaryDirectory() as root:
        big_node(root)
        program = os.path.join(root, "numa-drift-guard")
        with open(program, "wb") as handle:
            handle.write(build_zipapp())
        start = time.perf_counter()
        subprocess.run(["/usr/bin/python3", "-I", program, "--root", root], check=True, capture_output=True)
        process = time.perf_counter() - start
    results = {"node": "%d NUMA nodes, %d pods (%d containers), drift_within_bound, repaired" % (NUMA_NODES, PODS, 2 * PODS),
               "in_process_median_ms": round(statistics.median(samples) * 1000, 1),
               "in_process_max_ms": round(max(samples) * 1000, 1),
               "zipapp_process_ms": round(process * 1000, 1)}
    os.makedirs(os.path.join(CHECKOUT, "benchmarks", "output"), exist_ok=True)
    with open(os.path.join(CHECKOUT, "benchmarks", "output", "guard.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
