# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the probe costs per host across a fleet, against Ansible's own floor (a do-nothing module).

    .venv/bin/python benchmarks/bench_fleet.py [--hosts 60,150] [--forks 2,8] [--rounds 3]
        [--strategy linear|free] [--no-pipelining] [--skip-role] [--skip-payload] [--json FILE]
        [--max-ratio WARM,COLD] [--kubelet real|script] [--quick]

1. Builds fake node trees (the unit tests' builders: a KASLR drift, 4 Guaranteed pods) and, for
   each ``--hosts`` count, an inventory of as many local hosts (local connection, pipelining on
   by default).
2. For each host count and each ``--forks`` value, each round runs ``ansible-playbook`` three
   times back to back on every host: one task of ``ansible.builtin.ping`` (``noop``, the
   do-nothing module: Ansible's floor per host), one task of ``nodeops.numa_drift.numa_drift_facts``
   as it runs after a first run (``probe``, warm: the controller's bytecode of the collection
   written; one untimed run writes it) and the same as the first run after installing or upgrading
   the collection (``probe_cold``: a copy of the collection without ``__pycache__`` and
   ``PYTHONDONTWRITEBYTECODE=1`` for the whole run, controller and node, so the controller compiles
   the action plugin and the engine in every run); the order rotates between rounds. Wall time
   comes from the clock, CPU time (user + sys of ansible-playbook and every process it waited for:
   workers, module processes) from ``os.wait4``. Per-host figures are run totals / hosts (medians
   over rounds); the ratios are probe / noop. The 1,000-host cost is CPU per host x 1,000 spread
   over the machine's cores.
3. Payload and round trips: each kind once more on one host, with the timed runs' connection and
   pipelining setting, under an interpreter (``ansible_python_interpreter``, set for that run: no
   discovery) that records every start on the node and what it received (standard input with
   pipelining: ping's AnsiballZ, the probe's reader program; a transferred file without), and the
   files each AnsiballZ zip carries. One start is one module run, so one round trip.
4. The remediate role on the sandbox fleet (tests/sandbox/fleet.py, mixed scenario): a callback
   counts the task starts and times them on a repaired node (drift_within_bound) and on
   nothing-to-do nodes (in_sync, no_checkpoint). ``--skip-role`` leaves this out.

Prints a table and, with ``--json``, writes every figure. ``--max-ratio WARM,COLD`` makes the run
fail (exit 1) when a CPU ratio of any configuration is above the bound, or when a probe run sent
more than one module. ``tests/integration/test_bench_fleet.py`` runs a small configuration (60
hosts, forks 2, one round) with a bound; the full matrix is a manual run whose figures are in
docs/fleet-scale.md.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, CHECKOUT)
# conftest puts the collection on sys.path.
import conftest  # noqa: E402,F401  pylint: disable=unused-import,wrong-import-position

from ansible_collections.nodeops.numa_drift.tests.support import scenario  # noqa: E402

VENV_BIN = os.path.dirname(sys.executable)
MODULES = {"noop": "ansible.builtin.ping", "probe": "nodeops.numa_drift.numa_drift_facts"}
# The probe twice: warm (the controller's bytecode written by an untimed run) and cold (the collection as just installed:
# a copy without __pycache__ and PYTHONDONTWRITEBYTECODE=1 for the whole run).
KINDS = ("noop", "probe", "probe_cold")
PLAYBOOK_OF = {"noop": "noop", "probe": "probe", "probe_cold": "probe"}
RATIO_OF = {"probe": "ratio", "probe_cold": "ratio_cold"}
KASLR_KB = 45260
FLEET_HOSTS = 1000

# Counts every task start per host and times each host's first start to its last result.
CALLBACK = '''
from __future__ import annotations
import json, os, time
from ansible.plugins.callback import CallbackBase

class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fleetbench_tasks"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.hosts = {}

    def _host(self, host):
        return self.hosts.setdefault(host.get_name(), {"started": 0, "ok": 0, "changed": 0, "skipped": 0, "failed": 0,
                                                      "first": None, "last": None, "tasks": []})

    def v2_runner_on_start(self, host, task):
        entry = self._host(host)
        entry["started"] += 1
        entry["tasks"].append(task.get_name())
        now = time.time()
        entry["first"] = entry["first"] or now
        entry["last"] = now

    def _done(self, result, kind):
        entry = self._host(result._host)
        entry[kind] += 1
        if kind == "ok" and result._result.get("changed"):
            entry["changed"] += 1
        entry["last"] = time.time()

    def v2_runner_on_ok(self, result):
        self._done(result, "ok")

    def v2_runner_on_skipped(self, result):
        self._done(result, "skipped")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._done(result, "failed")

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["FLEETBENCH_TASKS_FILE"], "w", encoding="utf-8") as handle:
            json.dump(self.hosts, handle)
'''


KUBELET_VERSION = "v1.34.4"


def kubelet_program(directory: str, wanted: str) -> Tuple[str, str]:
    """``(host path, what it is)`` of the kubelet each node tree holds at /usr/bin/kubelet, whose release every probe
    needs: the real, version-stamped binary the guests run when it is built (``real``, the default: the probe reads
    the release stamped in it), else a script that says the same (``script``: no stamped release to read, so every
    probe runs it; a script starts faster than kubelet would)."""
    from ansible_collections.nodeops.numa_drift.tests.support.programs import said, version_script  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.tests.vm import kubelet_disk  # pylint: disable=import-outside-toplevel

    binary = kubelet_disk.kubelet_path(KUBELET_VERSION)
    target = os.path.join(directory, "kubelet")
    if wanted == "real" and os.access(binary, os.X_OK):
        shutil.copy2(binary, target)  # beside the trees: each holds a hard link to it
        return target, "the real kubelet %s (%s)" % (KUBELET_VERSION, binary)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(version_script(said("kubelet", KUBELET_VERSION)))
    os.chmod(target, 0o755)
    why = "" if wanted == "script" else " (the real one is not built: python3 tests/vm/kubelet_disk.py builds it)"
    return target, "a script saying Kubernetes %s%s" % (KUBELET_VERSION, why)


def build_hosts(directory: str, count: int, program: str, drifted: bool = True) -> Dict[str, str]:
    """``count`` node trees: a kernel image moved by KASLR between two 64 GiB NUMA nodes (``drifted``; else the same
    boot, in sync), 4 pods, kubeadm's files without a unit and ``program`` as /usr/bin/kubelet (the probe reads or asks its release)."""
    roots = {}
    before = scenario.two_node_boot()
    after = before.moved(node0=-KASLR_KB, node1=KASLR_KB) if drifted else before
    pods = scenario.guaranteed_pods(4, (0,))
    for index in range(count):
        name = "bench-node-%04d" % (index + 1)
        roots[name] = scenario.write_kubelet_node(os.path.join(directory, "nodes", name), before, after, pods=pods)
        os.makedirs(os.path.join(roots[name], "usr", "bin"))
        os.link(program, os.path.join(roots[name], "usr", "bin", "kubelet"))
    return roots


def write_inventory(directory: str, roots: Dict[str, str]) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "inventory.json")
    hosts = {name: {"numa_root": root} for name, root in roots.items()}
    document = {"all": {"hosts": hosts, "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    return path


def write_playbooks(directory: str, strategy: str) -> Dict[str, str]:
    playbooks = {}
    for kind, module in MODULES.items():
        args = "{root: '{{ numa_root }}'}" if kind == "probe" else "{}"
        path = os.path.join(directory, "%s.yml" % kind)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("- hosts: all\n  gather_facts: false\n  strategy: %s\n  tasks:\n    - %s: %s\n" % (strategy, module, args))
        playbooks[kind] = path
    return playbooks


def collections_dir(directory: str) -> str:
    link = os.path.join(directory, "collections", "ansible_collections", "nodeops", "numa_drift")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(CHECKOUT, link)
    return os.path.join(directory, "collections")


def ansible_env(directory: str, collections: str, forks: int, pipelining: bool, **extra: str) -> Dict[str, str]:
    # PYTHONDONTWRITEBYTECODE is what probe_cold sets (kind_env): the other kinds run without it, as most nodes do.
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("ANSIBLE_") and name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    config = os.path.join(directory, "ansible.cfg")
    if not os.path.exists(config):
        with open(config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\n")
    env.update(
        ANSIBLE_CONFIG=config,
        ANSIBLE_COLLECTIONS_PATH=collections,
        ANSIBLE_HOME=os.path.join(directory, "ansible-home"),
        ANSIBLE_LOCAL_TEMP=os.path.join(directory, "ansible-local-tmp"),
        ANSIBLE_REMOTE_TEMP=os.path.join(directory, "ansible-remote-tmp"),
        ANSIBLE_FORKS=str(forks),
        ANSIBLE_PIPELINING="true" if pipelining else "false",
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_RETRY_FILES_ENABLED="false",
        ANSIBLE_DEPRECATION_WARNINGS="false",
        ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal",
        PATH=VENV_BIN + os.pathsep + env.get("PATH", ""),
    )
    env.update(extra)
    return env


def timed_run(command: List[str], env: Dict[str, str], cwd: str) -> Tuple[float, float, str]:
    """(wall seconds, CPU seconds of the whole process tree that was waited for, output)."""
    output_path = os.path.join(cwd, "last-run.log")
    with open(output_path, "w", encoding="utf-8") as output:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=output, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
        _pid, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    with open(output_path, encoding="utf-8") as handle:
        text = handle.read()
    if process.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(command), process.returncode, text[-4000:]))
    return wall, usage.ru_utime + usage.ru_stime, text


def kind_env(env: Dict[str, str], kind: str) -> Dict[str, str]:
    """The environment of one kind of run: ``probe_cold`` finds none of the collection's bytecode and writes none."""
    if kind != "probe_cold":
        return env
    return dict(env, PYTHONDONTWRITEBYTECODE="1", ANSIBLE_COLLECTIONS_PATH=uncompiled_collection(os.path.dirname(env["ANSIBLE_HOME"])))


def uncompiled_collection(directory: str) -> str:
    """A copy of the collection's plugins and metadata without ``__pycache__`` (as just installed), made once per run."""
    collections = os.path.join(directory, "cold-collections")
    copy = os.path.join(collections, "ansible_collections", "nodeops", "numa_drift")
    if not os.path.isdir(copy):
        for name in ("plugins", "meta", "roles", "playbooks"):
            shutil.copytree(os.path.join(CHECKOUT, name), os.path.join(copy, name), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(os.path.join(CHECKOUT, "galaxy.yml"), copy)
    return collections


def warm_up(directory: str, playbooks: Dict[str, str], inventory: str, env: Dict[str, str], host: str) -> None:
    """One untimed probe on one host: the controller's bytecode of the collection written, as after any first run."""
    timed_run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", inventory, "-l", host, playbooks["probe"]], env, directory)


def module_rounds(directory: str, playbooks: Dict[str, str], inventory: str, env: Dict[str, str], hosts: int, rounds: int) -> Dict[str, Any]:
    samples: Dict[str, List[Tuple[float, float]]] = {kind: [] for kind in KINDS}
    for round_index in range(rounds):
        shift = round_index % len(KINDS)
        for kind in KINDS[shift:] + KINDS[:shift]:
            wall, cpu, text = timed_run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", inventory, playbooks[PLAYBOOK_OF[kind]]],
                                        kind_env(env, kind), directory)
            succeeded = len(re.findall(r"\| (?:SUCCESS|CHANGED) ", text))
            if succeeded != hosts:
                raise RuntimeError("%s: %d of %d hosts succeeded:\n%s" % (kind, succeeded, hosts, text[-4000:]))
            samples[kind].append((wall, cpu))
            print("  round %d %-10s wall %7.2f s  cpu %7.2f s" % (round_index + 1, kind, wall, cpu), flush=True)
    result: Dict[str, Any] = {}
    for kind, values in samples.items():
        walls = [wall for wall, _cpu in values]
        cpus = [cpu for _wall, cpu in values]
        result[kind] = {
            "wall_s": [round(value, 3) for value in walls],
            "cpu_s": [round(value, 3) for value in cpus],
            "wall_ms_per_host": round(statistics.median(walls) * 1000 / hosts, 1),
            "cpu_ms_per_host": round(statistics.median(cpus) * 1000 / hosts, 1),
        }
    for kind, key in RATIO_OF.items():
        result[key] = {
            "wall": round(result[kind]["wall_ms_per_host"] / result["noop"]["wall_ms_per_host"], 3),
            "cpu": round(result[kind]["cpu_ms_per_host"] / result["noop"]["cpu_ms_per_host"], 3),
        }
    cores = os.cpu_count() or 1
    # CPU per host x 1,000 hosts, spread over every core of this machine (controller and nodes share them here).
    result["fleet_%d" % FLEET_HOSTS] = {
        kind: {"cpu_s": round(result[kind]["cpu_ms_per_host"] * FLEET_HOSTS / 1000, 1),
               "minutes_on_%d_cores" % cores: round(result[kind]["cpu_ms_per_host"] * FLEET_HOSTS / 1000 / cores / 60, 1)}
        for kind in KINDS
    }
    return result


# The interpreter the payload runs use (ansible_python_interpreter): it records what each start received, its standard input
# (a pipelined module, the probe's reader program) or the script it was given (a transferred AnsiballZ file), then runs as
# the real interpreter with the same input.
RECORDING_INTERPRETER = """#!{python}
import json, os, sys, tempfile
data = sys.stdin.buffer.read()
script = sys.argv[1] if len(sys.argv) > 1 and os.path.isfile(sys.argv[1]) else None
if script:
    with open(script, "rb") as handle:
        sent = handle.read()
else:
    sent = data
record = os.path.join(os.environ["FLEETBENCH_SENT_DIR"], "%d" % os.getpid())
with open(record + ".payload", "wb") as handle:
    handle.write(sent)
with open(record + ".json", "w") as handle:
    json.dump({{"stdin_bytes": len(data), "script_bytes": len(sent) if script else 0}}, handle)
with tempfile.TemporaryFile() as handle:
    handle.write(data)
    handle.seek(0)
    os.dup2(handle.fileno(), 0)
os.execv({python!r}, [{python!r}] + sys.argv[1:])
"""


def payload_contents(text: str) -> Dict[str, int]:
    """The files an AnsiballZ wrapper carries, with their sizes (its zip is base64 in ZIPDATA); {} for anything else."""
    found = re.search(r"^zip_data\s*=\s*[rb]?['\"]([A-Za-z0-9+/=]+)['\"]", text, re.MULTILINE)
    if not found:
        return {}
    archive = zipfile.ZipFile(io.BytesIO(base64.b64decode(found.group(1))))  # pylint: disable=consider-using-with
    return {info.filename: info.file_size for info in archive.infolist()}


def recorded_starts(sent_dir: str) -> List[Dict[str, Any]]:
    """Every interpreter start on the node, in order: what it received (bytes on standard input or in its script)."""
    starts = []
    for name in sorted(os.listdir(sent_dir), key=lambda name: os.path.getmtime(os.path.join(sent_dir, name))):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(sent_dir, name), encoding="utf-8") as handle:
            record = json.load(handle)
        with open(os.path.join(sent_dir, name[:-len(".json")] + ".payload"), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        contents = payload_contents(text)
        module = re.search(r"^ansible_module\s*=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
        starts.append({
            "what": ("AnsiballZ %s" % module.group(1).rsplit(".", 1)[-1]) if contents and module else "program",
            "bytes": record["stdin_bytes"] + record["script_bytes"],
            "on_stdin": record["stdin_bytes"] > 0,
            "zip_files": len(contents),
            "zip_uncompressed_bytes": sum(contents.values()),
            "collection_files": {name: size for name, size in sorted(contents.items()) if name.startswith("ansible_collections/") and size},
        })
    return starts


def payloads(directory: str, playbooks: Dict[str, str], inventory: str, collections: str, pipelining: bool) -> Dict[str, Any]:
    """Run each kind once more on one host (the timed runs' connection and pipelining), under an interpreter that records
    every start on the node.

    One interpreter start is one module run, so one round trip: the probe starts one. ``bytes`` is what it received (on
    standard input with pipelining, as a transferred file without).
    """
    result: Dict[str, Any] = {}
    interpreter = os.path.join(directory, "recording-python")
    with open(interpreter, "w", encoding="utf-8") as handle:
        handle.write(RECORDING_INTERPRETER.format(python=sys.executable))
    os.chmod(interpreter, 0o755)
    for kind in KINDS:
        sent_dir = os.path.join(directory, "sent-%s" % kind)
        os.makedirs(sent_dir)
        env = kind_env(ansible_env(directory, collections, 1, pipelining, FLEETBENCH_SENT_DIR=sent_dir), kind)
        timed_run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", inventory, "-l", "bench-node-0001", "-e",
                   "ansible_python_interpreter=%s" % interpreter, playbooks[PLAYBOOK_OF[kind]]], env, directory)
        starts = recorded_starts(sent_dir)
        if not starts:
            raise RuntimeError("no interpreter start recorded in %s" % sent_dir)
        result[kind] = {"module": MODULES[PLAYBOOK_OF[kind]], "sent": starts, "module_runs": len(starts),
                        "bytes": sum(start["bytes"] for start in starts)}
    result["difference_bytes"] = result["probe"]["bytes"] - result["noop"]["bytes"]
    result["difference_cold_bytes"] = result["probe_cold"]["bytes"] - result["noop"]["bytes"]
    return result


def role_tasks(directory: str, collections: str, fleet_args: Sequence[str] = ()) -> Dict[str, Any]:
    """Task starts and time of the remediate role per node on the sandbox fleet (mixed scenario; ``fleet_args``: more
    arguments of ``fleet.py up``, such as a real API server's)."""
    fleet_dir = os.path.join(directory, "fleet")
    python = sys.executable
    fleet_script = os.path.join(CHECKOUT, "tests", "sandbox", "fleet.py")
    subprocess.run([python, fleet_script, "up", "--dir", fleet_dir, "--scenario", "mixed", "--settle-seconds", "1",
                    "--max-lifetime", "900"] + list(fleet_args), check=True, stdout=subprocess.DEVNULL, timeout=180)
    try:
        callbacks = os.path.join(directory, "callbacks")
        os.makedirs(callbacks, exist_ok=True)
        with open(os.path.join(callbacks, "fleetbench_tasks.py"), "w", encoding="utf-8") as handle:
            handle.write(CALLBACK)
        playbook = os.path.join(directory, "role.yml")
        with open(playbook, "w", encoding="utf-8") as handle:
            handle.write("- hosts: all\n  gather_facts: false\n  tasks:\n"
                         "    - ansible.builtin.include_role:\n        name: nodeops.numa_drift.remediate\n")
        cases = {"repaired": "sbx-node-01", "in_sync": "sbx-node-04", "no_checkpoint": "sbx-node-05"}
        result = {}
        for case, host in cases.items():
            tasks_file = os.path.join(directory, "tasks-%s.json" % case)
            env = ansible_env(directory, os.path.join(fleet_dir, "collections"), 4, True,
                              ANSIBLE_CALLBACK_PLUGINS=callbacks, ANSIBLE_CALLBACKS_ENABLED="fleetbench_tasks",
                              FLEETBENCH_TASKS_FILE=tasks_file)
            wall, cpu, _text = timed_run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", os.path.join(fleet_dir, "inventory.yml"),
                                          "-l", host, playbook], env, directory)
            with open(tasks_file, encoding="utf-8") as handle:
                entry = json.load(handle)[host]
            result[case] = {
                "host": host, "task_starts": entry["started"], "ok": entry["ok"], "changed": entry["changed"],
                "skipped": entry["skipped"], "failed": entry["failed"],
                "role_seconds": round(entry["last"] - entry["first"], 2), "playbook_wall_s": round(wall, 2), "playbook_cpu_s": round(cpu, 2),
            }
        return result
    finally:
        subprocess.run([python, fleet_script, "down", "--dir", fleet_dir], check=False, stdout=subprocess.DEVNULL, timeout=120)


def report(results: Dict[str, Any]) -> List[str]:
    settings = results["settings"]
    lines = []
    for config in results["configurations"]:
        modules = config["modules"]
        lines += [
            "fleet benchmark: %d hosts, forks %d, %d rounds, strategy %s, pipelining %s, %d cores" % (
                config["hosts"], config["forks"], settings["rounds"], settings["strategy"], settings["pipelining"], settings["cpus"]),
            "%-10s %14s %14s %18s" % ("module", "wall ms/host", "cpu ms/host", "1,000 hosts (CPU)"),
        ]
        fleet = modules["fleet_%d" % FLEET_HOSTS]
        for kind in KINDS:
            minutes = fleet[kind]["minutes_on_%d_cores" % settings["cpus"]]
            lines.append("%-10s %14.1f %14.1f %12.1f min" % (kind, modules[kind]["wall_ms_per_host"], modules[kind]["cpu_ms_per_host"], minutes))
        lines.append("ratio probe/noop (warm): wall %.3f, cpu %.3f" % (modules["ratio"]["wall"], modules["ratio"]["cpu"]))
        lines.append("ratio probe_cold/noop (the collection as just installed): wall %.3f, cpu %.3f" % (
            modules["ratio_cold"]["wall"], modules["ratio_cold"]["cpu"]))
    lines.append("summary (cpu ratios): " + "; ".join("%d hosts forks %d: warm %.3f, cold %.3f" % (
        config["hosts"], config["forks"], config["modules"]["ratio"]["cpu"], config["modules"]["ratio_cold"]["cpu"])
        for config in results["configurations"]))
    payload = results.get("payload")
    if payload:
        for kind in KINDS:
            sent = ", ".join("%s %d bytes %s%s" % (
                entry["what"], entry["bytes"], "on stdin" if entry["on_stdin"] else "in a file",
                " (zip: %d files, %d bytes uncompressed)" % (entry["zip_files"], entry["zip_uncompressed_bytes"]) if entry["zip_files"] else "")
                for entry in payload[kind]["sent"])
            lines.append("payload %-10s %d bytes sent in %d interpreter start(s): %s" % (kind, payload[kind]["bytes"], payload[kind]["module_runs"], sent))
        lines.append("payload difference: %d bytes (cold: %d bytes)" % (payload["difference_bytes"], payload["difference_cold_bytes"]))
    for case, entry in (results.get("role") or {}).items():
        lines.append("role %-13s %-12s %3d task starts (%d ok, %d changed, %d skipped, %d failed), role %.2f s, playbook %.2f s wall" % (
            case, entry["host"], entry["task_starts"], entry["ok"], entry["changed"], entry["skipped"], entry["failed"],
            entry["role_seconds"], entry["playbook_wall_s"]))
    return lines


def problems(results: Dict[str, Any], max_ratio: Optional[Tuple[float, float]]) -> List[str]:
    """What exceeds ``--max-ratio`` (CPU, warm and cold), and any probe run that sent more than one module."""
    found = []
    if max_ratio:
        for config in results["configurations"]:
            for key, bound in zip(("ratio", "ratio_cold"), max_ratio):
                value = config["modules"][key]["cpu"]
                if value > bound:
                    found.append("%d hosts forks %d: cpu %s %.3f is above %.2f" % (config["hosts"], config["forks"], key, value, bound))
    for kind in ("probe", "probe_cold"):
        runs = (results.get("payload") or {}).get(kind, {}).get("module_runs")
        if runs is not None and runs != 1:
            found.append("%s sent %d modules to one host (one round trip expected)" % (kind, runs))
    return found


def conclude(results: Dict[str, Any], lines: List[str], found: List[str], json_path: Optional[str]) -> List[str]:
    """Print the table and the problems, keep them in ``results``, write every figure to ``json_path``; the problems."""
    for line in lines:
        print(line)
    results["problems"] = found
    for problem in found:
        print("PROBLEM: " + problem)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2, sort_keys=True)
    return found


def int_list(text: str) -> List[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive integers: %r" % text)
    return values


def ratio_pair(text: str) -> Tuple[float, float]:
    parts = [float(part) for part in text.split(",")]
    if len(parts) != 2:
        raise argparse.ArgumentTypeError("WARM,COLD: %r" % text)
    return parts[0], parts[1]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--hosts", type=int_list, default=[60, 150], help="host counts, comma-separated (default 60,150)")
    parser.add_argument("--forks", type=int_list, default=[2, 8], help="forks values, comma-separated (default 2,8)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--strategy", choices=("linear", "free"), default="linear")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false")
    parser.add_argument("--skip-role", action="store_true", help="leave out the remediate role on the sandbox fleet")
    parser.add_argument("--skip-payload", action="store_true")
    parser.add_argument("--fleet-args", default="", help="more arguments of tests/sandbox/fleet.py up for the role's fleet, e.g. "
                        "'--api-server URL --api-ca CA --token ADMIN --kubeconfig FILE' (a real API server instead of the stand-in)")
    parser.add_argument("--max-ratio", type=ratio_pair, metavar="WARM,COLD", help="fail when a CPU ratio is above these bounds")
    parser.add_argument("--kubelet", choices=("real", "script"), default="real",
                        help="what each node's /usr/bin/kubelet is, whose release every probe reads (or asks): the real binary the guests run "
                        "(when built; else a script) or a script (default real)")
    parser.add_argument("--quick", action="store_true", help="a smoke test: 5 hosts, forks 2, 1 round")
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    options = parser.parse_args(argv)
    if options.quick:
        options.hosts, options.forks, options.rounds = [5], [2], 1
    directory = tempfile.mkdtemp(prefix="bench-fleet-")
    found: List[str] = []
    try:
        started = time.time()
        program, program_text = kubelet_program(directory, options.kubelet)
        roots = build_hosts(directory, max(options.hosts), program)
        names = sorted(roots)
        inventories = {count: write_inventory(os.path.join(directory, "hosts-%d" % count), {name: roots[name] for name in names[:count]})
                       for count in options.hosts}
        playbooks = write_playbooks(directory, options.strategy)
        collections = collections_dir(directory)
        print("built %d node trees in %.1f s; each node's kubelet: %s" % (len(roots), time.time() - started, program_text), flush=True)
        results: Dict[str, Any] = {
            "settings": {"hosts": options.hosts, "forks": options.forks, "rounds": options.rounds, "strategy": options.strategy,
                         "pipelining": options.pipelining, "cpus": os.cpu_count() or 1, "python": sys.version.split()[0],
                         "kubelet": program_text},
            "configurations": [],
        }
        for count in options.hosts:
            for forks in options.forks:
                print("%d hosts, forks %d" % (count, forks), flush=True)
                env = ansible_env(directory, collections, forks, options.pipelining)
                warm_up(directory, playbooks, inventories[count], env, names[0])
                modules = module_rounds(directory, playbooks, inventories[count], env, count, options.rounds)
                results["configurations"].append({"hosts": count, "forks": forks, "modules": modules})
        if not options.skip_payload:
            results["payload"] = payloads(directory, playbooks, inventories[min(options.hosts)], collections, options.pipelining)
        if not options.skip_role:
            results["role"] = role_tasks(directory, collections, shlex.split(options.fleet_args))
        found = conclude(results, report(results), problems(results, options.max_ratio), options.json)
    finally:
        if options.keep:
            print("kept %s" % directory)
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
