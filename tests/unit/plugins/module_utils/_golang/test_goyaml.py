# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_golang/goyaml.py: the subset, block structure, refusals, PyYAML agreement."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import SUBSET_NOTE, load, load_mapping
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlscalar import YamlError

K3S_CONFIG = """\
# /etc/rancher/k3s/config.yaml
token: "K10abc::server:secret"
server: https://10.0.0.1:6443
node-label:
  - "numa=two"
  - topology.kubernetes.io/zone=a
kubelet-arg:
- "reserved-memory=0:memory=1Gi;1:memory=1Gi"
- 'system-reserved=memory=2Gi'
- memory-manager-policy=Static   # the policy
write-kubeconfig-mode: "0644"
protect-kernel-defaults: true
"""

KUBELET_CONFIG = """\
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
memoryManagerPolicy: Static
reservedMemory:
  - numaNode: 0
    limits:
      memory: 1Gi
      hugepages-1Gi: 2Gi
  - numaNode: 1
    limits: {memory: 1536Mi}
systemReserved: {cpu: 500m, memory: "2Gi", hugepages-1Gi: '2Gi'}
evictionHard:
  memory.available: "200Mi"
featureGates:
  MemoryManagerDriftTolerance: on
memoryManagerPolicyOptions:
  memory-drift-tolerance: auto
...
"""


def test_k3s_config_as_pyyaml_reads_it():
    assert load(K3S_CONFIG) == yaml.safe_load(K3S_CONFIG)


def test_kubelet_config():
    document = load(KUBELET_CONFIG)
    assert document["reservedMemory"] == [
        {"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}},
        {"numaNode": 1, "limits": {"memory": "1536Mi"}},
    ]
    assert document["systemReserved"] == {"cpu": "500m", "memory": "2Gi", "hugepages-1Gi": "2Gi"}
    assert document["featureGates"] == {"MemoryManagerDriftTolerance": True}  # YAML 1.1: on is true
    assert document == yaml.safe_load(KUBELET_CONFIG)


def test_comments_and_hashes_in_plain_scalars():
    assert load("a: b#c  # comment\nb: x #y\n#c: d\nurl: http://h/#frag\n") == {"a": "b#c", "b": "x", "url": "http://h/#frag"}


def test_nested_block_sequences_and_mappings():
    text = "a:\n- - 1\n  - 2\n- k: v\n  l:\n    - m\n-\n  p: o\n-\nb:\n    deep:\n        x: 1\n"
    assert load(text) == {"a": [[1, 2], {"k": "v", "l": ["m"]}, {"p": "o"}, None], "b": {"deep": {"x": 1}}}
    assert load(text) == yaml.safe_load(text)


def test_empty_documents():
    assert load("") is None and load("# nothing\n\n") is None and load("---\n...\n") is None
    assert load_mapping("") == ({}, None) and load_mapping("---\n# only\n") == ({}, None)


def test_windows_line_ends_and_bom():
    assert load("\ufeffa: 1\r\nb:\r\n  - x\r\n") == {"a": 1, "b": ["x"]}


def test_last_duplicate_key_wins():
    # go-yaml v2 Unmarshal overwrites; kubelet falls back to lenient decoding on the strict error.
    assert load("a: 1\na: 2\n") == {"a": 2}


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("a: &x 1\n", 1, "anchors (&) are not supported"),
        ("a: 1\nb: *x\n", 2, "aliases (*) are not supported"),
        ("a: !!str 1\n", 1, "tags (!) are not supported"),
        ("a: |\n  text\n", 1, "block scalars (|) are not supported"),
        ("a: >-\n  text\n", 1, "block scalars (>) are not supported"),
        ("a: one\n  two\n", 2, "multi-line plain scalars are not supported"),
        ("a: \"one\n  two\"\n", 1, "must end on its line"),
        ("a: 1\n---\nb: 2\n", 2, "more than one document is not supported"),
        ("%YAML 1.1\n---\na: 1\n", 1, "directives (%) are not supported"),
        ("--- {a: 1}\n", 1, "content on a document marker line is not supported"),
        ("? a\n: b\n", 1, "complex mapping keys (?) are not supported"),
        ("<<: {a: 1}\n", 1, "merge keys (<<) are not supported"),
        ("a: [b: c]\n", 1, "mappings inside a flow sequence are not supported"),
        ("~: x\n", 1, "a null mapping key is not supported"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", 1, "nested deeper than 64 levels"),
    ],
)
def test_outside_the_subset_is_refused_with_its_line(text, line, fragment):
    with pytest.raises(YamlError) as error:
        load(text)
    assert error.value.unsupported and error.value.line == line and fragment in str(error.value)
    document, problem = load_mapping(text)
    assert document is None and problem == "line %d: %s (%s)" % (line, error.value.message, SUBSET_NOTE)


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("a: [1, 2\n", 2, "[ is never closed"),
        ("a: {b: 1\n\n", 3, "{ is never closed"),
        ("{0:", 1, "{ is never closed"),  # the text ends after a key's ':' (it raised IndexError)
        ("a: {b:\n", 2, "{ is never closed"),
        ("a: b: c\n", 1, "a mapping value is not allowed here"),
        (" a: 1\nb: 2\n", 2, "unexpected content"),
        ("a:\n  - 1\n  b: 2\n", 3, "bad indentation of a mapping entry"),
        ("a:\n\t- b\n", 2, "tabs cannot indent YAML"),
        ('a: "\\q"\n', 1, "unknown escape \\q"),
        ('a: "\\x4"\n', 1, "bad escape"),
        ("a: 'x' y\n", 1, "unexpected text after a value"),
        ("a: [1,,2]\n", 1, "a value is missing"),
        ("a: 1\n...\nb: 2\n", 3, "content after the end of the document"),
        ("a: {[1]: 2}\n", 1, "cannot be converted to JSON"),
        (": x\n", 1, "an empty mapping key"),
    ],
)
def test_invalid_yaml_is_an_error_with_its_line(text, line, fragment):
    with pytest.raises(YamlError) as error:
        load(text)
    assert not error.value.unsupported and error.value.line == line and fragment in str(error.value)
    assert load_mapping(text)[1].startswith("not valid YAML: line %d: " % line)


def test_a_document_that_is_not_a_mapping():
    assert load_mapping("- a\n") == (None, "the document is a list, not a mapping")
    assert load_mapping("words\n", "KubeletConfiguration mapping") == (None, "the document is a string, not a KubeletConfiguration mapping")


# --------------------------------------------------------------------------- agreement with PyYAML

# Inside the subset and where YAML 1.1 (PyYAML) and go-yaml v2 resolve alike: plain strings that
# cannot be read as anything else, quoted strings of any printable text, ints, booleans, null.
PLAIN = st.from_regex(r"\A[A-Za-z_/][A-Za-z0-9_./=-]{0,15}\Z").filter(
    lambda text: text.lower() not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
)
PRINTABLE = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_categories=("Cc", "Cs"), exclude_characters="\xa0"), max_size=20
)


def _documents(strings):
    scalars = st.one_of(PLAIN, strings, st.integers(-(2 ** 63), 2 ** 63 - 1), st.booleans(), st.none())
    keys = st.one_of(PLAIN, strings.filter(lambda text: text not in ("", "<<")))  # PyYAML writes "? ''" for ''
    return st.recursive(
        scalars, lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)), max_leaves=25
    )


DOCUMENTS = _documents(PRINTABLE)
# PyYAML writes a string plain when YAML 1.1 reads it back as a string; go-yaml v2 also reads
# y/Y/n/N as booleans and 1e3, 08, 0o17 as numbers, so those are left out where PyYAML chooses.
PYYAML_PLAIN_ALIKE = _documents(PRINTABLE.filter(lambda text: text not in ("y", "Y", "n", "N") and not re.match(r"[-+.0-9]", text)))


def _double_quoted(text):
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) > 0x7E:
            out.append("\\u%04x" % ord(char))
        else:
            out.append(char)
    return '"%s"' % "".join(out)


def _scalar(value, draw):
    if value is None:
        return draw(st.sampled_from(["null", "~", "Null"]))
    if isinstance(value, bool):
        return draw(st.sampled_from(["true", "True", "yes", "on"] if value else ["false", "FALSE", "no", "Off"]))
    if isinstance(value, int):
        return str(value)
    style = draw(st.sampled_from(["plain", "single", "double"]))
    if style == "plain" and re.match(r"\A[A-Za-z_/][A-Za-z0-9_./=-]*\Z", value) and value.lower() not in {
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"
    }:
        return value
    if style == "single":
        return "'%s'" % value.replace("'", "''")
    return _double_quoted(value)


def _flow(value, draw):
    if isinstance(value, list):
        return "[%s]" % ", ".join(_flow(item, draw) for item in value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (_scalar(key, draw), _flow(item, draw)) for key, item in value.items())
    return _scalar(value, draw)


def _comment(draw):
    return draw(st.sampled_from(["", "", "  # a comment", " #x: y"]))


def _block(value, indent, draw):
    """Lines of ``value`` as a block node at ``indent``, with the styles the subset allows."""
    pad = " " * indent
    step = draw(st.sampled_from([2, 4]))
    lines = []
    if isinstance(value, dict) and value:
        for key, item in value.items():
            key_text = _scalar(key, draw)
            if isinstance(item, (dict, list)) and item and draw(st.booleans()):
                lines.append("%s%s:%s" % (pad, key_text, _comment(draw)))
                same = isinstance(item, list) and draw(st.booleans())  # "key:\n- a"
                lines.extend(_block(item, indent if same else indent + step, draw))
            else:
                lines.append("%s%s: %s%s" % (pad, key_text, _flow(item, draw), _comment(draw)))
            if draw(st.integers(0, 5)) == 0:
                lines.append(draw(st.sampled_from(["", pad + "# between entries"])))
    elif isinstance(value, list) and value:
        for item in value:
            if isinstance(item, (dict, list)) and item and draw(st.booleans()):
                inner = _block(item, indent + 2, draw)
                lines.append("%s- %s" % (pad, inner[0][indent + 2 :]))  # "- k: v" / "- - a"
                lines.extend(inner[1:])
            else:
                lines.append("%s- %s%s" % (pad, _flow(item, draw), _comment(draw)))
    else:
        lines.append("%s%s%s" % (pad, _flow(value, draw), _comment(draw)))
    return lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), DOCUMENTS)
def test_agrees_with_pyyaml_on_generated_documents(data, document):
    lines = _block(document, 0, data.draw)
    if data.draw(st.booleans()):
        lines.insert(0, data.draw(st.sampled_from(["---", "# header", "--- # start"])))
    text = "\n".join(lines) + "\n"
    expected = yaml.safe_load(text)
    assert load(text) == expected, text
    assert load(text) == json.loads(json.dumps(expected))


@settings(max_examples=200, deadline=None)
@given(PYYAML_PLAIN_ALIKE, st.booleans())
def test_reads_what_pyyaml_writes(document, flow):
    text = yaml.safe_dump(document, default_flow_style=flow, width=1 << 20, allow_unicode=True)
    assert load(text) == yaml.safe_load(text), text
