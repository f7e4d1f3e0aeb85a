#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __fleet_report
short_description: Build the data of the probe and remediate playbooks' fleet report (internal)
version_added: 0.1.0
description:
  - Internal to the playbooks C(nodeops.numa_drift.probe) and C(nodeops.numa_drift.remediate) (an action plugin
    run on the controller; the report's rules are pure functions in C(plugins/plugin_utils/_report.py)). The
    playbooks write the result as C(report.json) and the rendered page as C(report.html).
  - One row per host, from its C(remediate_outcome), with the signed drift per NUMA node and resource (current minus
    recorded, laid out as bars left and right of a zero axis), a short line saying what happened, the advice
    once, the pods whose NUMA pinning the checkpoint holds, the boot guard's last decision, and where kubelet runs.
  - The pinned pods' names and namespaces come from the API (one pod listing per node, C(spec.nodeName) field
    selector, once per UID and run) when O(pod_names.from_api) is true and the API is reachable; otherwise the
    report lists the pod UIDs from the checkpoints and says why.
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Only reads (the API included).
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  kind:
    description: Which playbook the report is for.
    type: str
    required: true
    choices: [probe, remediate]
  hosts:
    description: The targeted hosts, in report order.
    type: list
    elements: str
    required: true
  outcomes:
    description: Each host's C(remediate_outcome) (an empty dict for a host not processed), in the order of O(hosts).
    type: list
    elements: raw
    required: true
  node_names:
    description: Each host's Kubernetes node name when its outcome does not say it, in the order of O(hosts).
    type: list
    elements: raw
    default: []
  lost:
    description:
      - Hosts the run reached that left the play before the report (their connection was lost during the run).
      - Reported with the action V(unreachable) unless their outcome already says how they failed.
    type: list
    elements: str
    default: []
  in_progress:
    description:
      - Hosts whose procedure starts after this report is written (the remediate playbook writes the report before each
        batch's procedures too). When the run ends before the next report (every node of the batch lost mid-procedure,
        or the run interrupted), this report is the one left, and these hosts are V(unreachable) in it, with what to do.
    type: list
    elements: str
  rollout_ended:
    description:
      - The remediate report's C(rollout_ended) field, which the lock's watcher reads when a run ends while it holds the
        Lease. V(false) for a report written in the middle of the rollout (before or after a batch's procedures), V(true)
        for the one the rollout ends with. Default V(true) when O(in_progress) is empty.
    type: bool
    default: []
  stopped:
    description: Why the rollout stopped early (C(numa_drift_stopped)), for the remediate report.
    type: raw
  pod_names:
    description: How to name the pinned pods.
    type: dict
    default: {}
    suboptions:
      from_api:
        description: Look the pod UIDs up in the API.
        type: bool
        default: true
      known:
        description: Names looked up earlier in this run (the result's RV(pod_names)); a UID names one pod forever.
        type: dict
        default: {}
      kubeconfig:
        description: The kubeconfig for the API (else kubernetes.core's defaults, C(K8S_AUTH_*) included).
        type: path
      context:
        description: The kubeconfig context.
        type: str
  probe_api:
    description: The probe playbook's O(kind=probe) rows, per host, whether the API manages the node (C(remediate_require_api)).
    type: list
    elements: raw
    default: []
  probe_services:
    description: The probe playbook's rows, per host, the kubelet service name given (C(remediate_service_name)).
    type: list
    elements: raw
    default: []
  settled:
    description: Host -> outcome of the nodes the remediate playbook's first pass settled (they have no outcome of their own).
    type: dict
    default: {}
  node_state:
    description: Show each Node's Ready condition and cordon (one Node list, with O(pod_names)' kubeconfig and context).
    type: bool
    default: true
  annotation_prefix:
    description: The prefix of the annotations the role writes on a Node (whose cordon is ours).
    type: str
    default: numa-drift.nodeops.io
  path:
    description: The directory report.json and report.html are written into (atomically).
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Gather the fleet report
  nodeops.numa_drift.__fleet_report:
    kind: probe
    hosts: "{{ ansible_play_hosts_all }}"
    outcomes: "{{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='remediate_outcome', default={}) | list }}"
    path: ./numa-drift-report
  delegate_to: localhost
  run_once: true
  register: numa_drift_report_built
"""

RETURN = r"""
report:
  description: >-
    The report (what C(report.json) holds): C(kind), C(generated_at), C(headline), C(stopped), C(counts),
    C(next_steps), C(needs_human) (node, reason and next step of each node a person must look at),
    C(repairable), C(repairable_cordoned) and C(remediate_command), C(not_processed), C(pods_source),
    C(node_states_source) and C(nodes), one row per host
    (see the collection's docs/playbooks.md).
  returned: success
  type: dict
html:
  description: >-
    report.html, rendered from the collection's C(playbooks/templates/report.html.j2) with HTML autoescaping on
    (every value a node supplied is escaped).
  returned: success
  type: str
pod_names:
  description: Pod UID to C(name), C(namespace), C(qos) as the API gave them (null for a UID the API does not have).
  returned: success
  type: dict
"""
