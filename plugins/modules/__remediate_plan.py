#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __remediate_plan
short_description: Decide what the remediate role does on one node (internal)
version_added: 0.1.0
description:
  - Internal to the role M(nodeops.numa_drift.remediate) (an action plugin; the decisions are pure functions in
    C(plugins/plugin_utils/_remediate.py)).
  - Validates the role's variables, reads the node's repair history when the checkpoint is repairable (loop guard),
    and sets the facts C(remediate_plan) (C(branch) one of C(nothing), C(refused), C(loop_guard), C(dry_run),
    C(repair); the kubelet service's name and commands) and C(remediate_outcome).
  - The repair history is read through the node reader, as M(nodeops.numa_drift.numa_drift_facts) reads the node.
  - A dry run (C(options.dry)) is decided here, from the probe's facts. C(remediate_outcome) says what a repair would
    do, the task reports C(changed) where a repair would change the node and, with C(--diff), each NUMA node's numbers
    before and after.
  - The kubelet service is C(options.service_name) when set, else the unit the probe discovered
    (C(numa_drift.kubelet.service)), else C(kubelet).
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
  facts:
    description: The C(numa_drift) result of M(nodeops.numa_drift.numa_drift_facts).
    type: dict
    required: true
  options:
    description: The role's variables, as C(remediate_options) in the role's C(vars/main.yml) collects them.
    type: dict
    required: true
  record:
    description:
      - Set the facts (and read the repair history). V(false) is the remediate playbook's first pass, which only
        returns C(plan) and C(outcome) to pick the nodes that need the procedure.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Decide what to do on this node
  nodeops.numa_drift.__remediate_plan:
    facts: "{{ remediate_probe.numa_drift }}"
    options: "{{ remediate_options }}"
"""

RETURN = r"""
plan:
  description: The plan, also set as the fact C(remediate_plan).
  returned: success
  type: dict
"""
