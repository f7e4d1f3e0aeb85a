# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which distribution runs kubelet on a node, under which service, with which command line.

Each profile reads the files its distribution's wrapper reads and builds kubelet's argv the
way the wrapper does (facts and each distribution's source: docs/distributions.md):

* MicroK8s: ``$SNAP_DATA/args/kubelet``, one flag per line, evaluated as a bash array
  (``${SNAP_DATA}``/``${SNAP_COMMON}`` expanded, quotes removed), run by ``snap.microk8s.daemon-kubelite``;
* k0s: ``k0s worker`` on ``k0sworker.service``: ``--root-dir=<data dir>/kubelet``,
  ``--config=<data dir>/kubelet-config.yaml``, then ``--kubelet-extra-args`` (merged last);
* k3s and RKE2: the agent's managed ``--config-dir`` (``<data dir>/agent/etc/kubelet.conf.d``), then
  ``kubelet-arg`` from ``/etc/rancher/<k3s|rke2>/config.yaml``, ``config.yaml.d/*.yaml`` (last value
  wins, ``kubelet-arg+`` appends) and ``--kubelet-arg`` on the service's command line; a
  ``config=FILE`` is copied by the agent to ``10-cli-config.conf`` and ``config-dir=DIR`` to
  ``20-cli-config-dir/`` of the managed directory;
* a ``kubelet.service`` unit (kubeadm, EKS AL2023 and AL2, OpenShift, Kubespray, others): its
  ``ExecStart`` as systemd expands it (:mod:`_systemd`), the distribution told by its files;
* no unit and no wrapper: kubeadm's environment files and ``/var/lib/kubelet/config.yaml``.

:func:`discover_kubelet` is the entry point; it only reads (the wrappers' argv rules, pure, are
:mod:`_kubelet.wrappers`; what MicroK8s, k0s, k3s and RKE2 read, :mod:`_kubelet.wrapped`; the record
and the service helpers every profile shares, :mod:`_kubelet.launch`). Stdlib only (the k3s and RKE2
config files through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

import posixpath
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NodeFiles, node_join
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import KUBELET_FOLLOWS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_STATE_FILE_NAME, STATE_FILE_NAME
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import (
    UNIT_FOLLOWS,
    ServiceDefinition,
    load_service,
    read_env_file,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import (
    _option_value,
    kubelet_args_of,
    kubelet_program,
    runs_kubelet,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import (
    KubeletLaunch,
    _service_sources,
    service_reads,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrapped import (
    K3S,
    RKE2,
    WRAPPED_FOLLOWS,
    WRAPPED_READS,
    _k0s,
    _microk8s,
    _rancher,
)

__all__ = [
    "DISTRIBUTIONS",
    "DISCOVERY_READS",
    "DISCOVERY_FOLLOWS",
    "discover_kubelet",
]

DISTRIBUTIONS = ("kubeadm", "k3s", "rke2", "k0s", "microk8s", "eks-al2023", "eks-al2", "openshift", "kubespray", "unknown")
DEFAULT_ROOT_DIR = "/var/lib/kubelet"
KUBEADM_FLAGS_FILE = "/var/lib/kubelet/kubeadm-flags.env"
EXTRA_ARGS_FILES = ("/etc/default/kubelet", "/etc/sysconfig/kubelet")
# kubeadm's drop-in: ExecStart=... $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS (later wins).
FLAG_VARIABLES = ("KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS")
EKS_BOOTSTRAP = "/etc/eks/bootstrap.sh"
DEFAULT_CONFIG = node_join(DEFAULT_ROOT_DIR, "config.yaml")
# kubeadm's packages install kubelet here: the program asked its release when no unit names one.
KUBEADM_PROGRAM = "/usr/bin/kubelet"

# What discovery reads on a node (the node reader's plan, _probe.read_plan): kubelet.service (kubeadm, EKS, OpenShift,
# Kubespray: the files its ExecStart and environment name are followed), kubeadm's files without a unit, the
# checkpoint under kubelet's default root dir, and what each wrapper reads (_kubelet.wrapped).
DISCOVERY_FOLLOWS: Dict[str, Dict[str, Any]] = dict(UNIT_FOLLOWS, **KUBELET_FOLLOWS, **WRAPPED_FOLLOWS)
DISCOVERY_READS: Tuple[Dict[str, Any], ...] = tuple(
    service_reads(("kubelet",), list(KUBELET_FOLLOWS))
    + [
        {"read": "{%s}" % ",".join((KUBEADM_FLAGS_FILE,) + EXTRA_ARGS_FILES), "follow": list(KUBELET_FOLLOWS)},
        {"read": DEFAULT_CONFIG},
        {"stat": EKS_BOOTSTRAP},
        {"version": KUBEADM_PROGRAM},
        {"read": node_join(DEFAULT_ROOT_DIR, STATE_FILE_NAME), "raw": True},
        {"read": node_join(DEFAULT_ROOT_DIR, CPU_STATE_FILE_NAME), "raw": True},
    ]
) + WRAPPED_READS


# --------------------------------------------------------------------------- reading


def _systemd_distribution(service: ServiceDefinition, args: Sequence[Arg], files: NodeFiles) -> str:
    """Tell the distribution by the files its kubelet unit reads (kubelet-layouts.md section 2)."""
    words = [arg.value for arg in service.command]
    env_files = set(service.env_files)
    config = _option_value([arg.value for arg in args], ("--config",)) or ""
    if any(posixpath.basename(word) == "kubenswrapper" for word in words) or "/etc/node-sizing.env" in env_files:
        return "openshift"
    if "/etc/eks/kubelet/environment" in env_files or "NODEADM_KUBELET_ARGS" in service.environment:
        return "eks-al2023"
    if config == "/etc/kubernetes/kubelet/kubelet-config.json" or files.exists(EKS_BOOTSTRAP):
        return "eks-al2"
    if "/etc/kubernetes/kubelet.env" in env_files:
        return "kubespray"
    if "KUBELET_KUBEADM_ARGS" in " ".join(words) or any(path.endswith("/10-kubeadm.conf") for path in service.dropins):
        return "kubeadm"
    if "KUBELET_KUBEADM_ARGS" in service.environment or KUBEADM_FLAGS_FILE in env_files:
        return "kubeadm"
    return "unknown"


def _kubelet_unit(files: NodeFiles) -> Optional[KubeletLaunch]:
    service = load_service(files, "kubelet.service")
    if not service.found:
        return None
    if not service.problems and not runs_kubelet(service.command):
        # A kubelet.service whose ExecStart is some other program (a site wrapper, a stand-in):
        # its argv cannot be read, so kubeadm's files decide, as on a node without a unit. Its program is not one
        # that says kubelet's release: the release stays unknown, and says so.
        fallback = _kubeadm_without_unit(files)
        return KubeletLaunch(
            fallback.distribution, "kubelet", fallback.args, tuple(_service_sources(service)) + fallback.sources,
            fallback.problems, default_config=fallback.default_config, found=fallback.found, program=kubelet_program(service.command),
        )
    args = kubelet_args_of(service.command)
    return KubeletLaunch(
        _systemd_distribution(service, args, files), "kubelet", tuple(args), tuple(_service_sources(service)), service.problems,
        program=kubelet_program(service.command),
    )


def _kubeadm_without_unit(files: NodeFiles) -> KubeletLaunch:
    """No unit and no wrapper: kubeadm's environment files and ``<root dir>/config.yaml`` (today's defaults)."""
    args: List[Arg] = []
    sources: List[str] = []
    problems: List[str] = []
    variables: Dict[str, Arg] = {}
    for node_path in (KUBEADM_FLAGS_FILE,) + EXTRA_ARGS_FILES:
        found, file_problems, exists = read_env_file(files, node_path)
        if found is None and not exists:
            continue
        problems.extend(file_problems)
        if found is None:
            continue
        names = [name for name in FLAG_VARIABLES if name in found]
        if names:
            sources.append(node_path)
        variables.update((name, Arg(found[name].value, "%s from %s" % (name, found[name].origin))) for name in names)
    for name in FLAG_VARIABLES:
        if name in variables:
            args.extend(Arg(word, variables[name].origin) for word in variables[name].value.split())
    default_config = DEFAULT_CONFIG
    found = bool(sources) or files.exists(default_config)
    return KubeletLaunch(
        "kubeadm" if found else "unknown",
        "kubelet" if found else None,
        tuple(args),
        tuple(sources),
        tuple(problems),
        program=KUBEADM_PROGRAM if files.exists(KUBEADM_PROGRAM) else None,
        default_config=default_config,
        found=found,
    )


_PROFILES: Tuple[Callable[[NodeFiles], Optional[KubeletLaunch]], ...] = (
    _microk8s,
    _k0s,
    lambda files: _rancher(files, RKE2),
    lambda files: _rancher(files, K3S),
    _kubelet_unit,
)


def discover_kubelet(files: NodeFiles) -> KubeletLaunch:
    """The first profile that recognises the node; kubeadm's defaults when none does."""
    for profile in _PROFILES:
        launch = profile(files)
        if launch is not None:
            return launch
    return _kubeadm_without_unit(files)
