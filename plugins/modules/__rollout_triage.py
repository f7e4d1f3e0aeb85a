#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __rollout_triage
short_description: Pick the nodes that need the remediate procedure (internal)
version_added: 0.1.0
description:
  - Internal to the playbook C(nodeops.numa_drift.remediate) (an action plugin, run once on the controller after
    the first pass; the decisions are pure functions in C(plugins/plugin_utils/_triage.py)).
  - A node whose probe says there is nothing to do leaves the rollout with the outcome its procedure would record,
    unless an earlier run of ours left its mark on the Node (one list of the cluster's Nodes answers that).
    Every other node goes through the procedure, in inventory order.
  - Sets on its host (C(delegate_facts) to localhost) C(numa_drift_targets), C(numa_drift_work_hosts) and
    C(numa_drift_settled) (host to outcome).
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Only reads.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  hosts:
    description: The targeted hosts, in inventory order.
    type: list
    elements: str
    required: true
  triages:
    description: Each host's registered first-pass plan (M(nodeops.numa_drift.__remediate_plan) with C(record=false)).
    type: list
    elements: raw
    required: true
  probes:
    description:
      - Each host's registered probe result of the first pass (C(remediate_probe)).
      - A host whose probe did not reach it (C(unreachable)) is left out of the rollout, reported as unreachable.
    type: list
    elements: raw
    required: true
  annotation_prefix:
    description: The prefix of the annotations the role writes on a Node.
    type: str
    default: numa-drift.nodeops.io
  kubeconfig:
    description: Path to the kubeconfig (kubernetes.core's default when unset).
    type: path
  context:
    description: The kubeconfig context.
    type: str
"""

EXAMPLES = r"""
- name: Pick the nodes that need the procedure
  nodeops.numa_drift.__rollout_triage:
    hosts: "{{ ansible_play_hosts_all }}"
    triages: "{{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='remediate_triage', default={}) | list }}"
    probes: "{{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='remediate_probe', default={}) | list }}"
  delegate_to: localhost
  delegate_facts: true
  run_once: true
"""

RETURN = r"""
work:
  description: The hosts that go through the procedure, in inventory order.
  returned: success
  type: list
  elements: str
settled:
  description: The hosts settled by their probe.
  returned: success
  type: list
  elements: str
"""
