# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node tree judged by the probe and by kubelet's own code at every release.

``judge_tree`` runs every release's judge on the tree, then probes it at each release (as the node's program or an
operator names it) and holds that verdict to that release's answer exactly; probes it as found, whose verdict must be
the one of the release the tree's kubelet says, or, with the release unknown, the conservative one (where the
releases differ, a refusal). Each ``drift_within_bound`` repairs a copy with ``kubelet_mm_checkpoint``'s write path,
written for that release, and the judge of that release (of every release, unknown) must start with it holding what
was written; each other verdict must leave the file byte-identical. Every outcome goes into the matrix. It returns
the disagreements as text (empty = agree).
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

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


def _probe_at(root: str, bound: str, release: Optional[str]) -> _probe.ProbeResult:
    """The probe of ``root`` as found (the release its program says, or unknown), or at ``release``."""
    return _probe.probe(HostFiles(root), drift_bound=bound, kubelet_release=release)


def _as_found(verdict: str, judgements: Sequence[Judgement]) -> List[str]:
    """Our verdict against kubelet as the file is: ``agrees`` (exact at one release; at several, where they differ,
    a refusal), and a configuration kubelet rejects must be our configuration verdict, and only then."""
    if not agrees(verdict, judgements):
        return ["as found: our verdict %s; kubelet: %s" % (verdict, describe(judgements))]
    if all(outcome(j) == "refuses (configuration)" for j in judgements) and verdict not in CONFIGURATION_VERDICTS:
        # Both refuse, but kubelet rejects the configuration whatever the checkpoint holds: a checkpoint verdict's
        # advice (delete or rewrite the checkpoint) cannot help.
        return ["as found: kubelet rejects the configuration before reading the checkpoint (%s); our verdict %s is about "
                "the checkpoint" % (describe(judgements), verdict)]
    if verdict == CONFIG_REJECTED and not any(outcome(j) == "refuses (configuration)" for j in judgements):
        return ["as found: our verdict %s, but no release rejects the configuration: %s" % (verdict, describe(judgements))]
    return []


def _judged(judges: Mapping[str, str], corpus: str, root: str, scratch: str, bound: str, result: _probe.ProbeResult,
            judgements: Sequence[Judgement], release: Optional[str], label: str, seen: Dict[Tuple[str, bytes], Judgement]) -> List[str]:
    """One verdict (at ``release``, or the release unknown) against kubelet at the releases in ``judgements``: as
    found, then after the repair written for that release, or the refusal leaving the file byte-identical."""
    verdict = result.assessment.verdict
    problems = ["%s: %s" % (label, problem) for problem in _as_found(verdict, judgements)]
    rows = {j.release: ["as found: " + outcome(j), not problems] for j in judgements}
    if verdict == REPAIRABLE and not problems:
        problems.extend("%s: %s" % (label, problem) for problem in _judge_repair(judges, rows, root, scratch, bound, release, seen))
    elif not result.assessment.repairable:
        problems.extend("%s: %s" % (label, problem) for problem in _refusal_leaves_file(result, root, scratch, bound, release))
    for at, (seen, ok) in rows.items():
        matrix.record(corpus if release else corpus + " (release unknown)", at, verdict, seen, ok)
    return problems


def judge_tree(judges: Mapping[str, str], corpus: str, name: str, root: str, scratch: str, bound: str = "auto",
               describe_tree: str = "") -> List[str]:
    """Our verdicts on the tree against kubelet's own code: at each release exactly (the probe told that release,
    as a node's program or an operator tells it); as found, at the release the tree's program says (the same verdict
    as at that release), or with the release unknown (where the releases differ, a refusal)."""
    before_files = tree_snapshot(root)
    judgements = judge_all(judges, root)
    problems: List[str] = []
    if tree_snapshot(root) != before_files:
        problems.append("the judge changed the tree")
    verdicts = {}
    seen: Dict[Tuple[str, bytes], Judgement] = {}  # (release, repaired file) -> that release's judgement of it
    for judgement in judgements:
        at = _probe_at(root, bound, judgement.release)
        verdicts[judgement.release] = at.assessment.verdict
        problems += _judged(judges, corpus, root, os.path.join(scratch, judgement.release), bound, at, [judgement], judgement.release,
                            "at %s" % judgement.release, seen)
    found = _probe_at(root, bound, None)
    release = found.settings.release
    if release.tested:
        named = next((at for at in verdicts if at.startswith("v%s." % release.release)), None)
        if named and found.assessment.verdict != verdicts[named]:
            problems.append("the tree's kubelet says %s (%s): our verdict %s, at %s %s" % (
                release.version, release.source, found.assessment.verdict, named, verdicts[named]))
    elif not release.known:
        problems += _judged(judges, corpus, root, os.path.join(scratch, "unknown"), bound, found, judgements, None,
                            "release unknown (%s)" % release.source, seen)
    else:
        problems.append("the tree's kubelet %s is outside the judged releases: judge it with a tested release" % release.name)
    if problems:
        note("### %s / %s\n\n- tree: %s\n- causes: %s\n- %s" % (
            corpus, name, describe_tree or root, "; ".join("%s: %s" % (c.verdict, c.message) for c in found.assessment.causes) or "none",
            "\n- ".join(problems)))
    return problems


def _refusal_leaves_file(result: _probe.ProbeResult, root: str, scratch: str, bound: str, release: Optional[str]) -> List[str]:
    """``kubelet_mm_checkpoint``'s write path on a copy: any other verdict leaves the file byte-identical."""
    copy = os.path.join(scratch, "refused")
    shutil.copytree(root, copy, symlinks=True)
    fresh = _probe_at(copy, bound, release)
    before = fresh.raw
    done = repair_node(fresh, backup_dir=os.path.join(scratch, "backups"))
    after = _probe.read_checkpoint(fresh.path)
    if done.changed or after != before:
        return ["verdict %s: the repair path changed the checkpoint (%s)" % (result.assessment.verdict, done.action)]
    return []


def _judge_repair(judges: Mapping[str, str], rows: Dict[str, list], root: str, scratch: str, bound: str,
                  release: Optional[str], seen: Dict[Tuple[str, bytes], Judgement]) -> List[str]:
    """The repair written for ``release`` (every release when unknown), judged at the releases of ``rows``: each
    starts and holds exactly the state written (a file already judged at a release, byte for byte, is not judged
    there again: ``seen``)."""
    copy = os.path.join(scratch, "repaired")
    shutil.copytree(root, copy, symlinks=True)
    fresh = _probe_at(copy, bound, release)
    repaired = repair_node(fresh, backup_dir=os.path.join(scratch, "backups"))
    with open(fresh.path, "rb") as handle:
        written = handle.read()
    expected = written_state(written)
    problems = []
    for at in rows:
        if (at, written) not in seen:
            seen[(at, written)] = judge(judges[at], copy)
    for judgement in [seen[(at, written)] for at in rows]:
        same = judgement.started and held_state(judgement) == expected
        rows[judgement.release][0] += ", after repair: " + outcome(judgement)
        rows[judgement.release][1] = rows[judgement.release][1] and same
        if not judgement.started:
            problems.append("after repair (%s): %s %s" % (repaired.action, judgement.release, judgement.brief()))
        elif not same:
            problems.append("after repair: %s holds %s, we wrote %s" % (judgement.release, json.dumps(held_state(judgement), sort_keys=True),
                                                                        json.dumps(expected, sort_keys=True)))
    return problems
