#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __remediate_outcome
short_description: Record what the remediate role did on one node (internal)
version_added: 0.1.0
description:
  - Internal to the role M(nodeops.numa_drift.remediate) (an action plugin; no module runs on the node).
  - "Sets the fact C(remediate_outcome) after a repair or a failure (O(stage=failed) also sets
    C(remediate_recovery): the failed phase and what to put back; O(stage=recovered) the final outcome)."
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Changes nothing.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  stage:
    description: What just happened.
    type: str
    required: true
    choices: [repaired, failed, recovered]
  outcome:
    description: The current C(remediate_outcome).
    type: dict
    required: true
  options:
    description: The role's variables (C(remediate_options)).
    type: dict
    required: true
  cordon:
    description: The result of M(nodeops.numa_drift.__node_cordon) O(nodeops.numa_drift.__node_cordon#module:state=cordoned).
    type: dict
    default: {}
  repair:
    description: The result of M(nodeops.numa_drift.kubelet_mm_checkpoint).
    type: dict
    default: {}
  failed_task:
    description: The name of the task that failed (O(stage=failed)).
    type: str
    default: ""
  failed_result:
    description: Its result (O(stage=failed)).
    type: dict
    default: {}
  kubelet_active:
    description: Whether kubelet was active at the last look (O(stage=failed)).
    type: bool
    default: false
  recovery:
    description: C(remediate_recovery) (O(stage=recovered)).
    type: dict
    default: {}
  restored:
    description: The original checkpoint was put back (O(stage=recovered)).
    type: bool
    default: false
  notes:
    description: What went wrong while recovering (O(stage=recovered)).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Note the repair
  nodeops.numa_drift.__remediate_outcome:
    stage: repaired
    outcome: "{{ remediate_outcome }}"
    options: "{{ remediate_options }}"
    cordon: "{{ remediate_cordon }}"
    repair: "{{ remediate_repair }}"
"""

RETURN = r"""
ansible_facts:
  description: C(remediate_outcome), and C(remediate_recovery) with O(stage=failed).
  returned: success
  type: dict
"""
