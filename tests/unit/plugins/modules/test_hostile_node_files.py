# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile node files against both modules: huge numbers, deep nesting, long and malformed text.

Whatever a node's files hold, ``numa_drift_facts`` and ``kubelet_mm_checkpoint`` end with a
result (a verdict, or a failure naming the file), never a Python exception, and touch nothing.
The examples of issue 21 are here one by one; ``test_any_hostile_file`` generates more.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint, numa_drift_facts
from ansible_collections.nodeops.numa_drift.tests.support.scenario import tree_snapshot
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import _kubelet_file, kaslr_node, run_module

HUGE = "9" * 5000  # beyond Python's int-str conversion limit (4,300 digits)
NODE0 = "sys/devices/system/node/node0"
MEMINFO = NODE0 + "/meminfo"
NR_HUGEPAGES = NODE0 + "/hugepages/hugepages-1048576kB/nr_hugepages"
CONFIG = "var/lib/kubelet/config.yaml"
CHECKPOINT = "var/lib/kubelet/memory_manager_state"
HISTORY = "var/lib/nodeops-numa-drift/history.json"
GUARD_STATE = "var/lib/nodeops-numa-drift/guard.json"
IOMEM = "proc/iomem"
KUBEADM_FLAGS = "var/lib/kubelet/kubeadm-flags.env"


def _write(root, relative, data):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _config_yaml(extra):
    """The fake node's kubelet configuration as YAML (one ``key: <JSON value>`` line each), plus ``extra``."""
    document = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": node, "limits": {"memory": "1Gi"}} for node in (0, 1)],
    }
    return "".join("%s: %s\n" % (key, json.dumps(value)) for key, value in document.items()) + extra


def _both_modules(run, root):
    """Probe, then repair: neither raises, and neither touches a file; the two results."""
    before = tree_snapshot(root)
    facts = run(numa_drift_facts, {"root": root})
    assert tree_snapshot(root) == before, "numa_drift_facts wrote under the node root"
    repair = run(kubelet_mm_checkpoint, {"root": root, "state": "repaired"})
    assert tree_snapshot(root) == before, "kubelet_mm_checkpoint touched a node file: %s" % repair.get("msg")
    assert not repair.get("changed") and repair.get("failed") is True
    return facts, repair


def _failure(result):
    assert result.get("failed") is True, result
    return result["msg"]


def _verdict(result):
    assert not result.get("failed"), result.get("msg")
    return result["numa_drift"]


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("text", [HUGE, "0" * 5000 + "1" + "0" * 20, str(2 ** 64 // 1024 + 1)])
def test_memtotal_beyond_64_bits_is_a_node_read_error(run, tmp_path, text):
    root = kaslr_node(tmp_path)
    path = _write(root, MEMINFO, "Node 0 MemTotal:       %s kB\nNode 0 MemFree: 1 kB\n" % text)
    facts, repair = _both_modules(run, root)
    for message in (_failure(facts), _failure(repair)):
        assert path in message and "does not fit in 64 bits" in message
        assert len(message) < 2000  # the number is not copied whole into the message


def test_nr_hugepages_beyond_64_bits_is_a_node_read_error(run, tmp_path):
    root = kaslr_node(tmp_path)
    path = _write(root, NR_HUGEPAGES, HUGE + "\n")
    facts, repair = _both_modules(run, root)
    for message in (_failure(facts), _failure(repair)):
        assert path in message and "does not fit in 64 bits" in message


@pytest.mark.parametrize("line", ["maxPods: %s\n" % HUGE, "maxPods: 18446744073709551616\n", "podPidsLimit: -%s\n" % HUGE])
def test_yaml_config_integer_beyond_64_bits_is_kubelet_config_unknown(run, tmp_path, line):
    root = kaslr_node(tmp_path)
    path = _write(root, CONFIG, _config_yaml(line))
    facts, _repair = _both_modules(run, root)
    found = _verdict(facts)
    assert found["verdict"] == "kubelet_config_unknown"
    problems = " ".join(found["kubelet"]["problems"])
    assert "/var/lib/kubelet/config.yaml" in problems and "line 5" in problems and "does not fit in 64 bits" in problems
    assert os.path.isfile(path)


def test_json_config_integer_beyond_64_bits_is_kubelet_config_unknown(run, tmp_path):
    root = kaslr_node(tmp_path)
    config = os.path.join(root, CONFIG)
    with open(config) as handle:
        text = handle.read()
    _write(root, CONFIG, text.replace('"kind"', '"maxPods": %s,\n  "kind"' % HUGE, 1))
    facts, _repair = _both_modules(run, root)
    found = _verdict(facts)
    assert found["verdict"] == "kubelet_config_unknown"
    assert "does not fit in 64 bits" in " ".join(found["kubelet"]["problems"])


def test_reserved_memory_flag_with_a_huge_node_id_is_named(run, tmp_path):
    root = kaslr_node(tmp_path)
    _write(root, KUBEADM_FLAGS, 'KUBELET_KUBEADM_ARGS="--reserved-memory=%s:memory=1Gi"\n' % HUGE)
    facts, _repair = _both_modules(run, root)
    problems = " ".join(_verdict(facts)["kubelet"]["problems"])
    assert "--reserved-memory" in problems and "does not fit in 32 bits" in problems and len(problems) < 12000


@pytest.mark.parametrize(
    "old, new",
    [
        # map[int] key: strconv.ParseInt reads 5,000 leading zeros as 0 (kubelet would too).
        (b'"machineState":{"0"', b'"machineState":{"' + b"0" * 5000 + b'"'),
        (b'"machineState":{"0"', b'"machineState":{"' + HUGE.encode() + b'"'),
        # a uint64 field: beyond its range is Go's type error, the checkpoint is corrupt.
        (b'"total":', b'"total":' + HUGE.encode() + b',"x":'),
    ],
)
def test_checkpoint_numbers_beyond_64_bits_are_a_verdict(run, tmp_path, old, new):
    raw = _kubelet_file()
    assert old in raw
    root = kaslr_node(tmp_path, checkpoint_bytes=raw.replace(old, new, 1))
    facts, repair = _both_modules(run, root)
    assert _verdict(facts)["verdict"] in ("corrupt", "unsupported_layout")
    assert _verdict(facts)["verdict"] in _failure(repair)


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("depth", [65, 990, 5000, 200000])
def test_checkpoint_with_a_deeply_nested_unknown_key_is_corrupt(run, tmp_path, depth):
    raw = _kubelet_file()
    deep = b'{"unknown":' + b"[" * depth + b"]" * depth + b","
    root = kaslr_node(tmp_path, checkpoint_bytes=deep + raw[1:])
    facts, repair = _both_modules(run, root)
    found = _verdict(facts)
    assert found["verdict"] == "corrupt"
    assert "too deep" in found["summary"] + json.dumps(found["checkpoint"])
    assert "corrupt" in _failure(repair)


def test_checkpoint_nested_as_deep_as_allowed_is_read(run, tmp_path):
    # 64 levels in all: the unknown key's arrays sit one level below the top object.
    raw = _kubelet_file()
    deep = b'{"unknown":' + b"[" * 63 + b"]" * 63 + b","
    root = kaslr_node(tmp_path, checkpoint_bytes=deep + raw[1:])
    found = _verdict(run(numa_drift_facts, {"root": root}))
    assert found["verdict"] == "unsupported_layout"  # an unknown key: read, named, not rewritten
    assert "too deep" not in json.dumps(found)


@pytest.mark.parametrize("text", ["[" * 60000 + "]" * 60000, '{"time": %s}' % HUGE])
def test_hostile_guard_state_leaves_the_probe_intact(run, tmp_path, text):
    root = kaslr_node(tmp_path)
    _write(root, GUARD_STATE, text)
    found = _verdict(run(numa_drift_facts, {"root": root}))
    assert found["verdict"] == "drift_within_bound"


@pytest.mark.parametrize("text", ["[" * 60000 + "]" * 60000, '{"repairs": [{"time": %s}]}' % HUGE, '{"repairs": [' * 3000])
def test_hostile_history_is_a_named_error(run, tmp_path, text):
    root = kaslr_node(tmp_path)
    path = _write(root, HISTORY, text)
    facts, repair = _both_modules(run, root)
    assert _verdict(facts)["verdict"] == "drift_within_bound"
    message = _failure(repair)
    assert path in message and "delete it" in message


# --------------------------------------------------------------------------- generated

HOSTILE_TEXT = st.one_of(
    st.builds(lambda digit, count: digit * count, st.sampled_from("0179"), st.integers(1, 9000)),
    st.builds(
        lambda sign, digits: sign + digits,
        st.sampled_from(["-", "+", "0x", "0o", "0b", "Node 0 MemTotal: "]), st.text("0123456789abcdef", min_size=1, max_size=6000),
    ),
    st.builds(lambda opening, count: opening * count, st.sampled_from(["[", "{\"a\":", "- ", "a: {", "[{"]), st.integers(1, 3000)),
    st.text(max_size=300),
    st.binary(max_size=300).map(lambda raw: raw.decode("latin-1")),
)
HOSTILE_FILES = st.sampled_from(
    [MEMINFO, NR_HUGEPAGES, CONFIG, CHECKPOINT, HISTORY, GUARD_STATE, IOMEM, KUBEADM_FLAGS, NODE0 + "/cpulist", "sys/devices/system/node/online"]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(relative=HOSTILE_FILES, text=HOSTILE_TEXT, mode=st.sampled_from(["replace", "append"]))
def test_any_hostile_file(capsys, tmp_path_factory, relative, text, mode):
    """One node file replaced by (or extended with) hostile text: each module ends with a result,
    and a run that reports no change left every file byte-identical."""
    root = kaslr_node(tmp_path_factory.mktemp("hostile"))
    path = os.path.join(root, relative)
    if mode == "append" and os.path.exists(path):
        with open(path) as handle:
            text = handle.read() + text
    _write(root, relative, text)
    before = tree_snapshot(root)
    facts = run_module(capsys, numa_drift_facts, {"root": root})
    assert tree_snapshot(root) == before
    assert facts.get("failed") or facts["numa_drift"]["verdict"]
    repair = run_module(capsys, kubelet_mm_checkpoint, {"root": root, "state": "repaired"})
    if not repair.get("changed"):
        assert tree_snapshot(root) == before
    else:
        assert not facts.get("failed") and facts["numa_drift"]["verdict"] == "drift_within_bound"
