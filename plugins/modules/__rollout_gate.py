#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __rollout_gate
short_description: May a rollout go on with its next batch (window, cluster lock, pause, health gate) (internal)
version_added: 0.1.0
description:
  - Internal to the playbook C(nodeops.numa_drift.remediate); not meant for other playbooks.
  - An action plugin run on the controller by the remediate playbook before every batch; nothing runs on a node.
  - Checks, in this order, and stops at the first that says no
    (RV(proceed=false), RV(stop) names which) the maintenance window,
    the cluster-wide lock (a C(coordination.k8s.io/v1) Lease taken or renewed by this run; a Lease held by another
    run makes this one wait up to O(lock.wait_timeout) seconds; a Lease not renewed within its duration is stale and taken over),
    the pause ConfigMap, and the health gate (Nodes NotReady for other reasons than this rollout, firing Prometheus alerts).
  - O(state=released) gives the Lease up at the end of the run when this run holds it.
  - O(state=watched), at the run's start, starts a first-pass watcher. A run that ends before the Lease is taken (in its
    read-only first pass, or waiting for the Lease) and before any fleet report then prints that it changed nothing, with
    the command that runs it again. The Lease's watcher takes over when the Lease is taken.
  - When it takes the Lease, it also starts a watcher on the controller (a Python process in its own session) that waits
    for the C(ansible-playbook) process to end and then gives the Lease up if this run still holds it. This is the release when a
    run ends with no task left to run (interrupted, killed, every node of a batch lost mid-procedure).
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: The lock is taken and released in check mode too, so that a dry run never overlaps a real run.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  state:
    description: >-
      V(checked) checks the controls (and takes or renews the lock); V(released) gives the lock up; V(watched) starts the
      first-pass watcher (needs O(report_dir)).
    type: str
    default: checked
    choices: [checked, released, watched]
  lock:
    description: The cluster-wide lock.
    type: dict
    default: {}
    suboptions:
      enabled:
        description: Take the Lease.
        type: bool
        default: true
      name:
        description: The Lease's name.
        type: str
        default: nodeops-numa-drift
      namespace:
        description: The Lease's namespace.
        type: str
        default: kube-system
      holder:
        description: This run's identity (default the AWX job id, else controller host name and process id, plus a random suffix).
        type: str
      duration:
        description: Seconds the Lease stays valid without renewal (it is renewed before every batch).
        type: int
        default: 1800
      wait_timeout:
        description: Seconds to wait for a Lease another run holds; V(0) exits at once with a clear message.
        type: int
        default: 0
      poll:
        description: Seconds between looks at a held Lease.
        type: int
        default: 10
  pause:
    description: The pause switch.
    type: dict
    default: {}
    suboptions:
      configmap:
        description:
          - A ConfigMap whose O(pause.key) holds anything but empty, C(false), C(no), C(0) or C(off) stops every run
            before its next batch (a text other than C(true)/C(yes)/C(1)/C(on)/C(paused) is shown as the reason).
        type: str
      namespace:
        description: The ConfigMap's namespace.
        type: str
        default: kube-system
      key:
        description: The key in the ConfigMap's data.
        type: str
        default: paused
  health:
    description: The health gate.
    type: dict
    default: {}
    suboptions:
      max_unhealthy:
        description:
          - How many Nodes may be NotReady for other reasons than this rollout before it stops (a count, or a percentage like
            C(10%) of all Nodes). Unset = no Node gate.
        type: raw
      targets:
        description: The Nodes of this rollout (not counted as unhealthy for other reasons).
        type: list
        elements: str
        default: []
      annotation_prefix:
        description: The prefix of the remediate role's Node annotations (Nodes it is working on are not counted).
        type: str
        default: numa-drift.nodeops.io
      prometheus_url:
        description: A Prometheus base URL; its C(/api/v1/alerts) is read and matching firing alerts stop the rollout.
        type: str
      alert_filter_regexp:
        description: Alerts whose name matches this regular expression stop the rollout.
        type: str
        default: .*
  window:
    description: The maintenance window.
    type: dict
    default: {}
    suboptions:
      days:
        description: Week days the window is open (C(Mon) .. C(Sun)); empty = every day.
        type: list
        elements: str
        default: []
      hours:
        description: Hours the window is open, C(HH:MM-HH:MM) (may wrap past midnight); unset = all day.
        type: str
      timezone:
        description: The IANA time zone of O(window.days) and O(window.hours).
        type: str
        default: UTC
  kubeconfig:
    description: The kubeconfig file (default as M(kubernetes.core.k8s) finds it).
    type: path
  context:
    description: The kubeconfig context.
    type: str
  report_dir:
    description:
      - The run's fleet report directory. When set, a run that ends in the middle of its rollout (the lock's watcher
        finds the Lease still held) prints what it left and the command that finishes the work.
    type: path
"""

EXAMPLES = r"""
- name: Check the rollout controls before this batch
  nodeops.numa_drift.__rollout_gate:
    lock:
      wait_timeout: 600
    pause:
      configmap: numa-drift-rollout
    health:
      max_unhealthy: 10%
      prometheus_url: http://prometheus.monitoring:9090
      alert_filter_regexp: ^(KubeNodeNotReady|NodeFilesystemAlmostOutOfSpace)$
    window:
      days: [Tue, Wed, Thu]
      hours: "22:00-05:00"
      timezone: Europe/Berlin
  delegate_to: localhost
  run_once: true
  register: gate

- name: Give the cluster lock up at the end of the run
  nodeops.numa_drift.__rollout_gate:
    state: released
    lock:
      holder: "{{ gate.holder }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
proceed:
  description: Whether the rollout may go on with the next batch.
  returned: always
  type: bool
stop:
  description: Which control said no (V(window), V(lock), V(paused), V(unhealthy), V(alerts), V(error)), else null.
  returned: always
  type: str
message:
  description: Why, in words.
  returned: always
  type: str
holder:
  description: This run's lock identity.
  returned: always
  type: str
lock_held:
  description: Whether this run holds the cluster lock now.
  returned: always
  type: bool
lock_watcher:
  description:
    - The watcher started when the Lease was taken; V(started) false with a V(message) when it could not be started.
  returned: when this call took the Lease
  type: dict
  sample: {"started": true, "pid": 4242, "watches": 4100}
watcher:
  description:
    - The first-pass watcher (O(state=watched)); V(started) false with a V(message) when it could not be started.
  returned: when O(state=watched)
  type: dict
  sample: {"started": true, "pid": 4240, "watches": 4100}
unhealthy_nodes:
  description: Nodes NotReady for other reasons than this rollout.
  returned: when the Node gate ran
  type: list
  elements: str
firing_alerts:
  description: Names of matching firing alerts.
  returned: when Prometheus was asked
  type: list
  elements: str
window:
  description: Whether the window is open and when it opens next.
  returned: when a window is set
  type: dict
"""
