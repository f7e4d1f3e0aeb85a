# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Speed and memory of the engine: checkpoint inspection, marshalling, and a whole-node probe.

Run: ``.venv/bin/python benchmarks/bench_engine.py`` from the checkout. Writes
``benchmarks/output/engine.json`` and prints a table. Not part of the test command:
numbers depend on the machine (these machines: 2 cores).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, CHECKOUT)
# conftest puts the collection on sys.path.
import conftest  # noqa: E402,F401  pylint: disable=unused-import,wrong-import-position

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_v3  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support import scenario  # noqa: E402


def _checkpoint_with(pods: int, numa_nodes: int) -> bytes:
    boot = scenario.Boot({n: 64 * scenario.GIB // scenario.KIB for n in range(numa_nodes)})
    layout = {n: {"app-%d" % c: [([n % numa_nodes], "memory", 64 * scenario.MIB)] for c in range(2)} for n in range(pods)}
    named = {"pod-%06d" % index: containers for index, containers in layout.items()}
    reserved = scenario.uniform_reserved(range(numa_nodes))
    return scenario.recorded_checkpoint(boot, reserved, named)


def _timed(function, repeat: int):
    samples = []
    for _run in range(repeat):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    tracemalloc.start()
    function()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"median_ms": round(statistics.median(samples) * 1000, 2), "peak_kib": peak // 1024, "runs": repeat}


def main() -> None:
    results = {}
    for pods, numa_nodes in ((0, 2), (110, 2), (1000, 8), (10000, 8)):
        raw = _checkpoint_with(pods, numa_nodes)
        report = inspect_checkpoint(raw)
        repeat = 20 if pods <= 1000 else 3
        results["inspect %d pods, %d nodes (%d bytes)" % (pods, numa_nodes, len(raw))] = _timed(
            lambda: inspect_checkpoint(raw), repeat)
        results["marshal_v3 %d pods, %d nodes" % (pods, numa_nodes)] = _timed(
            lambda: marshal_v3(report.content), repeat)
    with tempfile.TemporaryDirectory() as root:
        before = scenario.two_node_boot()
        scenario.write_kubelet_node(root, before, before.moved(node0=-45260, node1=45260), pods=scenario.guaranteed_pods(110, (0,)))
        results["probe of a 2-NUMA node, 110 pods, drift_within_bound"] = _timed(lambda: _probe.probe(HostFiles(root)), 20)
    os.makedirs(os.path.join(CHECKOUT, "benchmarks", "output"), exist_ok=True)
    with open(os.path.join(CHECKOUT, "benchmarks", "output", "engine.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
    width = max(len(name) for name in results)
    for name, numbers in results.items():
        print("%-*s  %9.2f ms  %8d KiB peak" % (width, name, numbers["median_ms"], numbers["peak_kib"]))


if __name__ == "__main__":
    main()
