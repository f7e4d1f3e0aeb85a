# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: every reader of node files against huge, deep, long and malformed inputs.

Each reader either returns or raises the one error its callers handle (and whose text names
the problem); never ``ValueError`` from ``int()``, ``RecursionError`` or anything else. The
module-level counterpart (files on a fake node, both modules) is ``test_hostile_node_files.py``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.document import parse_kubelet_config
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import parse_reserved_memory_flag
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import parse_kernel_image_range
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.parsers import (
    parse_block_size,
    parse_hugepage_pool,
    parse_meminfo_total,
    parse_node_list,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import GoJsonError, TypedDecoder, parse_document
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import HistoryError, parse_history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import walk_config_dir
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import MAX_NESTING, bounded_int, load_json, nesting_depth
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import (
    parse_env_file,
    parse_unit_lines,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlscalar import YamlError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DIGITS = st.builds(lambda digit, count: digit * count, st.sampled_from("0123456789abcdef"), st.integers(1, 9000))
NUMBERS = st.one_of(
    DIGITS,
    st.builds(lambda prefix, digits: prefix + digits, st.sampled_from(["-", "+", "0x", "0o", "0b", "-0x", "00", "1_"]), DIGITS),
    st.integers().map(str),
    st.integers(min_value=2 ** 63 - 5, max_value=2 ** 64 + 5).map(str),
)
NESTINGS = st.builds(
    lambda opening, closing, count: opening * count + closing * count,
    *[st.sampled_from(pair) for pair in ((("[", '{"a":', "[{\"a\":"), ("]", "}", "}]")))],
    st.integers(1, 20000),
)
TEXTS = st.one_of(
    NUMBERS,
    NESTINGS,
    st.builds(
        lambda opening, count, tail: opening * count + tail,
        st.sampled_from(["[", "{", "- ", "a: {", "a:\n  ", "[{", '"']), st.integers(1, 5000), NUMBERS,
    ),
    st.text(max_size=500),
    st.binary(max_size=500).map(lambda raw: raw.decode("latin-1")),
    st.builds(lambda key, value: "%s: %s\n" % (key, value), st.sampled_from(["maxPods", "a", "0x10", "reservedMemory"]), NUMBERS),
    st.builds(lambda value: '{"a": %s}' % value, NUMBERS),
)


def test_bounded_int_never_converts_more_than_64_bits():
    assert bounded_int("0" * 100000 + "18446744073709551615") == 2 ** 64 - 1
    assert bounded_int("18446744073709551616") is None
    assert bounded_int("9" * 5000) is None
    assert bounded_int("f" * 16, 16) == 2 ** 64 - 1 and bounded_int("1" + "0" * 16, 16) is None
    assert bounded_int("") is None and bounded_int("12a") is None and bounded_int("\u0661") is None


def test_nesting_depth_is_iterative():
    deep = []
    for _level in range(100000):
        deep = [deep]
    assert nesting_depth(deep) == MAX_NESTING + 1
    assert nesting_depth([(("key", [1]),)]) == 2  # pairs of an object are not a level
    assert nesting_depth({"a": {"b": 1}}) == 2 and nesting_depth(5) == 0


@FAST
@given(TEXTS)
def test_go_json_reader(text):
    try:
        tree = parse_document(text.encode("utf-8", "surrogatepass"))
    except GoJsonError as error:
        assert str(error)
        return
    assert nesting_depth(tree) <= MAX_NESTING
    decoder = TypedDecoder()
    decoder.integer(tree, "uint64", "x")
    decoder.integer(tree, "int", "x")
    for key in (text[:9000], text.lstrip("[{")):
        decoder.map_int_key(key, "map[int]state.NodeState")


@FAST
@given(TEXTS)
def test_checkpoint_inspection_never_raises(text):
    report = inspect_checkpoint(text.encode("utf-8", "surrogatepass"))
    assert report.layout


@FAST
@given(TEXTS, st.sampled_from(['{"policyName":"Static","machineState":{%s:{}},"entries":{},"checksum":1}', '{"x":%s}', "%s"]))
def test_checkpoint_inspection_with_hostile_parts(text, frame):
    quoted = '"%s"' % text.replace("\\", "").replace('"', "")
    report = inspect_checkpoint((frame % quoted).encode("utf-8", "surrogatepass"))
    assert report.layout


@FAST
@given(TEXTS)
def test_yaml_reader(text):
    try:
        load(text)
    except YamlError as error:
        assert error.line >= 0 and str(error)


@FAST
@given(TEXTS)
def test_kubelet_config_reader(text):
    document, problems = parse_kubelet_config(text)
    assert (document is None) == bool(problems)


@FAST
@given(TEXTS)
def test_bounded_json_reader(text):
    try:
        document = load_json(text)
    except ValueError as error:
        assert str(error)
        return
    assert nesting_depth(document) <= MAX_NESTING


@FAST
@given(TEXTS)
def test_history_reader(text):
    try:
        parse_history(text.encode("utf-8", "surrogatepass"), "/h.json")
    except HistoryError as error:
        assert "/h.json" in str(error)


@FAST
@given(TEXTS)
def test_sysfs_and_iomem_readers(text):
    parse_meminfo_total(text)
    parse_meminfo_total("Node 0 MemTotal: %s kB" % text)
    for parse in (parse_node_list, parse_block_size):
        try:
            parse(text)
        except ValueError as error:
            assert "Exceeds the limit" not in str(error)
    parse_hugepage_pool(2048, text)
    parse_kernel_image_range(text)
    parse_kernel_image_range("%s-%s : Kernel code\n" % (text[:8000], text[::-1][:8000]))


@FAST
@given(TEXTS)
def test_env_and_unit_readers(text):
    parse_env_file(text)
    parse_env_file("A=%s\n" % text)
    parse_unit_lines("[Service]\nExecStart=%s\n" % text, "/u.service")
    try:
        parse_reserved_memory_flag("%s:memory=%s" % (text[:9000], text[:64]))
    except ValueError as error:
        assert "Exceeds the limit" not in str(error)


def test_config_dir_walk_stops_at_the_nesting_limit(tmp_path):
    path = os.path.join(str(tmp_path), "etc/kubelet.conf.d")
    os.makedirs(os.path.join(path, *["d"] * (MAX_NESTING + 400)))
    found, problems = walk_config_dir(HostFiles(str(tmp_path)), "/etc/kubelet.conf.d")
    assert found == []
    assert len(problems) == 1 and "deeper than %d levels" % MAX_NESTING in problems[0]


@pytest.mark.parametrize("depth", [MAX_NESTING - 1])
def test_config_dir_walk_reads_what_is_within_the_limit(tmp_path, depth):
    deepest = os.path.join(str(tmp_path), "etc/kubelet.conf.d", *["d"] * depth)
    os.makedirs(deepest)
    with open(os.path.join(deepest, "10.conf"), "w") as handle:
        handle.write("{}")
    found, problems = walk_config_dir(HostFiles(str(tmp_path)), "/etc/kubelet.conf.d")
    assert problems == [] and len(found) == 1
