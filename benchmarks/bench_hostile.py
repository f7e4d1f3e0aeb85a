# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one node's answer costs the controller: honest nodes, nodes a power cut or an operator left odd, and answers a
compromised node writes on purpose (its Python answers the reader with whatever it likes, within the bounds).

For each case: the bytes that cross, the node reader's time (where a real tree is read), and the controller's CPU to
check and assess the answer (``_snapshot.reader_answer`` + ``_snapshot.assess``, the action plugin's work per read;
a node that makes the controller read again pays this once per read, at most ``MAX_ROUNDS`` times). The figures to
read: the controller's CPU per MiB of answer against an honest node's (the dearest honest bytes: a big checkpoint),
and the dearest answer in absolute terms. Every parser the controller runs on node bytes is linear, so no answer
costs more per byte than a small multiple of an honest one, and the answer's size is bounded
(``_snapshot.MAX_ANSWER_BYTES``) as is the assessment's time (``ASSESS_SECONDS`` of the action plugin).

Run: ``.venv/bin/python benchmarks/bench_hostile.py [--json FILE] [--max-seconds S] [--max-ratio R]`` from the checkout
(exit 1 when a case is over a bound). tests/integration/test_bench_hostile.py runs it in the test command.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Tuple

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, CHECKOUT)
import conftest  # noqa: E402,F401  pylint: disable=unused-import,wrong-import-position

from ansible_collections.nodeops.numa_drift.plugins.action.numa_drift_facts import MAX_ROUNDS  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import NotRead  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support import cputree, scenario  # noqa: E402
from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, drifted_node  # noqa: E402

ARGUMENTS = {"drift_bound": "auto"}
DROPINS = "/etc/kubernetes/kubelet.conf.d"
KIND = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def node_answer(root: str) -> Tuple[Dict[str, Any], float]:
    """The node reader's answer of the tree under ``root`` (the probe's plan) and the reader's own time."""
    rules, follows = read_plan(ARGUMENTS)
    started = time.process_time()
    entries = plan_reader.read_plan(root, rules, follows)
    return entries, time.process_time() - started


def controller_cost(root: str, entries: Dict[str, Any]) -> Dict[str, Any]:
    """What the controller spends on one answer, and what it made of it."""
    stdout = json.dumps({"entries": entries})
    started = time.process_time()
    checked, failure = _snapshot.reader_answer(0, stdout, "")
    outcome = failure.get("msg", "")[:80] if failure else ""
    if not failure:
        try:
            outcome = _snapshot.assess(checked, root, ARGUMENTS)["verdict"]
        except NotRead as missing:
            outcome = "asks for %s (%s)" % (missing.key, missing.how)
        except OSError as error:
            outcome = "fails: %s" % str(error)[:60]
    return {"bytes": len(stdout.encode()), "controller_ms": round((time.process_time() - started) * 1000, 1), "outcome": outcome}


# --------------------------------------------------------------------------- honest and odd trees, through the real reader


def kubeadm(root: str, pods: int = 2, extra: Dict[str, str] = None) -> str:
    files = dict(LAYOUTS["kubeadm-config-dir"][0], **(extra or {}))
    return drifted_node(root, files) if pods == 2 else _with_pods(root, files, pods)


def _with_pods(root: str, files: Dict[str, str], pods: int) -> str:
    before = scenario.two_node_boot()
    return scenario.write_kubelet_node(root, before, before.moved(node0=-45260, node1=45260),
                                       pods=scenario.guaranteed_pods(pods, (0,), scenario.MIB), extra_files=files)


def zero_filled_dropins(root: str) -> str:
    kubeadm(root)
    for index in range(15):  # 60 MiB: a power cut's leftovers
        with open(os.path.join(root, DROPINS.lstrip("/"), "%02d-lost.conf" % index), "wb") as handle:
            handle.write(b"\0" * (4 * 1024 * 1024))
    return root


def self_naming_flags(root: str) -> str:
    return kubeadm(root, extra={"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=%s\n" % " ".join(["--config=/etc/default/kubelet"] * 40)})


def many_dropins(root: str) -> str:
    kubeadm(root)
    for index in range(20000):
        with open(os.path.join(root, DROPINS.lstrip("/"), "%05d.conf" % index), "w", encoding="utf-8") as handle:
            handle.write(KIND)
    return root


def big_cpu_machine(root: str, uncore_option: bool) -> str:
    """kubeadm with the static CPU manager on 384 CPUs (2 sockets x 96 cores x 2 threads, an L3 per 8 cores): the
    CPUs' cache files (about 25 paths a CPU) are read only with prefer-align-cpus-by-uncorecache."""
    options = {"prefer-align-cpus-by-uncorecache": "true"} if uncore_option else {}
    kubeadm(root, extra={DROPINS + "/50-cpu.conf": KIND + "cpuManagerPolicy: static\nkubeReserved: {cpu: '2'}\n"
                         "cpuManagerPolicyOptions: %s\n" % json.dumps(options)})
    cpus = cputree.machine(sockets=2, cores_per_socket=96, threads_per_core=2)
    cputree.add_cpu_topology(root, cpus, None, {cpu: 100 * socket + core // 8 for cpu, (core, socket, _node) in cpus.items()})
    return root


HONEST = "honest: kubeadm, 10,000 pods (a 1 MiB checkpoint)"
TREES: Dict[str, Callable[[str], str]] = {
    "honest: kubeadm, 2 pods": kubeadm,
    "honest: kubeadm, 250 pods": lambda root: kubeadm(root, 250),
    HONEST: lambda root: kubeadm(root, 10000),
    "honest: 384 CPUs with L3 caches, static CPU manager": lambda root: big_cpu_machine(root, False),
    "honest: the same, prefer-align-cpus-by-uncorecache": lambda root: big_cpu_machine(root, True),
    "odd: 60 MiB of zero-filled drop-ins": zero_filled_dropins,
    "odd: a flags file naming itself 40 times": self_naming_flags,
    "odd: 20,000 drop-ins": many_dropins,
}


# --------------------------------------------------------------------------- what a compromised node can answer


def _base(root: str) -> Dict[str, Any]:
    return node_answer(kubeadm(root))[0]


def _text(text: str) -> Dict[str, Any]:
    return {"stat": {"kind": "file"}, "text": {"text": text, "size": len(text.encode())}}


def crafted_yaml_flow(root: str, bound: int) -> Dict[str, Any]:
    entries = _base(root)
    flow = KIND + "reservedMemory: [" + ", ".join("x%d" % index for index in range(bound // 8)) + "]\n"
    entries["/var/lib/kubelet/config.yaml"] = _text(flow[:bound])
    return entries


def crafted_names(root: str, bound: int) -> Dict[str, Any]:
    """A drop-in dir that lists 100,000 names, as many of them files with a small document as the answer may name."""
    entries = _base(root)
    names = ["%06d.conf" % index for index in range(100000)]
    entries[DROPINS] = {"stat": {"kind": "dir"}, "names": {"names": "/".join(names)}}
    for name in names[:19000]:
        entries[DROPINS + "/" + name] = _text(KIND + "evictionHard: {memory.available: 100Mi}\n")
    return entries


def crafted_link_chains(root: str, bound: int) -> Dict[str, Any]:
    """Every drop-in a chain of 39 links (one short of ELOOP), 400 of them."""
    entries = _base(root)
    names = ["%03d.conf" % index for index in range(400)]
    entries[DROPINS] = {"stat": {"kind": "dir"}, "names": {"names": "/".join(names)}}
    for name in names:
        for step in range(39):
            entries["/chain/%s/%d" % (name, step)] = {"stat": {"kind": "link", "target": "/chain/%s/%d" % (name, step + 1)}}
        entries["/chain/%s/39" % name] = _text(KIND)
        entries["/chain/" + name] = {"stat": {"kind": "dir"}}
        entries[DROPINS + "/" + name] = {"stat": {"kind": "link", "target": "/chain/%s/0" % name}}
    entries["/chain"] = {"stat": {"kind": "dir"}}
    return entries


def crafted_units(root: str, bound: int) -> Dict[str, Any]:
    """A kubelet unit of one 1 MiB line of continued ExecStart words and an environment file of 1 MiB of variables."""
    entries = _base(root)
    words = " \\\n".join("--flag-%d=$V%d" % (index, index) for index in range(bound // 40))
    entries["/usr/lib/systemd/system/kubelet.service"] = _text("[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/bin/kubelet " + words + "\n")
    entries["/etc/default/kubelet"] = _text("".join("V%d='%s'\n" % (index, "x" * 20) for index in range(bound // 32)))
    return entries


CRAFTED: Dict[str, Callable[[str, int], Dict[str, Any]]] = {
    "hostile: a 1 MiB one-line YAML flow sequence": crafted_yaml_flow,
    "hostile: 100,000 names, 19,000 drop-ins": crafted_names,
    "hostile: 400 drop-ins behind 39 links each": crafted_link_chains,
    "hostile: 1 MiB unit and environment files": crafted_units,
}
TEXT_BOUND = 1024 * 1024
MIB = 1024 * 1024


def run(scratch: str) -> List[Dict[str, Any]]:
    rows = []
    for name, build in TREES.items():
        root = build(os.path.join(scratch, "tree-%d" % len(rows)))
        entries, reader_s = node_answer(root)
        rows.append(dict(controller_cost(root, entries), case=name, reader_ms=round(reader_s * 1000, 1)))
        shutil.rmtree(root, ignore_errors=True)
    for name, craft in CRAFTED.items():
        root = os.path.join(scratch, "tree-%d" % len(rows))
        entries = craft(root, TEXT_BOUND)
        rows.append(dict(controller_cost(root, entries), case=name, reader_ms=None))
        shutil.rmtree(root, ignore_errors=True)
    return rows


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--max-seconds", type=float, help="fail when one answer costs the controller more CPU than this")
    parser.add_argument("--max-ratio", type=float, help="fail when an answer costs more per MiB than this times the honest one")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="bench-hostile-")
    try:
        rows = run(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    honest = next(row for row in rows if row["case"] == HONEST)
    per_mib = honest["controller_ms"] / (honest["bytes"] / MIB)
    problems = []
    for row in rows:
        row["ms_per_mib"] = round(row["controller_ms"] / (row["bytes"] / MIB), 1)
        row["x_honest_per_mib"] = round(row["ms_per_mib"] / per_mib, 2)
        if args.max_seconds is not None and row["controller_ms"] > args.max_seconds * 1000:
            problems.append("%s: %.1f s of controller CPU, over %g s" % (row["case"], row["controller_ms"] / 1000, args.max_seconds))
        if args.max_ratio is not None and row["x_honest_per_mib"] > args.max_ratio:
            problems.append("%s: %.2f times the honest cost per MiB, over %g" % (row["case"], row["x_honest_per_mib"], args.max_ratio))
    width = max(len(row["case"]) for row in rows)
    print("%-*s  %10s  %9s  %13s  %9s  %7s  %s" % (width, "case", "bytes", "reader ms", "controller ms", "ms/MiB", "x/MiB", "outcome"))
    for row in rows:
        print("%-*s  %10d  %9s  %13.1f  %9.1f  %7.2f  %s" % (
            width, row["case"], row["bytes"], "-" if row["reader_ms"] is None else "%.1f" % row["reader_ms"], row["controller_ms"],
            row["ms_per_mib"], row["x_honest_per_mib"], row["outcome"]))
    dearest = max(rows, key=lambda row: row["controller_ms"])
    summary = {"honest_ms_per_mib": round(per_mib, 1), "max_answer_bytes": _snapshot.MAX_ANSWER_BYTES, "max_rounds": MAX_ROUNDS,
               "dearest": dearest["case"], "dearest_ms": dearest["controller_ms"],
               "worst_x_honest_per_mib": max(row["x_honest_per_mib"] for row in rows),
               "bound_ms": round(per_mib * max(row["x_honest_per_mib"] for row in rows) * _snapshot.MAX_ANSWER_BYTES / MIB, 1)}
    print("honest: %(honest_ms_per_mib).1f ms of controller CPU per MiB; the dearest per MiB: %(worst_x_honest_per_mib).2f times that; "
          "an answer of the largest size (%(max_answer_bytes)d bytes) at that rate: %(bound_ms).0f ms, at most %(max_rounds)d reads a probe" % summary)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "summary": summary, "problems": problems}, handle, indent=2)
    for problem in problems:
        print("OVER: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
