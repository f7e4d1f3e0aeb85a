# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the kubelet judge (kubelet's own start-up code, see build.py) on a node tree.

``judge(binary, tree)`` runs one release's judge with the command line kubelet has on that node
(found as the engine finds it: the unit, its drop-ins and env files, or kubeadm's default
``--config=<root dir>/config.yaml``), its path flags moved under the tree; the judge works on a
scratch copy of the checkpoint, so the tree is never written. ``expectation(verdict)`` says what
kubelet must do with a file our probe gave ``verdict``. ``judge_cpu(binary, tree)`` runs the judge's
``--manager=cpu`` mode: kubelet's CPU manager start on a scratch copy of ``cpu_manager_state``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.distributions import discover_kubelet
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO

REPAIRABLE = "drift_within_bound"
PATH_FLAGS = ("config", "config-dir", "root-dir")
DEFAULT_ROOT_DIR = "/var/lib/kubelet"


@dataclass(frozen=True)
class Judgement:
    """One release's answer: did kubelet's own code start, and if not where and why."""

    release: str
    started: bool
    stage: str
    error: str = ""
    state: Optional[Dict[str, Any]] = None
    args: Sequence[str] = field(default_factory=tuple)

    def brief(self) -> str:
        return "starts" if self.started else "refuses at %s: %s" % (self.stage, self.error)


def _flag(arg: str) -> Optional[str]:
    if not arg.startswith("--"):
        return None
    return arg[2:].split("=", 1)[0].replace("_", "-")


def flag_value(args: Sequence[str], name: str) -> Optional[str]:
    """The last value of ``--name=v`` or ``--name v`` in ``args`` (pflag: the last one wins)."""
    value = None
    for index, arg in enumerate(args):
        if _flag(arg) == name:
            if "=" in arg:
                value = arg.split("=", 1)[1]
            elif index + 1 < len(args):
                value = args[index + 1]
    return value


def rebase_args(tree: str, args: Sequence[str]) -> List[str]:
    """kubelet's argv with the values of --config/--config-dir/--root-dir moved under ``tree``."""
    out: List[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        name = _flag(arg)
        if name in PATH_FLAGS:
            if "=" in arg:
                value = arg.split("=", 1)[1]
                out.append("--%s=%s" % (name, os.path.join(tree, value.lstrip("/")) if value.startswith("/") else value))
            elif index + 1 < len(args):
                value = args[index + 1]
                out.append("--%s=%s" % (name, os.path.join(tree, value.lstrip("/")) if value.startswith("/") else value))
                index += 1
            else:
                out.append(arg)
        else:
            out.append(arg)
        index += 1
    return out


def kubelet_args(tree: str, flags: Optional[Sequence[str]] = None) -> List[str]:
    """The command line kubelet runs with on the node under ``tree``, rebased under it."""
    if flags is None:
        launch = discover_kubelet(HostFiles(tree))
        args = [arg.value for arg in launch.args]
    else:
        args = list(flags)
    names = {_flag(arg) for arg in args}
    if "root-dir" not in names:
        args.append("--root-dir=" + DEFAULT_ROOT_DIR)
    root_dir = flag_value(args, "root-dir") or DEFAULT_ROOT_DIR
    default_config = os.path.join(root_dir, "config.yaml")
    # kubeadm's layout without a unit: kubelet runs with --config=<root dir>/config.yaml.
    if "config" not in names and "config-dir" not in names and os.path.isfile(os.path.join(tree, default_config.lstrip("/"))):
        args.append("--config=" + default_config)
    return rebase_args(tree, args)


def materialize_redirects(tree: str, scratch: str) -> str:
    """A copy of ``tree`` with the files a wrapper copies into kubelet's drop-in dir at its start
    (k3s/RKE2 ``kubelet-arg: config=...``: the engine's ``dropin_redirects``) put in place; ``tree``
    itself when there are none."""
    redirects = discover_kubelet(HostFiles(tree)).dropin_redirects
    if not redirects:
        return tree
    copy = os.path.join(scratch, "tree")
    shutil.copytree(tree, copy, symlinks=True)
    for shown, source in redirects:
        target = os.path.join(copy, shown.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(copy, source.lstrip("/")), target)
    return copy


def judge(binary: str, tree: str, flags: Optional[Sequence[str]] = None, timeout: float = 120, written: str = "",
          admit: str = "") -> Judgement:
    """``written``: a path where the judge copies the checkpoint kubelet's state package holds at the end;
    ``admit``: a JSON file of v1.Pod objects the memory manager admits after Start (``Allocate``)."""
    if flags is None:
        with tempfile.TemporaryDirectory(prefix="kubelet-judge-tree-") as scratch:
            return _judge(binary, materialize_redirects(tree, scratch), flags, timeout, written, admit)
    return _judge(binary, tree, flags, timeout, written, admit)


def _judge(binary: str, tree: str, flags: Optional[Sequence[str]], timeout: float, written: str, admit: str) -> Judgement:
    args = kubelet_args(tree, flags)
    own = ["--tree=" + tree] + (["--written-checkpoint=" + written] if written else []) + (["--admit-pods=" + admit] if admit else [])
    proc = subprocess.run([binary] + own + args, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError("kubelet judge %s failed (exit %d): %s%s" % (binary, proc.returncode, proc.stdout, proc.stderr[-2000:]))
    data = json.loads(lines[-1])
    return Judgement(data["release"], data["started"], data["stage"], data.get("error", ""), data.get("state"), tuple(args))


def expectation(verdict: str) -> str:
    """``start`` for nothing-to-do verdicts, ``refuse`` for every other (repairable too, before repair)."""
    return "start" if verdict in NOTHING_TO_DO else "refuse"


def agrees(verdict: str, judgements: Sequence[Judgement]) -> bool:
    """Our verdict against kubelet at every release (as the file is, before any repair).

    Where the releases disagree among themselves, the only safe answer is to leave the file and
    not call it fine: a refusing verdict other than ``drift_within_bound``.
    """
    outcomes = {j.started for j in judgements}
    if len(outcomes) > 1:
        return verdict not in NOTHING_TO_DO and verdict != REPAIRABLE
    started = outcomes.pop()
    return started == (expectation(verdict) == "start")


def describe(judgements: Sequence[Judgement]) -> str:
    return "; ".join("%s %s" % (j.release, j.brief()) for j in judgements)


# --- The CPU manager (--manager=cpu) ------------------------------------------------------------


@dataclass(frozen=True)
class CpuJudgement:
    """One release's answer for the CPU manager: kubelet's construction and Start on the tree.

    ``stage``: ``started``, or where kubelet refused: ``config`` (its configuration), ``construct``
    (cmd/kubelet/app.run's getReservedCPUs or NewContainerManager: reservations, topology manager,
    cpumanager.NewManager), ``restore`` (Start: the state package refuses the checkpoint), ``validate``
    (Start: the policy's validateState refuses it); ``machine`` when the judge cannot read the tree.
    ``error``: kubelet's error text. ``online``: the CPUs of the topology kubelet discovered;
    ``reserved``: the CPUs the static policy reserves there (NewStaticPolicy + GetAllocatableCPUs);
    ``before`` / ``after``: the checkpoint before and after Start (``None``: no file).
    """

    release: str
    started: bool
    stage: str
    error: str = ""
    online: str = ""
    reserved: str = ""
    reserved_error: str = ""
    before: Optional[bytes] = None
    after: Optional[bytes] = None
    machine: Any = None
    args: Sequence[str] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def brief(self) -> str:
        if self.started:
            return "starts" + (" (file rewritten)" if self.changed else "")
        return "refuses at %s: %s" % (self.stage, self.error)


def judge_cpu(binary: str, tree: str, flags: Optional[Sequence[str]] = None, timeout: float = 120) -> CpuJudgement:
    """Kubelet's CPU manager start on ``tree`` (a scratch copy of ``<root dir>/cpu_manager_state``)."""
    args = kubelet_args(tree, flags)
    proc = subprocess.run([binary, "--tree=" + tree, "--manager=cpu"] + args, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError("kubelet judge %s failed (exit %d): %s%s" % (binary, proc.returncode, proc.stdout, proc.stderr[-2000:]))
    data = json.loads(lines[-1])
    state = data.get("state") or {}

    def raw(key: str) -> Optional[bytes]:
        value = state.get(key)
        return None if value is None else value.encode("utf-8")

    # The judge names the checkpoint by the tree's path; said here as on the node.
    error = data.get("error", "").replace(os.path.abspath(tree).rstrip("/") + "/", "/")
    return CpuJudgement(
        data["release"], data["started"], data["stage"], error, state.get("online", ""), state.get("reserved", ""),
        state.get("reserved_error", ""), raw("before"), raw("after"), state.get("machine"), tuple(args),
    )
