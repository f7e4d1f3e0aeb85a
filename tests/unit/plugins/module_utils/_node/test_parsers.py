# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_node/parsers.py: /sys and /proc texts (meminfo, node lists, block size)."""

from __future__ import annotations


import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.parsers import parse_block_size, parse_meminfo_total, parse_node_list
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import node_list_text

try:
    from hypothesis import given, strategies as st
except ImportError:  # pragma: no cover - hypothesis is in requirements.txt
    given = None

MiB = 1024 * 1024
GiB = 1024 * MiB


# --------------------------------------------------------------------------- meminfo


def test_meminfo_total_realistic_node_file():
    text = "Node 0 MemTotal:       64296060 kB\nNode 0 MemFree:        1000 kB\n"
    assert parse_meminfo_total(text) == 64296060 * 1024


@pytest.mark.parametrize(
    "text",
    [
        "\n\n   Node 1 MemTotal:\t\t  131452848 kB   \n\n",
        "Node 1 MemTotal:131452848 kB",
        "Node 1 MemTotal: \t 131452848 kB\r\nNode 1 MemFree: 5 kB\r\n",
    ],
    ids=["surrounding-blank-lines-and-tabs", "no-space-after-colon", "crlf"],
)
def test_meminfo_total_odd_whitespace(text):
    assert parse_meminfo_total(text) == 131452848 * 1024


@pytest.mark.parametrize(
    "text",
    [
        "Node 0 MemTotal:       64a96060 kB\n",
        "Node 0 MemTotal:       lots kB\n",
        "Node 0 MemTotal:       64296060 KB\n",
        "Node 0 MemTotal:       64296060  kB\n",  # cadvisor's regex wants exactly one space
        "Node 0 MemFree:        64296060 kB\n",
        "",
    ],
    ids=["letters-inside", "no-digits", "uppercase-unit", "two-spaces", "no-memtotal", "empty"],
)
def test_meminfo_total_unparsable_is_unknown(text):
    assert parse_meminfo_total(text) is None


def test_meminfo_total_first_match_wins():
    text = "Node 0 MemTotal: 100 kB\nNode 0 MemTotal: 200 kB\n"
    assert parse_meminfo_total(text) == 102400


def test_meminfo_total_that_overflows_64_bits_is_unknown():
    assert parse_meminfo_total("MemTotal: %d kB" % (2 ** 64 // 1024)) is None
    assert parse_meminfo_total("MemTotal: %d kB" % (2 ** 64 // 1024 - 1)) == (2 ** 64 // 1024 - 1) * 1024


# --------------------------------------------------------------------------- lists and block size


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0-3,5\n", (0, 1, 2, 3, 5)),
        ("0\n", (0,)),
        ("\n", ()),
        ("", ()),
        (" 2 , 0-1 ", (0, 1, 2)),
        ("0-1,1-2", (0, 1, 2)),
    ],
)
def test_parse_node_list(text, expected):
    assert parse_node_list(text) == expected


@pytest.mark.parametrize("text", ["a", "3-1", "0-", "-1", "0,,1", "0-3-5", "0-99999999", "1 2"])
def test_parse_node_list_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_node_list(text)


def test_node_list_builder_round_trips():
    ids = (0, 1, 2, 5, 7, 8)
    assert node_list_text(ids) == "0-2,5,7-8\n"
    assert parse_node_list(node_list_text(ids)) == ids


@pytest.mark.parametrize(
    "text, expected", [("8000000\n", 0x8000000), ("80000000", 2 * GiB), ("0x8000000", 0x8000000), ("  400 ", 1024)]
)
def test_parse_block_size(text, expected):
    assert parse_block_size(text) == expected


@pytest.mark.parametrize("text", ["", "zz", "0", "8000000 kB", "1" * 17])
def test_parse_block_size_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_block_size(text)


if given is not None:

    @given(st.sets(st.integers(min_value=0, max_value=300), max_size=40))
    def test_node_list_round_trip_property(ids):
        assert parse_node_list(node_list_text(ids)) == tuple(sorted(ids))

    @given(st.text(max_size=200))
    def test_meminfo_parser_never_raises(text):
        total = parse_meminfo_total(text)
        assert total is None or (total % 1024 == 0 and total < 2 ** 64)
