# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_golang/stamp.py: the release stamped in a Go program's file, read without running
it, and every shape where the file cannot tell (then the program is asked, tests/unit/.../_kubelet/test_release.py).
The real kubelet binaries are read in tests/kubelet_judge/test_kubelet_judge_releases.py."""

from __future__ import annotations

import os
import struct

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.stamp import release_in_image, stamped_release
from ansible_collections.nodeops.numa_drift.tests.support.go_images import go_image

UNSTAMPED = "v0.0.0-master+$Format:%H$"  # k8s.io/component-base/version's own value when the build stamps none


@pytest.mark.parametrize("values, release", [
    (["v1.34.4"], "v1.34.4"),
    (["v1.34.4", "v1.34.4"], "v1.34.4"),  # component-base's and client-go's variables, both stamped
    (["v1.34.4", UNSTAMPED], "v1.34.4"),  # only component-base's stamped (the guests' build)
    (["v1.34.4+k3s1"], "v1.34.4+k3s1"),
    (["v1.37.0-rc.1"], "v1.37.0-rc.1"),
    ([UNSTAMPED], None),  # no release: kubelet --version would say v0.0.0-master
    ([], None),
    (["v1.34.4", "v1.2.3"], None),  # a dependency's version beside kubelet's: which is kubelet's is not known
    (["v1.34.4 "], None), (["1.34.4"], None), (["version v1.34.4"], None),
])
def test_the_one_release_a_data_string_variable_holds_is_the_answer(values, release):
    assert release_in_image(go_image(values)) == release


def test_a_position_independent_build_has_no_pointer_in_the_file_and_says_nothing():
    assert release_in_image(go_image(["v1.34.4"], relocated=True)) is None


@pytest.mark.parametrize("damage", [
    lambda image: image[:4] + b"\x01" + image[5:],  # 32-bit
    lambda image: image[:5] + b"\x02" + image[6:],  # big-endian
    lambda image: b"#!/bin/sh\necho Kubernetes v1.34.4\n",  # a script: asked instead
    lambda image: image[:40],  # cut in its header
    lambda image: image[:len(image) // 2],  # section headers beyond the end
    lambda image: image[:0x28] + struct.pack("<Q", 2 ** 63) + image[0x30:],  # section headers nowhere
    lambda image: image[:0x3C] + struct.pack("<H", 0xFFFF) + image[0x3E:],  # 65,535 sections
    lambda image: image[:0x3E] + struct.pack("<H", 9) + image[0x40:],  # the names' section beyond the count
    lambda image: b"",
])
def test_a_file_that_is_not_such_an_image_says_nothing(damage):
    assert release_in_image(damage(go_image(["v1.34.4"]))) is None


@pytest.mark.parametrize("moved", [2 ** 20, -4096, 2 ** 64 - 0x2834000 - 1])
def test_a_header_pointing_outside_the_read_only_data_is_passed_over(moved):
    assert release_in_image(go_image(["v1.34.4"], moved=moved)) is None


def test_the_file_is_read_not_run_and_only_a_regular_file_is_read(tmp_path):
    program = tmp_path / "kubelet"
    program.write_bytes(go_image(["v1.35.4"]))
    program.chmod(0o644)  # not even executable: it is read
    assert stamped_release(str(program)) == "v1.35.4"
    link = tmp_path / "link"
    link.symlink_to(program)
    assert stamped_release(str(link)) is None  # the caller resolves links first; a link here is not followed
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert stamped_release(str(fifo)) is None  # opened without blocking, then refused
    assert stamped_release(str(tmp_path)) is None
    assert stamped_release(str(tmp_path / "missing")) is None
    (tmp_path / "empty").write_bytes(b"")
    assert stamped_release(str(tmp_path / "empty")) is None


def test_a_file_with_more_string_headers_than_a_kubelet_has_is_not_looked_through(monkeypatch):
    # A crafted .data full of headers costs the node no more than MAX_HEADERS looks; then kubelet is asked instead.
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang import stamp  # pylint: disable=import-outside-toplevel

    image = go_image(["v1.34.4"], noise=64)  # 42 of its other words look like a length word, the release's one more
    monkeypatch.setattr(stamp, "MAX_HEADERS", 43)
    assert release_in_image(image) == "v1.34.4"
    monkeypatch.setattr(stamp, "MAX_HEADERS", 42)
    assert release_in_image(image) is None
