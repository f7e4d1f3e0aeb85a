# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/document.py: a KubeletConfiguration document (JSON, else YAML as
sigs.k8s.io/yaml reads it) as a mapping, or the problems that keep it from being one."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.document import parse_kubelet_config

KIND = '"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"'


def test_json_and_yaml_give_the_same_mapping():
    json_text = '{%s, "memoryManagerPolicy": "Static", "systemReserved": {"memory": "1Gi"}}' % KIND
    yaml_text = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                 "memoryManagerPolicy: Static\nsystemReserved:\n  memory: 1Gi\n")
    expected = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                "memoryManagerPolicy": "Static", "systemReserved": {"memory": "1Gi"}}
    assert parse_kubelet_config(json_text) == (expected, [])
    assert parse_kubelet_config(yaml_text) == (expected, [])


def test_a_byte_order_mark_is_ignored():
    assert parse_kubelet_config('\ufeff{"memoryManagerPolicy": "Static"}') == ({"memoryManagerPolicy": "Static"}, [])


@pytest.mark.parametrize("text", ["null", "# only a comment\n", "---\n"])
def test_an_empty_document_is_an_empty_mapping(text):
    # A document that decodes to nothing sets no field (an empty *file* is refused by the loader, not here).
    assert parse_kubelet_config(text) == ({}, [])


@pytest.mark.parametrize("text, problem", [
    ('["Static"]', "the document is a list, not a KubeletConfiguration mapping"),
    ("42", "the document is an integer, not a KubeletConfiguration mapping"),
    ("- memoryManagerPolicy: Static\n", "the document is a list, not a KubeletConfiguration mapping"),
    ('{"kind": "Pod"}', "the document is a 'Pod', not a KubeletConfiguration"),
    ("kind: KubeletConfigurations\n", "the document is a 'KubeletConfigurations', not a KubeletConfiguration"),
])
def test_what_is_not_a_kubelet_configuration_is_a_problem(text, problem):
    assert parse_kubelet_config(text) == (None, [problem])


def test_yaml_kubelet_cannot_read_is_a_problem_naming_the_line():
    document, problems = parse_kubelet_config("memoryManagerPolicy: Static\nreservedMemory: [\n")
    assert document is None and len(problems) == 1 and problems[0].startswith("not valid YAML: line ")


def test_a_drop_in_must_name_its_api_version_and_kind():
    # Kubelet decodes a --config-dir drop-in with its codec, which needs both (kubelet-config-file docs);
    # a --config file without them is read (kubelet defaults its type).
    bare = '{"memoryManagerPolicy": "Static"}'
    assert parse_kubelet_config(bare) == ({"memoryManagerPolicy": "Static"}, [])
    refused = (None, ["a drop-in must set apiVersion and kind: KubeletConfiguration"])
    assert parse_kubelet_config(bare, require_kind=True) == refused
    assert parse_kubelet_config('{"kind": "KubeletConfiguration"}', require_kind=True) == refused
    assert parse_kubelet_config('{"apiVersion": "kubelet.config.k8s.io/v1beta1"}', require_kind=True) == refused
    document, problems = parse_kubelet_config('{%s}' % KIND, require_kind=True)
    assert problems == [] and document["kind"] == "KubeletConfiguration"
