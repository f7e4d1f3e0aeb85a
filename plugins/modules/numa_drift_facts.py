#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: numa_drift_facts
short_description: Probe a node for kubelet memory manager NUMA drift
version_added: 0.1.0
description:
  - Compares the per-NUMA memory recorded in kubelet's memory manager checkpoint (C(memory_manager_state))
    with what this boot's C(/sys/devices/system/node) reports, exactly as kubelet's C(Static) policy does at start.
  - Derives the drift bound of KEP-6232 from the kernel image in C(/proc/iomem) and gives a verdict from a fixed
    vocabulary (C(in_sync), C(no_checkpoint), C(drift_within_bound), C(drift_exceeds_bound), C(bound_unknown),
    C(hugepages_changed), C(reserved_changed), C(topology_changed), C(assignments_do_not_fit), C(policy_mismatch),
    C(corrupt), C(unsupported_layout), C(kubelet_config_unknown), C(kubelet_config_rejected), C(kubelet_tolerates)),
    with every cause found.
  - Finds kubelet's configuration, checkpoint and service by itself on kubeadm, k3s, RKE2, k0s, MicroK8s, EKS,
    OpenShift and Kubespray nodes (the collection's docs/distributions.md).
  - Reads only; never changes anything.
notes:
  - The module's action plugin sends the node a small reader that reads, through the engine's own node files, exactly
    the files the probe declares (kubelet's units, flags, configuration and checkpoint, sysfs and procfs), and assesses
    the answer on the controller, in memory, with the same engine. A key, certificate, kubeconfig or token file is never
    read, and credential values (join tokens, passwords) are redacted on the node; nothing is written to the
    controller's disk (the collection's docs/safety.md lists what crosses).
  - With pipelining and a known Python on the host the reader goes to the node's Python on standard input as one program
    (no module wrapper starts on the node); otherwise it is the internal module C(__node_read), which also discovers the
    interpreter on first contact. A path only known once those files are read is read in one more run and remembered in
    the host's fact C(numa_drift_read_paths).
author:
  - nodeops.numa_drift contributors (@nodeops)
extends_documentation_fragment:
  - nodeops.numa_drift.node_options
attributes:
  check_mode:
    description: Can run in check mode and return the changed status it predicts without modifying the node.
    support: full
    details: The module only reads.
  diff_mode:
    description: Returns what changed (or would change, in check mode) in diff mode.
    support: none
options:
  read_timeout:
    description:
      - Seconds the controller waits for the node reader's answer before the task fails (the action plugin's; the module
        itself ignores it). The reader also stops itself after 20 seconds of reading.
    type: int
    default: 120
seealso:
  - module: nodeops.numa_drift.kubelet_mm_checkpoint
"""

EXAMPLES = r"""
- name: Probe the node
  nodeops.numa_drift.numa_drift_facts:
  register: probe

- name: Say what kubelet would do
  ansible.builtin.debug:
    msg: "{{ probe.numa_drift.summary }}"

- name: Probe a node whose root is mounted at /host, with an explicit bound
  nodeops.numa_drift.numa_drift_facts:
    root: /host
    drift_bound: 128Mi
    reserved_memory:
      0: {memory: 1Gi}
      1: {memory: 1Gi}
"""

RETURN = r"""
numa_drift:
  description: What the probe found.
  returned: always
  type: dict
  contains:
    verdict:
      description: The first verdict in the collection's precedence order among all causes found.
      type: str
      sample: drift_within_bound
    repairable:
      description: Whether M(nodeops.numa_drift.kubelet_mm_checkpoint) would repair the checkpoint.
      type: bool
    causes:
      description: Every cause found, each with its verdict and a message (kubelet's own text where it has one).
      type: list
      elements: dict
    advice:
      description: What the operator can do about the verdict.
      type: str
    bound_bytes:
      description: The drift bound in bytes, whenever it can be derived, whatever the verdict.
      type: int
      sample: 121634816
    bound_source:
      description: Where the bound comes from (C(auto) with the kernel image span, C(off), C(fixed)).
      type: str
    nodes:
      description: Per NUMA node, recorded and current totals and allocatable of C(memory) and every hugepage size, and their deltas.
      type: list
      elements: dict
    checkpoint:
      description: >-
        The checkpoint's path, whether it exists, its size, layout, checksum status, the kubelet eras that accept it,
        the layout a repair would write, its policy, its pod, container and block counts, and C(pinned_pods): the
        pods whose NUMA pinning it holds (C(uid), C(containers) with C(name), C(numa_nodes), C(sizes) in bytes per
        resource, and the pod's own C(numa_nodes) and C(sizes)).
      type: dict
    kernel_image:
      description: The kernel image span from C(/proc/iomem) (start, end, size) and the NUMA nodes holding it.
      type: dict
    kubelet:
      description: >-
        Where kubelet runs (distribution, service, root dir, config path, config dir, drop-ins in the order applied),
        the settings used (policy, reserved memory per node, reservations, KEP-6232 drift tolerance), the source of
        each setting, and problems reading them.
      type: dict
    guard:
      description: Whether the boot guard is installed, and what it decided at its last boot.
      type: dict
    history:
      description:
        - The repair history at its default place, C(/var/lib/nodeops-numa-drift/history.json) under O(root) (C(path), a
          host path), the times of the repair attempts it records that the loop guard counts (C(repairs), Unix times,
          most recent last, at most 1000), or why it cannot be used (C(error)).
        - The remediate role's loop guard decides from it without reading the node again.
      type: dict
      sample: {"path": "/var/lib/nodeops-numa-drift/history.json", "repairs": [1796201700.0], "error": null}
    node_problems:
      description: Problems reading the node's sysfs and procfs.
      type: list
      elements: str
    eras:
      description: The kubelet eras the checkpoint is checked against, oldest first.
      type: list
      elements: str
    summary:
      description: One line a person can read.
      type: str
      sample: "drift_within_bound; memory node0 -41.7 MiB, node1 +41.7 MiB; bound 116 MiB (auto: kernel image span 52 MiB + 64 MiB)"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import FACTS_OPTIONS_SPEC, OptionError, probe_arguments


def main():
    module = AnsibleModule(argument_spec=dict(FACTS_OPTIONS_SPEC), supports_check_mode=True)
    try:
        result = probe(HostFiles(module.params["root"]), **probe_arguments(module.params))
    except QuantityError as error:
        module.fail_json(msg="drift_bound: %s" % error)
    except OptionError as error:
        module.fail_json(msg=str(error))
    except OSError as error:
        module.fail_json(msg="cannot read the node under %s: %s" % (module.params["root"], error))
    module.exit_json(changed=False, numa_drift=assessment_facts(result))


if __name__ == "__main__":
    main()
