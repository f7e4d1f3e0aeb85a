# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_node/iomem.py: /proc/iomem's kernel span and the bound, parsed and on a tree."""

from __future__ import annotations


import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.iomem import (
    auto_bound_bytes,
    kernel_span_bound,
    KERNEL_SPAN_MARGIN_BYTES,
    memory_block_index,
    parse_kernel_image_range,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import KernelImage
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import read_node_facts
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import (
    DEFAULT_BLOCK_SIZE,
    OMIT,
    PR_140473_IOMEM,
    build_node_tree,
    iomem_text,
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


# --------------------------------------------------------------------------- kernel image on a tree


def test_default_tree_puts_the_kernel_on_node_0(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes={0: {}, 1: {}})))
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
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, nodes=nodes, iomem=PR_140473_IOMEM)))
    image = facts.kernel_image
    assert (image.start, image.end, image.span_bytes) == (PR_START, PR_END, PR_SPAN)
    assert auto_bound_bytes(image) == PR_BOUND
    assert image.memory_blocks == (351, 352)
    assert image.numa_nodes == (0, 1)
    assert image.location_reason is None
    assert 351 in facts.numa_nodes[0].memory_blocks and 352 in facts.numa_nodes[1].memory_blocks


def test_kernel_image_moved_by_kaslr_to_node_1(tmp_path):
    nodes = {0: {"mem_total_kb": 2 * 1024 * 1024}, 1: {"mem_total_kb": 2 * 1024 * 1024}}
    # node 0 owns blocks 0-15 (2 GiB / 128 MiB), node 1 blocks 16-31
    root = build_node_tree(tmp_path, nodes=nodes, iomem=iomem_text(kernel_start=0x8A000000, ram_end=4 * GiB))
    image = read_node_facts(HostFiles(root)).kernel_image
    assert image.memory_blocks == (17,)
    assert image.numa_nodes == (1,)


def test_zeroed_iomem_on_a_tree(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, iomem=iomem_text(zeroed=True))))
    image = facts.kernel_image
    assert image.span_bytes is None and image.numa_nodes == ()
    assert "CAP_SYS_ADMIN" in image.unknown_reason
    assert auto_bound_bytes(image) is None
    assert facts.problems == ()  # an unknown bound is the drift engine's verdict, not a read problem


def test_missing_iomem(tmp_path):
    image = read_node_facts(HostFiles(build_node_tree(tmp_path, iomem=OMIT))).kernel_image
    assert image.span_bytes is None
    assert "cannot read" in image.unknown_reason and "proc/iomem" in image.unknown_reason


def test_iomem_with_overflow_on_a_tree(tmp_path):
    text = "  1ffffffffffffffff-1ffffffffffffffff : Kernel code\n  00100000-001fffff : Kernel bss\n"
    image = read_node_facts(HostFiles(build_node_tree(tmp_path, iomem=text))).kernel_image
    assert (image.start, image.end, image.span_bytes) == (0x100000, 0x1FFFFF, MiB)
    assert image.numa_nodes == (0,)


def test_implausible_span_is_refused(tmp_path):
    text = "  00100000-001fffff : Kernel code\n  7ff00000000-7ff000fffff : Kernel bss\n"
    image = read_node_facts(HostFiles(build_node_tree(tmp_path, iomem=text))).kernel_image
    assert image.span_bytes is None
    assert "implausible" in image.unknown_reason
    assert auto_bound_bytes(image) is None


def test_missing_block_size_keeps_the_span_but_not_the_location(tmp_path):
    image = read_node_facts(HostFiles(build_node_tree(tmp_path, block_size_bytes=OMIT))).kernel_image
    assert image.span_bytes == 32 * MiB
    assert image.numa_nodes == ()
    assert "block_size_bytes" in image.location_reason


def test_garbage_block_size(tmp_path):
    facts = read_node_facts(HostFiles(build_node_tree(tmp_path, block_size_bytes="lots\n")))
    assert facts.block_size_bytes is None
    assert "not a hexadecimal block size" in facts.kernel_image.location_reason


def test_kernel_block_owned_by_no_node(tmp_path):
    root = build_node_tree(tmp_path, nodes={0: {"memory_blocks": [5, 6]}})
    image = read_node_facts(HostFiles(root)).kernel_image
    assert image.span_bytes == 32 * MiB
    assert image.numa_nodes == ()
    assert image.location_reason == "no NUMA node directory has memory0"
