# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/module_args.py: the node options every node module takes."""

from __future__ import annotations

import inspect

from ansible_collections.nodeops.numa_drift.plugins.doc_fragments.node_options import ModuleDocFragment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import FACTS_OPTIONS_SPEC, NODE_OPTIONS_SPEC, probe_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe

import yaml


def test_the_node_options_are_probes_parameters_and_the_doc_fragments_options():
    # root names where the node's files are: the probe takes those files (HostFiles(root)) in its place.
    assert set(NODE_OPTIONS_SPEC) - {"root"} == set(inspect.signature(probe).parameters) - {"files"}
    assert list(inspect.signature(probe).parameters)[0] == "files"
    assert set(NODE_OPTIONS_SPEC) == set(yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"])


def test_probe_arguments_take_exactly_the_node_options_but_root():
    params = {name: "value-%s" % name for name in NODE_OPTIONS_SPEC}
    params.update(state="repaired", backup=True, read_timeout=5)
    assert probe_arguments(params) == {name: "value-%s" % name for name in NODE_OPTIONS_SPEC if name != "root"}


def test_the_facts_options_are_the_node_options_and_the_read_timeout():
    assert set(FACTS_OPTIONS_SPEC) == set(NODE_OPTIONS_SPEC) | {"read_timeout"}
    assert FACTS_OPTIONS_SPEC["read_timeout"] == {"type": "int", "default": 120}
