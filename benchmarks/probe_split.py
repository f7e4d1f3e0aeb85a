# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a probe's CPU per host goes: controller (main process, workers) or node (module processes).

    .venv/bin/python benchmarks/probe_split.py [--hosts 30] [--forks 1] [--rounds 3] [--profile DIR]

Builds the fleet benchmark's fake nodes (``bench_fleet.py``), then runs ``ansible-playbook`` for
each kind (``noop``: ping, ``probe`` warm, ``probe_cold``) through this file, which wraps Ansible's
worker processes: each worker records its own CPU (user + sys: the task executor, the action
plugin, the result sent to the main process) and that of the processes it waited for (the module
process and its shell: the node side with the local connection). The main process (strategy,
result handling, callbacks) records its own. Printed per host (medians over rounds): ``total``
(``os.wait4`` of the whole run, as ``bench_fleet.py`` measures), ``main``, ``workers``,
``modules`` and ``other`` (the rest: each worker's start and exit around its task, the main process's exit).
``--profile DIR`` also writes a cProfile of the main process and of every worker
(``DIR/<kind>-<round>/``; read them with ``pstats``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
from typing import Any, Dict, List, Optional

WRAP = "--run-playbook"


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _write(path: str, document: Dict[str, float]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)


def run_playbook(argv: List[str]) -> int:
    """``ansible-playbook argv`` with per-process CPU records in ``$PROBE_SPLIT_OUT``."""
    import cProfile  # pylint: disable=import-outside-toplevel
    from ansible.cli.playbook import PlaybookCLI  # pylint: disable=import-outside-toplevel
    from ansible.executor.process import worker  # pylint: disable=import-outside-toplevel

    out = os.environ["PROBE_SPLIT_OUT"]
    profile = os.environ.get("PROBE_SPLIT_PROFILE") == "1"
    os.makedirs(out, exist_ok=True)
    main_profile = cProfile.Profile() if profile else None
    original = worker.WorkerProcess.run

    def run(self: Any) -> None:
        # A forked worker starts with fresh rusage; the parent's profiler is copied into it.
        if main_profile is not None:
            main_profile.disable()
        own = cProfile.Profile() if profile else None
        if own is not None:
            own.enable()
        try:
            original(self)
        finally:
            if own is not None:
                own.disable()
                own.dump_stats(os.path.join(out, "worker-%d.prof" % os.getpid()))
            _write(os.path.join(out, "worker-%d.json" % os.getpid()),
                   {"self": _cpu(resource.RUSAGE_SELF), "children": _cpu(resource.RUSAGE_CHILDREN)})

    worker.WorkerProcess.run = run
    code: Any = 0
    if main_profile is not None:
        main_profile.enable()
    try:
        PlaybookCLI.cli_executor(["ansible-playbook"] + argv)
    except SystemExit as exit_:
        code = exit_.code
    finally:
        if main_profile is not None:
            main_profile.disable()
            main_profile.dump_stats(os.path.join(out, "main.prof"))
        _write(os.path.join(out, "main.json"), {"self": _cpu(resource.RUSAGE_SELF)})
    return int(code or 0)


def split(out: str, total: float, hosts: int) -> Dict[str, float]:
    """Per-host milliseconds of one run from the records in ``out``."""
    with open(os.path.join(out, "main.json"), encoding="utf-8") as handle:
        main = json.load(handle)["self"]
    workers = []
    for path in glob.glob(os.path.join(out, "worker-*.json")):
        with open(path, encoding="utf-8") as handle:
            workers.append(json.load(handle))
    if len(workers) != hosts:
        raise RuntimeError("%d worker records for %d hosts in %s" % (len(workers), hosts, out))
    own = sum(entry["self"] for entry in workers)
    children = sum(entry["children"] for entry in workers)
    values = {"total": total, "main": main, "workers": own, "modules": children, "other": total - main - own - children}
    return {name: value * 1000 / hosts for name, value in values.items()}


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [WRAP]:
        return run_playbook(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hosts", type=int, default=30)
    parser.add_argument("--forks", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", help="write cProfile files of every process under this directory")
    parser.add_argument("--kubelet", choices=("real", "script"), default="real",
                        help="each node's /usr/bin/kubelet, whose release every probe reads or asks (as bench_fleet.py's --kubelet)")
    options = parser.parse_args(argv)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_fleet  # pylint: disable=import-outside-toplevel

    directory = tempfile.mkdtemp(prefix="probe-split-")
    records = options.profile or os.path.join(directory, "records")
    try:
        program, what = bench_fleet.kubelet_program(directory, options.kubelet)
        print("kubelet: %s" % what)
        roots = bench_fleet.build_hosts(directory, options.hosts, program)
        inventory = bench_fleet.write_inventory(os.path.join(directory, "hosts"), roots)
        playbooks = bench_fleet.write_playbooks(directory, "linear")
        env = bench_fleet.ansible_env(directory, bench_fleet.collections_dir(directory), options.forks, True)
        bench_fleet.warm_up(directory, playbooks, inventory, env, sorted(roots)[0])
        kinds = bench_fleet.KINDS
        rows: Dict[str, List[Dict[str, float]]] = {kind: [] for kind in kinds}
        for round_index in range(options.rounds):
            shift = round_index % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                out = os.path.join(records, "%s-%d" % (kind, round_index + 1))
                shutil.rmtree(out, ignore_errors=True)
                kind_env = dict(bench_fleet.kind_env(env, kind), PROBE_SPLIT_OUT=out, PROBE_SPLIT_PROFILE="1" if options.profile else "0")
                _wall, cpu, _text = bench_fleet.timed_run([sys.executable, os.path.abspath(__file__), WRAP, "-i", inventory,
                                                          playbooks[bench_fleet.PLAYBOOK_OF[kind]]], kind_env, directory)
                rows[kind].append(split(out, cpu, options.hosts))
        print("CPU ms per host: %d hosts, forks %d, medians of %d rounds" % (options.hosts, options.forks, options.rounds))
        for kind in kinds:
            medians = {name: statistics.median(row[name] for row in rows[kind]) for name in rows[kind][0]}
            print("%-10s " % kind + "  ".join("%s %6.1f" % (name, value) for name, value in medians.items()))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
