#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __node_cordon
short_description: Cordon and uncordon a Node, remembering whether this collection did it (internal)
version_added: 0.1.0
description:
  - Internal to the role M(nodeops.numa_drift.remediate) (an action plugin); use that role rather than this plugin.
  - Runs on the controller (an action plugin) with the C(kubernetes) Python client and kubernetes.core's authentication
    (O(kubeconfig), O(context), or the C(K8S_AUTH_*) environment).
  - A Node someone else cordoned is never uncordoned. The mark C(<annotation_prefix>/cordoned-by=nodeops.numa_drift) is
    written in the same merge patch as the cordon and removed in the same patch as the uncordon; every patch carries the
    C(resourceVersion) it was decided on, so a concurrent change makes the API answer 409 and the decision is made again.
  - Used by the role M(nodeops.numa_drift.remediate).
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Reads the Node and reports what it would change.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  name:
    description: The Node.
    type: str
    required: true
  state:
    description:
      - V(cordoned) cordons a schedulable Node with the mark (and O(reason)); a cordoned Node is left as it is.
      - V(uncordoned) uncordons when O(cordoned_by_us=true) and drops the marks; always records O(last_outcome).
      - V(annotated) merges O(annotations) (a null value removes one).
      - V(finished) finishes what an earlier run left on a Node whose checkpoint needs nothing now (uncordon once Ready,
        drop a stale mark); an unreachable API is a note, not a failure.
    type: str
    required: true
    choices: [cordoned, uncordoned, annotated, finished]
  annotation_prefix:
    description: Prefix of the annotations C(cordoned-by), C(reason) and C(last-outcome).
    type: str
    default: numa-drift.nodeops.io
  reason:
    description: With O(state=cordoned), the C(<prefix>/reason) annotation written with our cordon.
    type: str
  cordoned_by_us:
    description: With O(state=uncordoned), whether this collection cordoned the Node (from O(state=cordoned)).
    type: bool
    default: false
  last_outcome:
    description: The C(<prefix>/last-outcome) annotation written by O(state=uncordoned) and O(state=finished).
    type: str
    default: ""
  annotations:
    description: With O(state=annotated), the annotations to merge.
    type: dict
    default: {}
  outcome:
    description: The remediate role's C(remediate_outcome); when given, it is set again as a fact with C(cordoned_by_us)
      and the note of O(state=finished).
    type: dict
  kubeconfig:
    description: Kubeconfig file on the controller; unset means C(K8S_AUTH_KUBECONFIG), C(K8S_AUTH_*) or C(~/.kube/config).
    type: path
  context:
    description: Context of the kubeconfig.
    type: str
requirements:
  - kubernetes.core and the C(kubernetes) Python client on the controller
"""

EXAMPLES = r"""
- name: Cordon the Node
  nodeops.numa_drift.__node_cordon:
    name: worker-1
    state: cordoned
  register: cordon

- name: Uncordon it again, only if we cordoned it
  nodeops.numa_drift.__node_cordon:
    name: worker-1
    state: uncordoned
    cordoned_by_us: "{{ cordon.cordoned_by_us }}"
    last_outcome: repaired
"""

RETURN = r"""
cordoned_before:
  description: The Node was unschedulable when read (O(state=cordoned)).
  returned: state is cordoned
  type: bool
cordoned_by_us:
  description: The Node is cordoned with this collection's mark (O(state=cordoned), O(state=finished)).
  returned: state is cordoned or finished
  type: bool
uncordoned:
  description: The Node was uncordoned (O(state=uncordoned)).
  returned: state is uncordoned
  type: bool
note:
  description: What O(state=finished) found or did, for the outcome message.
  returned: state is finished
  type: str
"""
