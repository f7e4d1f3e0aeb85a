# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options shared by numa_drift_facts and kubelet_mm_checkpoint (internal to this collection)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  root:
    description:
      - Path under which the node's file system is read, for C(/sys), C(/proc) and the kubelet files.
      - Use C(/host) when the node's root is mounted there (for example from a debug container).
    type: path
    default: /
  kubelet_root_dir:
    description:
      - Kubelet's C(--root-dir) on the node, holding C(memory_manager_state).
      - When not set, the C(--root-dir) of kubelet's command line is used (as discovered, see I(kubelet_flags)),
        else C(/var/lib/kubelet). k0s and MicroK8s move it (C(/var/lib/k0s/kubelet),
        C(/var/snap/microk8s/common/var/lib/kubelet)); the probe finds that by itself.
    type: path
  kubelet_config:
    description:
      - Path on the node of kubelet's C(KubeletConfiguration) file (C(--config), YAML or JSON).
      - When not set, the C(--config) of kubelet's command line is used; on a node with no kubelet unit and no
        distribution wrapper, C(<kubelet_root_dir>/config.yaml) (kubeadm's place).
      - YAML is read by the collection's own reader (no PyYAML needed) as kubelet reads it (YAML 1.1 booleans such as C(yes) and C(on)).
      - Anchors, tags, block scalars, multi-line strings and several documents are refused naming the file and line
        (verdict C(kubelet_config_unknown)); pass I(policy) and I(reserved_memory), or use a JSON file.
    type: path
  kubelet_config_dir:
    description:
      - Path on the node of kubelet's C(--config-dir) drop-in directory.
      - When not set, the C(--config-dir) of kubelet's command line is used. Its C(*.conf) files are merged the way
        kubelet merges them (lexical order, sub-directories included, maps key by key, lists replaced).
    type: path
  kubelet_flags:
    description:
      - Kubelet's command line, as one string or a list. When set it replaces the discovered one.
      - When not set, the probe builds it as the node's service manager does, from the systemd unit of kubelet and
        its drop-ins and environment files, or from the distribution's wrapper (k3s, RKE2, k0s, MicroK8s, EKS,
        OpenShift, Kubespray); on a node with neither, from C(/var/lib/kubelet/kubeadm-flags.env),
        C(/etc/default/kubelet) and C(/etc/sysconfig/kubelet). See the collection's docs/distributions.md.
      - Flags win over the config file and drop-ins, as in kubelet.
    type: raw
  drift_bound:
    description:
      - How far each NUMA node's memory total and allocatable may move before the drift counts as a
        real capacity change (KEP-6232).
      - C(auto) derives the bound from the kernel image in C(/proc/iomem) plus 64 MiB (needs root to read the addresses).
      - C(off) allows no drift at all.
      - A Kubernetes quantity such as C(128Mi) sets the bound explicitly.
    type: str
    default: auto
  policy:
    description:
      - The memory manager policy kubelet is configured with (C(Static), C(None), C(BestEffort)),
        overriding what the config file and flags say.
    type: str
  reserved_memory:
    description:
      - Kubelet's C(reservedMemory), overriding the config file and flags.
      - 'Either a list as in the config file (C([{numaNode: 0, limits: {memory: 1Gi}}])) or a dict
        from NUMA node to limits (C({0: {memory: 1Gi}, 1: {memory: 2Gi}})).'
    type: raw
  kubelet_release:
    description:
      - The release of the kubelet that will start on the node (C(1.34) or C(v1.34.4)), instead of reading it from the
        program the node's service runs (the release stamped in a C(kubelet) binary, else C(kubelet --version);
        C(k3s --version), C(rke2 --version), C(k0s version), MicroK8s' C(meta/snap.yaml)).
      - Every rule that differs by release (flags removed, feature gates added, the checkpoint's layout and checksum)
        is judged at this release; with no release known, every supported release (1.34 to 1.37) must agree.
      - Quote it in YAML, as in C("1.40"), since an unquoted C(1.40) is the number 1.4.
    type: str
  untested_release:
    description:
      - What to do with a kubelet release outside the tested ones (1.34 to 1.37).
      - C(refuse) gives the verdict C(kubelet_release_untested) and writes nothing; C(nearest) judges the node by the
        nearest tested release's rules.
    type: str
    default: refuse
    choices: [refuse, nearest]
notes:
  - Kubelet refuses to start when the per-NUMA memory recorded in C(memory_manager_state) differs from the
    machine's. The verdicts and the bound follow the collection's design (see the collection docs).
"""
