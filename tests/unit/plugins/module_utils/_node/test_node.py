# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_node/ (model, parsers, iomem, sysfs): sysfs NUMA memory, hugepages, /proc/iomem kernel span."""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import (
    auto_bound_bytes,
    kernel_span_bound,
    KERNEL_SPAN_MARGIN_BYTES,
    memory_block_index,
    parse_kernel_image_range,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import KernelImage
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.parsers import parse_block_size, parse_meminfo_total, parse_node_list
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import NodeReadError, read_node_facts
from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils.nodetree import (
    DEFAULT_BLOCK_SIZE,
    OMIT,
    PR_140473_IOMEM,
    build_node_tree,
    iomem_text,
    node_list_text,
)

try:
    from hypothesis import given, strategies as st
except ImportError:  # pragma: no cover - hypothesis is in requirements.txt
    given = None

MiB = 1024 * 1024
GiB = 1024 * MiB

# spec 7.2 worked example
PR_START = 0xAFF800000
PR_END = 0xB02BFFFFF
PR_SPAN = 54525952
PR_BOUND = 121634816


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


# --------------------------------------------------------------------------- iomem


def test_spec_7_2_worked_example():
    found, reason = parse_kernel_image_range(PR_140473_IOMEM)
    assert reason is None
    assert found == (PR_START, PR_END) == (47236251648, 47290777599)
    span = found[1] - found[0] + 1
    assert span == PR_SPAN
    assert kernel_span_bound(span) == PR_BOUND
    assert KERNEL_SPAN_MARGIN_BYTES == 67108864


def test_spec_7_2_blocks_straddle_351_and_352():
    assert memory_block_index(PR_START, 0x8000000) == 351
    assert memory_block_index(PR_END, 0x8000000) == 352


def test_zeroed_iomem_is_unknown_and_says_why():
    zeroed = PR_140473_IOMEM.replace("aff800000-b00dfffff", "00000000-00000000")
    zeroed = zeroed.replace("b01e00000-b0225523f", "00000000-00000000").replace("b02752000-b02bfffff", "00000000-00000000")
    found, reason = parse_kernel_image_range(zeroed)
    assert found is None
    assert "CAP_SYS_ADMIN" in reason and "zero" in reason


def test_iomem_without_kernel_lines_is_unknown_with_a_different_reason():
    found, reason = parse_kernel_image_range("00100000-b7ffffff : System RAM\n  fee00000-fee00fff : Local APIC\n")
    assert found is None
    assert "no 'Kernel code'" in reason
    assert "CAP_SYS_ADMIN" not in reason


def test_iomem_only_rodata_is_not_a_kernel_line():
    found, reason = parse_kernel_image_range("  01000000-01ffffff : Kernel rodata\n")
    assert found is None and "no 'Kernel code'" in reason


def test_iomem_seventeen_digit_value_that_overflows_is_skipped():
    text = (
        "    10000000000000000-10000000000000fff : Kernel code\n"  # 2^64: does not fit
        "    b01e00000-b0225523f : Kernel data\n"
        "    b02752000-b02bfffff : Kernel bss\n"
    )
    found, reason = parse_kernel_image_range(text)
    assert reason is None
    assert found == (0xB01E00000, 0xB02BFFFFF)


def test_iomem_seventeen_digits_with_leading_zero_still_parse():
    text = "    0000000aff800000-0000000b00dfffff : Kernel code\n    0b02752000-b02bfffff : Kernel bss\n"
    assert parse_kernel_image_range(text) == ((PR_START, PR_END), None)


def test_iomem_only_overflowing_lines_is_unknown():
    found, reason = parse_kernel_image_range("  1ffffffffffffffff-1ffffffffffffffff : Kernel code\n")
    assert found is None
    assert "valid 64-bit address range" in reason


@pytest.mark.parametrize(
    "bad_line",
    [
        "    b0225523f-b01e00000 : Kernel data",  # end below start
        "    0xb01e00000-0xb0225523f : Kernel data",  # Go ParseUint base 16 takes no prefix
        "    b01e00000 : Kernel data",  # no dash
        "    b01e00000-zzzz : Kernel data",
        "    -b0225523f : Kernel data",
        "    : Kernel data",
    ],
)
def test_iomem_malformed_kernel_lines_are_skipped(bad_line):
    text = "    aff800000-b00dfffff : Kernel code\n%s\n" % bad_line
    assert parse_kernel_image_range(text) == ((PR_START, 0xB00DFFFFF), None)


def test_iomem_name_is_taken_after_the_last_colon():
    # "PCI Bus 0000:00" has colons in its name and is not a kernel line; a line whose text after the
    # last ':' is "Kernel code" but whose range part then holds " : weird" is malformed and skipped.
    text = (
        "000a0000-000bffff : PCI Bus 0000:00\n"
        "  00100000-001fffff : weird: Kernel code\n"
        "  aff800000-b00dfffff :   Kernel code  \n"
    )
    assert parse_kernel_image_range(text) == ((PR_START, 0xB00DFFFFF), None)
    found, reason = parse_kernel_image_range("  00100000-001fffff : weird: Kernel code\n")
    assert found is None and "valid 64-bit address range" in reason


def test_iomem_zero_line_among_real_ones_does_not_widen_the_span():
    text = PR_140473_IOMEM + "    00000000-00000000 : Kernel bss\n"
    assert parse_kernel_image_range(text) == ((PR_START, PR_END), None)


def test_bound_is_unknown_when_span_is_unknown():
    assert kernel_span_bound(None) is None
    assert kernel_span_bound(100, margin=5) == 105
    unknown = KernelImage(None, None, None, (), (), "x", None)
    assert auto_bound_bytes(unknown) is None


if given is not None:

    @given(st.text(max_size=400))
    def test_iomem_parser_never_raises_on_arbitrary_text(text):
        found, reason = parse_kernel_image_range(text)
        assert (found is None) != (reason is None)
        if found is not None:
            assert 0 <= found[0] <= found[1] < 2 ** 64

    @given(st.sets(st.integers(min_value=0, max_value=300), max_size=40))
    def test_node_list_round_trip_property(ids):
        assert parse_node_list(node_list_text(ids)) == tuple(sorted(ids))

    @given(st.text(max_size=200))
    def test_meminfo_parser_never_raises(text):
        total = parse_meminfo_total(text)
        assert total is None or (total % 1024 == 0 and total < 2 ** 64)


def read_hostile(root):
    """A tree with a required file unreadable or malformed: the strict read raises NodeReadError naming
    exactly the errors the lenient read reports; returns the lenient read's facts."""
    with pytest.raises(NodeReadError) as raised:
        read_node_facts(root)
    facts = read_node_facts(root, strict=False)
    assert facts.read_errors
    assert raised.value.problems == facts.read_errors
    assert str(raised.value) == "the node's NUMA memory cannot be read: " + "; ".join(facts.read_errors)
    return facts


# --------------------------------------------------------------------------- whole trees


def _two_node_spec(node0_kb=131452848, node1_kb=132106924, gib_pages=4):
    return {
        0: {"mem_total_kb": node0_kb, "hugepages": {2048: 0, 1048576: gib_pages}},
        1: {"mem_total_kb": node1_kb, "hugepages": {2048: 0, 1048576: gib_pages}},
    }


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_reads_every_numa_node(tmp_path, count):
    nodes = {node_id: {"mem_total_kb": (node_id + 1) * 1024 * 1024} for node_id in range(count)}
    facts = read_node_facts(build_node_tree(tmp_path, nodes=nodes))
    assert facts.problems == ()
    assert facts.node_ids() == tuple(range(count))
    assert [node.mem_total_bytes for node in facts.numa_nodes] == [(i + 1) * GiB for i in range(count)]
    assert facts.online == tuple(range(count)) == facts.possible
    assert facts.machine_mem_total_bytes == sum((i + 1) * GiB for i in range(count))
    assert facts.memory_only_node_ids() == ()
    assert all(node.has_cpus is True for node in facts.numa_nodes)


def test_node_ids_sort_numerically_not_lexically(tmp_path):
    nodes = {node_id: {"mem_total_kb": 1024 * 1024} for node_id in (0, 2, 10)}
    facts = read_node_facts(build_node_tree(tmp_path, nodes=nodes))
    assert facts.node_ids() == (0, 2, 10)
    assert facts.node(10).id == 10 and facts.node(1) is None


def test_spec_10_after_reboot_machine(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, nodes=_two_node_spec()))
    node0, node1 = facts.numa_nodes
    assert node0.mem_total_bytes == 134607716352
    assert node1.mem_total_bytes == 135277490176
    assert [pool.resource_name for pool in node0.hugepages] == ["hugepages-1Gi", "hugepages-2Mi"]
    gib, two_mib = node0.hugepages
    assert (gib.page_size_kib, gib.nr_pages, gib.total_bytes) == (1048576, 4, 4 * GiB)
    assert (two_mib.page_size_kib, two_mib.nr_pages, two_mib.total_bytes) == (2048, 0, 0)
    assert node1.hugepage_pool("hugepages-1Gi").total_bytes == 4294967296
    assert facts.hugepage_resource_names() == ("hugepages-1Gi", "hugepages-2Mi")
    assert all(node.is_complete for node in facts.numa_nodes)


def test_hugepages_of_both_sizes_with_pages(tmp_path):
    nodes = {0: {"mem_total_kb": 8 * 1024 * 1024, "hugepages": {2048: 512, 1048576: 2}}}
    node = read_node_facts(build_node_tree(tmp_path, nodes=nodes)).numa_nodes[0]
    assert {pool.resource_name: pool.total_bytes for pool in node.hugepages} == {
        "hugepages-2Mi": 512 * 2 * MiB,
        "hugepages-1Gi": 2 * GiB,
    }


def test_unusual_hugepage_sizes_get_kubelet_names(tmp_path):
    nodes = {0: {"hugepages": {64: 3, 32768: 1, 16777216: 1}}}
    node = read_node_facts(build_node_tree(tmp_path, nodes=nodes)).numa_nodes[0]
    assert [pool.resource_name for pool in node.hugepages] == ["hugepages-16Gi", "hugepages-32Mi", "hugepages-64Ki"]


def test_no_hugepages_directory_means_no_sizes_and_no_problem(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, nodes={0: {"hugepages": OMIT}}))
    assert facts.numa_nodes[0].hugepages == ()
    assert facts.problems == ()


def test_unreadable_nr_hugepages_is_a_problem_not_a_crash(tmp_path):
    nodes = {0: {"hugepages": {2048: OMIT, 1048576: "four\n"}}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    node = facts.numa_nodes[0]
    assert [(pool.resource_name, pool.nr_pages, pool.total_bytes) for pool in node.hugepages] == [
        ("hugepages-1Gi", None, None),
        ("hugepages-2Mi", None, None),
    ]
    assert not node.is_complete
    assert len(node.problems) == 2
    assert any("hugepages-2048kB/nr_hugepages" in problem and "cannot read" in problem for problem in node.problems)
    assert any("'four' is not a page count" in problem for problem in node.problems)
    assert set(node.problems) <= set(facts.problems)


def test_stray_entry_in_hugepages_directory_is_reported(tmp_path):
    root = build_node_tree(tmp_path, extra_files={"sys/devices/system/node/node0/hugepages/README": "x"})
    facts = read_hostile(root)
    assert [pool.resource_name for pool in facts.numa_nodes[0].hugepages] == ["hugepages-1Gi", "hugepages-2Mi"]
    assert any("unexpected entry 'README'" in problem for problem in facts.problems)


def test_hugepage_total_overflowing_64_bits_is_reported(tmp_path):
    nodes = {0: {"hugepages": {1048576: str(2 ** 50)}}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    pool = facts.numa_nodes[0].hugepages[0]
    assert pool.nr_pages == 2 ** 50 and pool.total_bytes is None
    assert any("do not fit in 64 bits" in problem for problem in facts.problems)


def test_memory_only_node(tmp_path):
    nodes = {0: {"mem_total_kb": 16 * 1024 * 1024}, 1: {"mem_total_kb": 64 * 1024 * 1024, "cpulist": "\n"}}
    facts = read_node_facts(build_node_tree(tmp_path, nodes=nodes))
    assert facts.problems == ()
    assert facts.node(1).has_cpus is False
    assert facts.node(1).is_memory_only
    assert facts.memory_only_node_ids() == (1,)
    assert facts.node(1).mem_total_bytes == 64 * GiB


def test_node_without_cpulist_has_unknown_cpus(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, nodes={0: {"cpulist": OMIT}, 1: {"cpulist": "garbage"}}))
    assert facts.node(0).has_cpus is None and facts.node(1).has_cpus is None
    assert facts.memory_only_node_ids() == ()


def test_missing_meminfo_is_unknown_with_a_problem(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, nodes={0: {}, 1: {"meminfo_text": OMIT}}))
    assert facts.node(0).mem_total_bytes == 4 * GiB
    assert facts.node(1).mem_total_bytes is None
    assert not facts.node(1).is_complete
    [problem] = facts.problems
    assert "node1/meminfo" in problem and "cannot read" in problem


def test_letters_in_meminfo_are_unknown_with_a_problem(tmp_path):
    nodes = {0: {"meminfo_text": "Node 0 MemTotal:       64296O6O kB\n"}}
    facts = read_hostile(build_node_tree(tmp_path, nodes=nodes))
    assert facts.node(0).mem_total_bytes is None
    assert facts.problems == (os.path.join(str(tmp_path), "sys/devices/system/node/node0/meminfo") + ": no 'MemTotal: <number> kB' line",)


def test_odd_whitespace_in_meminfo_file(tmp_path):
    nodes = {0: {"meminfo_text": "\n\t Node 0 MemTotal:\t\t 1048576 kB \t\n\n"}}
    facts = read_node_facts(build_node_tree(tmp_path, nodes=nodes))
    assert facts.node(0).mem_total_bytes == GiB and facts.problems == ()


def test_zero_memtotal_is_a_problem(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, nodes={0: {"mem_total_kb": 0}}))
    assert facts.node(0).mem_total_bytes == 0
    assert any("MemTotal is 0" in problem for problem in facts.problems)


def test_binary_garbage_in_meminfo_does_not_crash(tmp_path):
    root = build_node_tree(tmp_path)
    with open(os.path.join(root, "sys/devices/system/node/node0/meminfo"), "wb") as handle:
        handle.write(b"\xff\xfe\x00MemTotal: \xc3 12 kB")
    facts = read_hostile(root)
    assert facts.node(0).mem_total_bytes is None and len(facts.problems) == 1


def test_directory_where_meminfo_should_be(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {"meminfo_text": OMIT}})
    os.makedirs(os.path.join(root, "sys/devices/system/node/node0/meminfo"))
    facts = read_hostile(root)
    assert facts.node(0).mem_total_bytes is None
    assert "cannot read" in facts.problems[0]


def test_missing_sysfs_node_directory_entirely(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, node_sysfs_dir=False))
    assert facts.numa_nodes == () and facts.node_ids() == ()
    assert facts.online is None and facts.possible is None
    assert len(facts.problems) == 1 and "no NUMA topology" in facts.problems[0]


def test_node_directory_without_any_node(tmp_path):
    facts = read_hostile(build_node_tree(tmp_path, nodes={}))
    assert facts.numa_nodes == ()
    assert facts.online == ()
    assert any("no node<N> directory" in problem for problem in facts.problems)


def test_entries_that_only_look_like_nodes_are_ignored(tmp_path):
    root = build_node_tree(
        tmp_path,
        extra_files={
            "sys/devices/system/node/nodeX/meminfo": "MemTotal: 1 kB",
            "sys/devices/system/node/node1abc/meminfo": "MemTotal: 1 kB",
        },
    )
    assert read_node_facts(root).node_ids() == (0,)


def test_online_and_possible_lists(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {}, 1: {}}, online="0-1\n", possible="0-3\n")
    facts = read_node_facts(root)
    assert facts.online == (0, 1) and facts.possible == (0, 1, 2, 3)


def test_garbage_online_list_is_a_problem_and_missing_is_not(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, online="zero\n", possible=OMIT))
    assert facts.online is None and facts.possible is None
    assert len(facts.problems) == 1 and "online" in facts.problems[0]


def test_root_prefix_is_honoured(tmp_path):
    host = tmp_path / "host"
    build_node_tree(host, nodes={0: {"mem_total_kb": 1024}})
    assert read_node_facts(str(host) + "/").node(0).mem_total_bytes == 1024 * 1024
    assert read_hostile(str(tmp_path)).numa_nodes == ()


# --------------------------------------------------------------------------- kernel image on a tree


def test_default_tree_puts_the_kernel_on_node_0(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, nodes={0: {}, 1: {}}))
    image = facts.kernel_image
    assert image.known and image.unknown_reason is None
    # default sections: code 14 MiB + rodata 8 MiB + data 4 MiB + bss 6 MiB, from 16 MiB
    assert (image.start, image.end, image.span_bytes) == (16 * MiB, 48 * MiB - 1, 32 * MiB)
    assert image.memory_blocks == (0,)
    assert image.numa_nodes == (0,)
    assert auto_bound_bytes(image) == 96 * MiB
    assert facts.block_size_bytes == DEFAULT_BLOCK_SIZE


def test_spec_7_2_fixture_straddles_two_blocks_on_two_nodes(tmp_path):
    nodes = {
        0: {"mem_total_kb": 44 * 1024 * 1024, "memory_blocks": range(0, 352)},
        1: {"mem_total_kb": 44 * 1024 * 1024, "memory_blocks": range(352, 704)},
    }
    facts = read_node_facts(build_node_tree(tmp_path, nodes=nodes, iomem=PR_140473_IOMEM))
    image = facts.kernel_image
    assert (image.start, image.end, image.span_bytes) == (PR_START, PR_END, PR_SPAN)
    assert auto_bound_bytes(image) == PR_BOUND
    assert image.memory_blocks == (351, 352)
    assert image.numa_nodes == (0, 1)
    assert image.location_reason is None
    assert 351 in facts.node(0).memory_blocks and 352 in facts.node(1).memory_blocks


def test_kernel_image_moved_by_kaslr_to_node_1(tmp_path):
    nodes = {0: {"mem_total_kb": 2 * 1024 * 1024}, 1: {"mem_total_kb": 2 * 1024 * 1024}}
    # node 0 owns blocks 0-15 (2 GiB / 128 MiB), node 1 blocks 16-31
    root = build_node_tree(tmp_path, nodes=nodes, iomem=iomem_text(kernel_start=0x8A000000, ram_end=4 * GiB))
    image = read_node_facts(root).kernel_image
    assert image.memory_blocks == (17,)
    assert image.numa_nodes == (1,)


def test_zeroed_iomem_on_a_tree(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, iomem=iomem_text(zeroed=True)))
    image = facts.kernel_image
    assert image.span_bytes is None and image.numa_nodes == ()
    assert "CAP_SYS_ADMIN" in image.unknown_reason
    assert auto_bound_bytes(image) is None
    assert facts.problems == ()  # an unknown bound is the drift engine's verdict, not a read problem


def test_missing_iomem(tmp_path):
    image = read_node_facts(build_node_tree(tmp_path, iomem=OMIT)).kernel_image
    assert image.span_bytes is None
    assert "cannot read" in image.unknown_reason and "proc/iomem" in image.unknown_reason


def test_iomem_with_overflow_on_a_tree(tmp_path):
    text = "  1ffffffffffffffff-1ffffffffffffffff : Kernel code\n  00100000-001fffff : Kernel bss\n"
    image = read_node_facts(build_node_tree(tmp_path, iomem=text)).kernel_image
    assert (image.start, image.end, image.span_bytes) == (0x100000, 0x1FFFFF, MiB)
    assert image.numa_nodes == (0,)


def test_implausible_span_is_refused(tmp_path):
    text = "  00100000-001fffff : Kernel code\n  7ff00000000-7ff000fffff : Kernel bss\n"
    image = read_node_facts(build_node_tree(tmp_path, iomem=text)).kernel_image
    assert image.span_bytes is None
    assert "implausible" in image.unknown_reason
    assert auto_bound_bytes(image) is None


def test_missing_block_size_keeps_the_span_but_not_the_location(tmp_path):
    image = read_node_facts(build_node_tree(tmp_path, block_size_bytes=OMIT)).kernel_image
    assert image.span_bytes == 32 * MiB
    assert image.numa_nodes == ()
    assert "block_size_bytes" in image.location_reason


def test_garbage_block_size(tmp_path):
    facts = read_node_facts(build_node_tree(tmp_path, block_size_bytes="lots\n"))
    assert facts.block_size_bytes is None
    assert "not a hexadecimal block size" in facts.kernel_image.location_reason


def test_kernel_block_owned_by_no_node(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {"memory_blocks": [5, 6]}})
    image = read_node_facts(root).kernel_image
    assert image.span_bytes == 32 * MiB
    assert image.numa_nodes == ()
    assert image.location_reason == "no NUMA node directory has memory0"
