#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __remediate_wait
short_description: Wait for kubelet or the Node during the remediate role's repair, quietly
version_added: 0.1.0
description:
  - Internal to the role M(nodeops.numa_drift.remediate) (an action plugin; the decisions are pure functions in
    C(plugins/plugin_utils/_remediate.py)).
  - Makes the polls an C(until)/C(retries)/C(delay) loop would make (at most O(attempts), O(delay) seconds apart),
    without printing C(FAILED - RETRYING) for every poll of a wait that succeeds.
  - V(kubelet_active) runs O(status_command) on the node until kubelet is active. V(kubelet_settled) runs it until
    poll O(polls) + 1 and fails at the first poll that sees kubelet stopped or running as another process than
    O(identity). V(node_ready) reads the Node O(node_name) with M(kubernetes.core.k8s_info) until it is Ready.
  - Returns the last poll's result (C(stdout), C(rc) or C(resources)) and C(attempts).
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
  wait_for:
    description: What to wait for.
    type: str
    required: true
    choices: [kubelet_active, kubelet_settled, node_ready]
  attempts:
    description: Polls at most.
    type: int
    required: true
  delay:
    description: Seconds between two polls.
    type: int
    required: true
  status_command:
    description: The kubelet service's status command line (run with the shell on the node).
    type: str
  service_mode:
    description: V(systemd) (active is C(ActiveState=active) in the output) or V(command) (active is exit code 0).
    type: str
    default: systemd
  identity_regexp:
    description: Finds the fields of the status output that change when kubelet restarts.
    type: str
    default: ""
  identity:
    description: The identity of the run of kubelet that must stay up (V(kubelet_settled)).
    type: str
    default: ""
  polls:
    description: V(kubelet_settled) succeeds at poll O(polls) + 1.
    type: int
    default: 0
  node_name:
    description: The Node (V(node_ready)).
    type: str
  kubeconfig:
    description: Passed to M(kubernetes.core.k8s_info).
    type: raw
  context:
    description: Passed to M(kubernetes.core.k8s_info).
    type: str
"""

EXAMPLES = r"""
- name: Wait for kubelet to become active
  nodeops.numa_drift.__remediate_wait:
    wait_for: kubelet_active
    status_command: systemctl show kubelet.service
    attempts: 61
    delay: 5
"""

RETURN = r"""
attempts:
  description: The polls made.
  returned: always
  type: int
"""
