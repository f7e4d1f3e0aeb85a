# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the playbooks operators run cost per host, against a one-task ping playbook (Ansible's floor).

    .venv/bin/python benchmarks/bench_playbooks.py [--hosts 60] [--forks 2] [--rounds 1] [--small 5]
        [--kubelet real|script] [--max-ratio PROBE,REMEDIATE] [--max-check-ratio R] [--json FILE]

1. Builds fake node trees with bench_fleet's builders: ``--hosts`` nodes whose checkpoint drifted (KASLR moved
   45 MiB between two NUMA nodes, 4 pinned pods: repairable) and as many in sync; each node's /usr/bin/kubelet is
   the real kubelet when it is built (``--kubelet``), asked its release by every probe. Local hosts, pipelining
   on, no become, no Kubernetes API (``remediate_require_api=false``, ``numa_drift_lock=false``).
2. Each round runs, back to back (the order rotates between rounds), every playbook on every host:
   ``ping`` (one task of ansible.builtin.ping), ``probe`` (nodeops.numa_drift.probe on the drifted nodes, its
   fleet report included), ``remediate_in_sync`` (nodeops.numa_drift.remediate on the in-sync nodes: nothing to
   do) and ``remediate_dry_run`` (the same with ``remediate_dry_run=true`` on the drifted nodes). CPU time is
   user + sys of ansible-playbook and every process it waited for (``os.wait4``); per host = run total / hosts,
   median over rounds; ratios are / ping's. The 1,000-host figure is CPU per host x 1,000 over the machine's cores.
3. Small fleet: nodeops.numa_drift.probe and ``remediate --check`` on the first ``--small`` drifted nodes with
   Ansible's default 5 forks, wall time of each (median over rounds) and their ratio.

Prints a table; ``--json`` writes every figure. ``--max-ratio PROBE,REMEDIATE`` fails the run (exit 1) when the
probe playbook's or the in-sync remediate's CPU ratio is above its bound, ``--max-check-ratio`` when the small
fleet's ``--check`` takes more than that many times the probe playbook's wall time.
``tests/integration/test_bench_playbooks.py`` runs it with bounds; docs/fleet-scale.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_fleet  # noqa: E402  pylint: disable=wrong-import-position

FLEET_HOSTS = 1000
# name -> (playbook, node set, extra arguments)
RUNS = {
    "ping": ("ping", "drifted", ()),
    "probe": ("nodeops.numa_drift.probe", "drifted", ()),
    "remediate_in_sync": ("nodeops.numa_drift.remediate", "in_sync", ()),
    "remediate_dry_run": ("nodeops.numa_drift.remediate", "drifted", ("-e", "remediate_dry_run=true")),
}
SMALL_RUNS = {
    "probe": ("nodeops.numa_drift.probe", ()),
    "remediate_check": ("nodeops.numa_drift.remediate", ("--check",)),
}
RATIO_BOUNDS = ("probe", "remediate_in_sync")
# What every run passes: no API, no cluster lock, no become (local hosts run as this user).
COMMON_ARGS = ("-e", "remediate_require_api=false", "-e", "numa_drift_lock=false", "-e", "numa_drift_become=false")


def write_inventory(directory: str, name: str, roots: Dict[str, str]) -> str:
    path = os.path.join(directory, "%s.json" % name)
    hosts = {host: {"remediate_root": root} for host, root in roots.items()}
    document = {"all": {"hosts": hosts, "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    return path


def write_ping_playbook(directory: str) -> str:
    path = os.path.join(directory, "ping.yml")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("- name: Ping every node\n  hosts: all\n  gather_facts: false\n  tasks:\n"
                     "    - name: Ping\n      ansible.builtin.ping:\n")
    return path


def run_playbook(directory: str, env: Dict[str, str], playbook: str, inventory: str, args: Sequence[str],
                 limit: Optional[str] = None) -> Tuple[float, float, str]:
    report_dir = tempfile.mkdtemp(prefix="report-", dir=directory)
    command = [os.path.join(bench_fleet.VENV_BIN, "ansible-playbook"), "-i", inventory, playbook] + list(COMMON_ARGS) + list(args)
    if limit:
        command += ["-l", limit]
    return bench_fleet.timed_run(command, dict(env, NUMA_DRIFT_REPORT_DIR=report_dir), directory)


def recap_ok(text: str, hosts: int) -> bool:
    """Every host in the recap, none failed or unreachable."""
    recap = re.findall(r"^\S+\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", text, re.MULTILINE)
    return len(recap) >= hosts and all(unreachable == "0" and failed == "0" for unreachable, failed in recap)


def per_host(samples: List[Tuple[float, float]], hosts: int) -> Dict[str, Any]:
    walls = [wall for wall, _cpu in samples]
    cpus = [cpu for _wall, cpu in samples]
    return {"wall_s": [round(value, 3) for value in walls], "cpu_s": [round(value, 3) for value in cpus],
            "wall_ms_per_host": round(statistics.median(walls) * 1000 / hosts, 1),
            "cpu_ms_per_host": round(statistics.median(cpus) * 1000 / hosts, 1)}


def fleet_rounds(directory: str, env: Dict[str, str], playbooks: Dict[str, str], inventories: Dict[str, str],
                 hosts: int, rounds: int) -> Dict[str, Any]:
    samples: Dict[str, List[Tuple[float, float]]] = {name: [] for name in RUNS}
    names = list(RUNS)
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            playbook, nodes, args = RUNS[name]
            wall, cpu, text = run_playbook(directory, env, playbooks.get(playbook, playbook), inventories[nodes], args)
            if not recap_ok(text, hosts):
                raise RuntimeError("%s: not every host ended ok:\n%s" % (name, text[-4000:]))
            samples[name].append((wall, cpu))
            print("  round %d %-18s wall %7.2f s  cpu %7.2f s" % (round_index + 1, name, wall, cpu), flush=True)
    result = {name: per_host(values, hosts) for name, values in samples.items()}
    ping = result["ping"]["cpu_ms_per_host"]
    result["ratio"] = {name: round(result[name]["cpu_ms_per_host"] / ping, 3) for name in RUNS if name != "ping"}
    cores = os.cpu_count() or 1
    result["fleet_%d" % FLEET_HOSTS] = {
        name: {"cpu_s": round(result[name]["cpu_ms_per_host"] * FLEET_HOSTS / 1000, 1),
               "minutes_on_%d_cores" % cores: round(result[name]["cpu_ms_per_host"] * FLEET_HOSTS / 1000 / cores / 60, 2)}
        for name in RUNS
    }
    return result


def small_rounds(directory: str, env: Dict[str, str], inventory: str, names: List[str], rounds: int) -> Dict[str, Any]:
    samples: Dict[str, List[Tuple[float, float]]] = {name: [] for name in SMALL_RUNS}
    limit = ",".join(names)
    env = dict(env, ANSIBLE_FORKS="5")  # Ansible's default forks: a small fleet as operators run it
    for round_index in range(rounds):
        for name, (playbook, args) in SMALL_RUNS.items():
            wall, cpu, text = run_playbook(directory, env, playbook, inventory, args, limit=limit)
            if not recap_ok(text, len(names)):
                raise RuntimeError("small %s: not every host ended ok:\n%s" % (name, text[-4000:]))
            samples[name].append((wall, cpu))
            print("  round %d small %-15s wall %7.2f s  cpu %7.2f s" % (round_index + 1, name, wall, cpu), flush=True)
    result: Dict[str, Any] = {name: {"wall_s": round(statistics.median([wall for wall, _cpu in values]), 2),
                                     "cpu_s": round(statistics.median([cpu for _wall, cpu in values]), 2)}
                              for name, values in samples.items()}
    result["check_over_probe_wall"] = round(result["remediate_check"]["wall_s"] / result["probe"]["wall_s"], 2)
    return result


def report(results: Dict[str, Any]) -> List[str]:
    settings, fleet = results["settings"], results["fleet"]
    cores = settings["cpus"]
    lines = ["playbook benchmark: %d hosts, forks %d, %d rounds, %d cores; each node's kubelet: %s" % (
        settings["hosts"], settings["forks"], settings["rounds"], cores, settings["kubelet"]),
        "%-18s %13s %13s %8s %19s" % ("playbook", "wall ms/host", "cpu ms/host", "x ping", "1,000 hosts (CPU)")]
    for name in RUNS:
        ratio = fleet["ratio"].get(name, 1.0)
        lines.append("%-18s %13.1f %13.1f %8.3f %15.2f min" % (
            name, fleet[name]["wall_ms_per_host"], fleet[name]["cpu_ms_per_host"], ratio,
            fleet["fleet_%d" % FLEET_HOSTS][name]["minutes_on_%d_cores" % cores]))
    small = results["small"]
    lines.append("%d nodes: probe %.2f s wall, remediate --check %.2f s wall (%.2fx)" % (
        settings["small"], small["probe"]["wall_s"], small["remediate_check"]["wall_s"], small["check_over_probe_wall"]))
    return lines


def problems(results: Dict[str, Any], max_ratio: Optional[Tuple[float, float]], max_check: Optional[float]) -> List[str]:
    found = []
    if max_ratio:
        for name, bound in zip(RATIO_BOUNDS, max_ratio):
            value = results["fleet"]["ratio"][name]
            if value > bound:
                found.append("%s: cpu %.3f x ping is above %.2f" % (name, value, bound))
    if max_check is not None and results["small"]["check_over_probe_wall"] > max_check:
        found.append("remediate --check on %d nodes: %.2f x the probe playbook's wall time, above %.2f" % (
            results["settings"]["small"], results["small"]["check_over_probe_wall"], max_check))
    return found


def ratio_pair(text: str) -> Tuple[float, float]:
    parts = [float(part) for part in text.split(",")]
    if len(parts) != 2:
        raise argparse.ArgumentTypeError("PROBE,REMEDIATE: %r" % text)
    return parts[0], parts[1]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hosts", type=int, default=60)
    parser.add_argument("--forks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--small", type=int, default=5, help="nodes of the small-fleet runs (default 5)")
    parser.add_argument("--kubelet", choices=("real", "script"), default="real")
    parser.add_argument("--max-ratio", type=ratio_pair, metavar="PROBE,REMEDIATE")
    parser.add_argument("--max-check-ratio", type=float)
    parser.add_argument("--json")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args(argv)
    if options.small > options.hosts:
        parser.error("--small must not exceed --hosts")
    directory = tempfile.mkdtemp(prefix="bench-playbooks-")
    found: List[str] = []
    try:
        started = time.time()
        program, program_text = bench_fleet.kubelet_program(directory, options.kubelet)
        trees = {kind: bench_fleet.build_hosts(os.path.join(directory, kind), options.hosts, program, drifted=kind == "drifted")
                 for kind in ("drifted", "in_sync")}
        inventories = {kind: write_inventory(directory, kind, roots) for kind, roots in trees.items()}
        playbooks = {"ping": write_ping_playbook(directory)}
        collections = bench_fleet.collections_dir(directory)
        # The default output, as operators see it (its recap says which hosts ended ok).
        env = bench_fleet.ansible_env(directory, collections, options.forks, True, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
        print("built %d node trees in %.1f s" % (2 * options.hosts, time.time() - started), flush=True)
        # One untimed probe: the controller's bytecode of the collection written, as after any first run.
        run_playbook(directory, env, "nodeops.numa_drift.probe", inventories["drifted"], (), limit=sorted(trees["drifted"])[0])
        results: Dict[str, Any] = {
            "settings": {"hosts": options.hosts, "forks": options.forks, "rounds": options.rounds, "small": options.small,
                         "cpus": os.cpu_count() or 1, "python": sys.version.split()[0], "kubelet": program_text},
            "fleet": fleet_rounds(directory, env, playbooks, inventories, options.hosts, options.rounds),
            "small": small_rounds(directory, env, inventories["drifted"], sorted(trees["drifted"])[:options.small], options.rounds),
        }
        found = bench_fleet.conclude(results, report(results), problems(results, options.max_ratio, options.max_check_ratio), options.json)
    finally:
        if options.keep:
            print("kept %s" % directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
