# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe on the controller: the node reader's program, its answer, and the engine's assessment of it here.

The node reads (``_node.plan_reader``: exactly what ``_probe.read_plan`` declares, credentials withheld or
redacted), the controller assesses: :func:`reader_program` is what the node's Python reads on standard input
where Ansible pipelines modules; :func:`reader_answer` what the action plugin makes of what came back; and
:func:`assess` runs the unchanged engine on that answer held in memory (``_common.answered_files``), giving the
facts or the one path the answer lacked (:class:`NotRead`: the action plugin reads it and assesses again).

A node is untrusted input: its answer is bounded in bytes as it was sent before it is parsed, checked to be the
reader's shape, never written to disk; a failure is told by the reader's exit status, the size of its output
and the node's last line on standard error with control characters escaped, never by what the node sent.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import zlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible.module_utils.json_utils import _filter_non_json_lines

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import credentials, node_files
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import (
    MAX_PATH,
    AnsweredFiles,
    MalformedAnswer,
    NotRead,
    checked_entries,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang import stamp
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CACHE_READS, CPU_SYSFS_DIR
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import parse_release
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe

__all__ = ["reader_arguments", "known_versions", "versions_seen", "reader_program", "reader_answer", "module_answer", "escaped", "assess",
           "rule_for", "missed_together", "missed_rules", "learned_rules", "remembered", "NotRead", "MalformedAnswer", "MAX_ANSWER_BYTES",
           "MAX_LEARNED", "MAX_VERSIONS"]

# An answer is the reader's content budget, JSON-escaped, and its paths and records: more was not sent by the reader.
MAX_ANSWER_BYTES = 8 * 1024 * 1024
MAX_LEARNED = 64  # paths remembered per host (numa_drift_read_paths)
MAX_VERSIONS = 8  # programs' releases remembered per host (numa_drift_kubelet_versions)
MAX_STDERR_SHOWN = 300
# The modules of the reader, dependencies first: node_files imports credentials and stamp, plan_reader imports node_files.
READER_MODULES = (credentials, stamp, node_files, plan_reader)

# What the node's Python reads on standard input: the reader's modules and the arguments of read_plan travel as two
# JSON documents, deflated and in base64 (a third of the bytes, and the node's tokenizer reads a short literal instead
# of a long escaped one); each module is made from its source under its own name (so their imports find one another);
# the working directory leaves sys.path before anything is imported (as in Ansible's own wrapper: a json.py where the
# command starts is never run).
_PROGRAM = """import sys
sys.path = [entry for entry in sys.path if entry not in ("", ".")]
import base64, json, types, zlib
def unpacked(blob):
    return json.loads(zlib.decompress(base64.b64decode(blob)))
modules, arguments = unpacked(%r), unpacked(%r)
for name, source in modules:
    module = sys.modules[name] = types.ModuleType(name)
    exec(compile(source, name.rsplit(".", 1)[-1] + ".py", "exec"), module.__dict__)
sys.stdout.write(json.dumps({"entries": module.read_plan(**arguments)}))
"""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _packed(document: Any) -> str:
    return base64.b64encode(zlib.compress(json.dumps(document, separators=(",", ":")).encode("utf-8"), 6)).decode("ascii")


def _reader_modules() -> str:
    """The reader's modules as the program carries them: packed once, when the controller loads this plugin (before
    Ansible forks its workers, so every host's worker finds them packed)."""
    sources = []
    for module in READER_MODULES:
        with open(module.__file__, encoding="utf-8") as handle:
            sources.append((module.__name__, handle.read()))
    return _packed(sources)


_READER_MODULES = _reader_modules()


def reader_arguments(root: str, plan: Sequence[Mapping[str, Any]], follows: Mapping[str, Mapping[str, Any]],
                     known: Optional[Mapping[str, Mapping[str, Any]]] = None) -> Dict[str, Any]:
    """The arguments of ``plan_reader.read_plan`` (the ``__node_read`` module's options); ``known``: what the node's
    programs said of their release before (:func:`known_versions`), not asked again while they are the same."""
    return {"root": root, "plan": list(plan), "follows": dict(follows), "known": dict(known or {})}


_IDENTITY = re.compile(r"^[0-9]{1,20}:[0-9]{1,20}:[0-9]{1,20}:[0-9]{1,20}$")


def known_versions(fact: Any) -> Dict[str, Dict[str, Any]]:
    """The host fact ``numa_drift_kubelet_versions`` as the reader takes it: at most :data:`MAX_VERSIONS` programs,
    each its identity and the release it said, normalized (``v1.34.4+k3s1``): nothing else a node printed is kept."""
    found: Dict[str, Dict[str, Any]] = {}
    for path, record in (fact.items() if isinstance(fact, dict) else ()):
        if len(found) >= MAX_VERSIONS or not (isinstance(path, str) and path.startswith("/") and len(path) <= MAX_PATH and isinstance(record, dict)):
            continue
        identity, output = record.get("identity"), record.get("output")
        parsed = parse_release(output[:MAX_PATH]) if isinstance(output, str) and record.get("rc") == 0 else None
        if parsed and isinstance(identity, str) and _IDENTITY.match(identity):
            found[path] = {"identity": identity, "output": parsed[0], "rc": 0}
    return found


def versions_seen(entries: Mapping[str, Mapping[str, Dict[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    """What the node's programs said of their release in an answer (to keep as the host fact)."""
    return known_versions({key: records["version"] for key, records in entries.items() if "output" in records.get("version", {})})


def reader_program(arguments: Mapping[str, Any]) -> bytes:
    """The node reader as one Python program for the node's interpreter (its standard input), run with ``arguments``."""
    return (_PROGRAM % (_READER_MODULES, _packed(dict(arguments)))).encode("ascii")


def escaped(text: str, limit: int = MAX_STDERR_SHOWN) -> str:
    """``text`` safe for a terminal and a job log: control characters (escape sequences, bidi overrides) as ``\\xNN``."""
    shown = _CONTROL.sub(lambda match: "\\x%02x" % ord(match.group(0)) if ord(match.group(0)) < 0x100 else "\\u%04x" % ord(match.group(0)), text)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _failure(rc: Any, sent: int, stderr: str, what: str) -> Dict[str, Any]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    said = "; the node said: %s" % escaped(lines[-1].strip()) if lines else ""
    return {"failed": True, "rc": rc, "msg": "the node reader failed (rc %s, %d bytes on standard output): %s%s" % (rc, sent, what, said)}


def reader_answer(rc: Any, stdout: str, stderr: str) -> Tuple[Optional[Dict[str, Any]], Dict[str, Any]]:
    """``(checked entries, {})`` from the reader's run, or ``(None, a failed task result)`` that says what happened.

    Lines around the JSON object (a login banner, a shell's greeting) are ignored, as Ansible ignores them around a
    module's result. Nothing the node sent is quoted back."""
    sent = len(stdout.encode("utf-8", "surrogateescape"))
    if sent > MAX_ANSWER_BYTES:
        return None, _failure(rc, sent, stderr, "its answer is larger than %d bytes" % MAX_ANSWER_BYTES)
    if rc != 0:
        return None, _failure(rc, sent, stderr, "it exited with status %s" % rc)
    try:
        answer = json.loads(_filter_non_json_lines(stdout, objects_only=True)[0])
    except ValueError:
        return None, _failure(rc, sent, stderr, "its output is not the reader's answer" if stdout.strip() else "it wrote nothing")
    try:
        return checked_entries(answer.get("entries") if isinstance(answer, dict) else None), {}
    except MalformedAnswer as error:
        return None, _failure(rc, sent, stderr, "its answer is malformed: %s" % escaped(str(error)))


def module_answer(result: Mapping[str, Any]) -> Tuple[Optional[Dict[str, Any]], Dict[str, Any]]:
    """``(checked entries, {})`` from the ``__node_read`` module's result, or ``(None, a failed task result)``: its
    message escaped, nothing else the node sent."""
    if result.get("failed"):
        message = escaped(str(result.get("msg", "")))
        return None, {"failed": True, "rc": result.get("rc"), "msg": "the node reader module failed: %s" % message}
    try:
        return checked_entries(result.get("entries")), {}
    except MalformedAnswer as error:
        return None, {"failed": True, "msg": "the node reader module's answer is malformed: %s" % escaped(str(error))}


def assess(entries: Mapping[str, Mapping[str, Dict[str, Any]]], root: str, arguments: Mapping[str, Any]) -> Dict[str, Any]:
    """The ``numa_drift`` facts of the node's answer, assessed here; :class:`NotRead` when it lacks what the engine reads."""
    return assessment_facts(probe(AnsweredFiles(root, entries), **arguments))


def rule_for(missing: NotRead) -> Dict[str, Any]:
    """The read rule that answers what the engine missed (the primitive it asked of that path)."""
    verb = {"stat": "stat", "names": "list", "version": "version"}.get(missing.how, "read")
    rule: Dict[str, Any] = {verb: missing.key, "literal": True, "follow": []}
    if missing.how == "raw":
        rule["raw"] = True
    return rule


_LEARNED = re.compile(r"^(stat|list|read|raw|version) (/.*)$")
# kubelet's checkpoints live side by side in its root dir, and the probe reads both: a root dir the plan did not know
# (a path built from a variable) is learned for both at once, in one more read rather than two.
STATE_FILES = ("memory_manager_state", "cpu_manager_state")


def missed_together(missing: NotRead) -> List[NotRead]:
    """``missing`` and, for one of kubelet's checkpoints, the other one beside it."""
    directory, name = posixpath.split(missing.key)
    if missing.how != "raw" or name not in STATE_FILES:
        return [missing]
    return [NotRead(posixpath.join(directory, sibling), "raw") for sibling in STATE_FILES]


# A CPU's cache files: the probe reads them all or none (_probe._cache_reads), and so are they asked for when missed.
_CACHE_PATH = re.compile(r"^%s/cpu[0-9]+/cache(/|$)" % re.escape(CPU_SYSFS_DIR))


def missed_rules(missing: NotRead) -> Tuple[List[Dict[str, Any]], List[NotRead]]:
    """``(rules, learned)``: the rules that read what the engine missed in one more read, and the paths to remember
    (:func:`remembered`) for the next run. A missed cache file reads every CPU's (a node whose configuration names the
    uncore-cache option in a way the plan's own test did not see), remembered nowhere."""
    if _CACHE_PATH.match(missing.key):
        return list(CACHE_READS), []
    together = missed_together(missing)
    return [rule_for(each) for each in together], together


def remembered(missing: NotRead) -> str:
    """How a missed path is kept in the host fact ``numa_drift_read_paths``: ``<how> <node path>``."""
    return "%s %s" % ({"names": "list", "text": "read"}.get(missing.how, missing.how), missing.key)


def learned_rules(learned: Any) -> List[Dict[str, Any]]:
    """Rules for the paths earlier runs on this host learned (well-formed entries only, at most :data:`MAX_LEARNED`)."""
    rules = []
    for item in (learned if isinstance(learned, list) else [])[:MAX_LEARNED]:
        match = _LEARNED.match(item) if isinstance(item, str) and len(item) <= MAX_PATH + 8 else None
        if match is None or posixpath.normpath(match.group(2)) != match.group(2):
            continue
        how, path = match.groups()
        rules.append(rule_for(NotRead(path, {"list": "names", "read": "text"}.get(how, how))))
    return rules
