# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node tree judged by the probe and by kubelet's own code at every release.

``judge_tree`` probes the tree, runs every release's judge on it, records the outcome in the
matrix, and for ``drift_within_bound`` repairs a copy of the tree with ``kubelet_mm_checkpoint``'s
write path and judges the repaired file. It returns the disagreements as text (empty = agree).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, Dict, List, Mapping

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, matrix
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import REPAIRABLE, Judgement, agrees, describe, judge
from ansible_collections.nodeops.numa_drift.tests.support.scenario import tree_snapshot

NOTES_ENV = "NUMA_DRIFT_JUDGE_NOTES"  # a Markdown file each disagreement is appended to (optional)


def _normal(value: Any) -> Any:
    """JSON with empty containers and null made equal (Go's nil slice/map vs an empty one)."""
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items() if item not in (None, [], {})}
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def written_state(content: bytes) -> Dict[str, Any]:
    """machineState and entries of a file we wrote, from the part kubelet reads (V3 data first)."""
    document = json.loads(content)
    part = json.loads(document["data"]) if isinstance(document.get("data"), str) else document
    return _normal({"machineState": part.get("machineState"), "entries": part.get("entries")})


def held_state(judgement: Judgement) -> Dict[str, Any]:
    return _normal(judgement.state or {})


def note(text: str) -> None:
    path = os.environ.get(NOTES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text.rstrip() + "\n\n")


# Stages before kubelet reads the checkpoint: a refusal there holds whatever the file says.
CONFIGURATION_STAGES = ("config", "validate", "reserved", "machine", "new_manager")
# Our verdicts for a configuration kubelet cannot start with, whatever the checkpoint holds.
CONFIG_REJECTED = "kubelet_config_rejected"
CONFIGURATION_VERDICTS = ("kubelet_config_unknown", CONFIG_REJECTED)


def outcome(judgement: Judgement) -> str:
    if judgement.started:
        return "starts"
    return "refuses (configuration)" if judgement.stage in CONFIGURATION_STAGES else "refuses (checkpoint)"


def judge_all(judges: Mapping[str, str], root: str) -> List[Judgement]:
    return [judge(judges[release], root) for release in build.RELEASES if release in judges]


def judge_tree(judges: Mapping[str, str], corpus: str, name: str, root: str, scratch: str, bound: str = "auto",
               describe_tree: str = "") -> List[str]:
    before_files = tree_snapshot(root)
    result = _probe.probe(HostFiles(root), drift_bound=bound)
    verdict = result.assessment.verdict
    before = judge_all(judges, root)
    problems: List[str] = []
    if tree_snapshot(root) != before_files:
        problems.append("the judge changed the tree")
    agreed = agrees(verdict, before)
    if not agreed:
        problems.append("as found: our verdict %s; kubelet: %s" % (verdict, describe(before)))
    elif all(outcome(j) == "refuses (configuration)" for j in before) and verdict not in CONFIGURATION_VERDICTS:
        # Both refuse, but kubelet rejects the configuration whatever the checkpoint holds: a checkpoint
        # verdict's advice (delete or rewrite the checkpoint) cannot help.
        agreed = False
        problems.append("as found: kubelet rejects the configuration before reading the checkpoint (%s); our verdict %s "
                        "is about the checkpoint" % (describe(before), verdict))
    elif verdict == CONFIG_REJECTED and not any(outcome(j) == "refuses (configuration)" for j in before):
        agreed = False
        problems.append("as found: our verdict %s, but no release rejects the configuration: %s" % (verdict, describe(before)))
    rows = {j.release: ["as found: " + outcome(j), agreed] for j in before}
    if verdict == REPAIRABLE and agreed:
        problems.extend(_judge_repair(judges, rows, result, root, scratch, bound))
    elif not result.assessment.repairable:
        problems.extend(_refusal_leaves_file(result, root, scratch, bound))
    for release, (seen, ok) in rows.items():
        matrix.record(corpus, release, verdict, seen, ok)
    if problems:
        note("### %s / %s\n\n- tree: %s\n- causes: %s\n- %s" % (
            corpus, name, describe_tree or root, "; ".join("%s: %s" % (c.verdict, c.message) for c in result.assessment.causes) or "none",
            "\n- ".join(problems)))
    return problems


def _refusal_leaves_file(result: _probe.ProbeResult, root: str, scratch: str, bound: str) -> List[str]:
    """``kubelet_mm_checkpoint``'s write path on a copy: any other verdict leaves the file byte-identical."""
    copy = os.path.join(scratch, "refused")
    shutil.copytree(root, copy, symlinks=True)
    fresh = _probe.probe(HostFiles(copy), drift_bound=bound)
    before = fresh.raw
    outcome = repair_node(fresh, backup_dir=os.path.join(scratch, "backups"))
    after = _probe.read_checkpoint(fresh.path)
    if outcome.changed or after != before:
        return ["verdict %s: the repair path changed the checkpoint (%s)" % (result.assessment.verdict, outcome.action)]
    return []


def _judge_repair(judges: Mapping[str, str], rows: Dict[str, list], result: _probe.ProbeResult, root: str, scratch: str,
                  bound: str) -> List[str]:
    copy = os.path.join(scratch, "repaired")
    shutil.copytree(root, copy, symlinks=True)
    fresh = _probe.probe(HostFiles(copy), drift_bound=bound)
    repaired = repair_node(fresh, backup_dir=os.path.join(scratch, "backups"))
    with open(fresh.path, "rb") as handle:
        written = handle.read()
    expected = written_state(written)
    problems = []
    for judgement in judge_all(judges, copy):
        same = judgement.started and held_state(judgement) == expected
        rows[judgement.release][0] += ", after repair: " + outcome(judgement)
        rows[judgement.release][1] = rows[judgement.release][1] and same
        if not judgement.started:
            problems.append("after repair (%s): %s %s" % (repaired.action, judgement.release, judgement.brief()))
        elif not same:
            problems.append("after repair: %s holds %s, we wrote %s" % (judgement.release, json.dumps(held_state(judgement), sort_keys=True),
                                                                        json.dumps(expected, sort_keys=True)))
    return problems
