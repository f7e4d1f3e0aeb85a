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
:mod:`_kubelet.wrappers`). Stdlib only (the k3s and RKE2
config files through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

import os
import posixpath
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import (
    list_node_dir,
    node_join,
    under_root,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import read_node_text
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import (
    ServiceDefinition,
    load_service,
    read_env_file,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import (
    _k0s_controller_runs_kubelet,
    _option_value,
    _option_values,
    bash_array_words,
    k0s_extra_args,
    kubelet_args_of,
    merge_rancher_config,
    rancher_flag_only_kubelet_args,
    rancher_kubelet_args,
    runs_kubelet,
)

__all__ = [
    "DISTRIBUTIONS",
    "KubeletLaunch",
    "discover_kubelet",
]

DISTRIBUTIONS = ("kubeadm", "k3s", "rke2", "k0s", "microk8s", "eks-al2023", "eks-al2", "openshift", "kubespray", "unknown")
DEFAULT_ROOT_DIR = "/var/lib/kubelet"
KUBEADM_FLAGS_FILE = "/var/lib/kubelet/kubeadm-flags.env"
EXTRA_ARGS_FILES = ("/etc/default/kubelet", "/etc/sysconfig/kubelet")
# kubeadm's drop-in: ExecStart=... $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS (later wins).
FLAG_VARIABLES = ("KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS")

MICROK8S_SNAP = "/snap/microk8s/current"
MICROK8S_DATA = "/var/snap/microk8s/current"
MICROK8S_COMMON = "/var/snap/microk8s/common"
MICROK8S_SERVICE = "snap.microk8s.daemon-kubelite"
K0S_UNITS = ("k0sworker", "k0scontroller")
K0S_DATA_DIR = "/var/lib/k0s"
# k0s >= v1.32.1 writes kubelet's config to <run dir>/kubelet/config.yaml at every start, the run dir
# being /run/k0s for root; before, <data dir>/kubelet-config.yaml (k0sproject/k0s
# pkg/component/worker/kubelet.go Init, pkg/config/cfgvars.go NewCfgVars).
K0S_RUN_CONFIG = "/run/k0s/kubelet/config.yaml"
# systemctl enable links a unit into a target's .wants/ or .requires/ under /etc/systemd/system.
ENABLED_LINK_DIR = "/etc/systemd/system"


class RancherFlavour(Record, frozen=True):
    """What differs between k3s and RKE2 (same agent code)."""

    name: str
    units: Tuple[str, ...]
    config_file: str
    data_dir: str
    config_env: str


K3S = RancherFlavour("k3s", ("k3s-agent", "k3s"), "/etc/rancher/k3s/config.yaml", "/var/lib/rancher/k3s", "K3S_CONFIG_FILE")
RKE2 = RancherFlavour("rke2", ("rke2-agent", "rke2-server"), "/etc/rancher/rke2/config.yaml", "/var/lib/rancher/rke2", "RKE2_CONFIG_FILE")


class KubeletLaunch(Record, frozen=True):
    """How kubelet is started on the node.

    ``args``: kubelet's command line after the program name, each word with its origin.
    ``dropin_redirects``: ``(node path in the drop-in dir, node path of its real source)``: files
    a wrapper copies there at its next start (k3s/RKE2 ``config=`` and ``config-dir=``).
    ``default_config``: the config file to read when the command line names none (kubeadm
    without a unit: ``<root dir>/config.yaml``). ``problems`` leave kubelet's configuration unknown.
    """

    distribution: str
    service: Optional[str]
    args: Tuple[Arg, ...] = ()
    sources: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()
    dropin_redirects: Tuple[Tuple[str, str], ...] = ()
    default_config: Optional[str] = None
    found: bool = True
    notes: Tuple[str, ...] = ()


# --------------------------------------------------------------------------- reading


def _load_yaml_file(root: str, node_path: str) -> Tuple[Optional[Dict[str, object]], Optional[str], bool]:
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping  # pylint: disable=import-outside-toplevel

    text, problem, exists = read_node_text(root, node_path)
    if text is None:
        return None, problem, exists
    document, problem = load_mapping(text)
    if problem:
        return None, "%s: %s" % (node_path, problem), True
    return document, None, True


def _is_enabled(root: str, unit: str) -> bool:
    """Whether ``systemctl enable`` linked ``unit`` into some ``<target>.wants/`` or ``.requires/``."""
    entries, _problem = list_node_dir(root, ENABLED_LINK_DIR)
    return any(
        os.path.lexists(under_root(root, node_join(ENABLED_LINK_DIR, entry, unit), follow=False))
        for entry in entries or ()
        if entry.endswith((".wants", ".requires"))
    )


def _first_service(root: str, names: Sequence[str]) -> Optional[ServiceDefinition]:
    """The first of ``names`` that is enabled, else the first that exists.

    RKE2's tarball and rpm install both ``rke2-server`` and ``rke2-agent`` units; only the
    enabled one runs (docs.rke2.io "Installation Methods": lib holds the server and agent units).
    """
    found = [service for service in (load_service(root, name + ".service") for name in names) if service.found]
    enabled = [service for service in found if _is_enabled(root, service.name)]
    return (enabled or found or [None])[0]


def _command_words(service: Optional[ServiceDefinition]) -> List[Arg]:
    return list(service.command) if service else []


def _service_sources(service: Optional[ServiceDefinition]) -> List[str]:
    if service is None:
        return []
    return [service.unit_path] + list(service.dropins) + list(service.env_files)


def _microk8s(root: str) -> Optional[KubeletLaunch]:
    args_file = node_join(MICROK8S_DATA, "args/kubelet")
    if not os.path.exists(under_root(root, args_file)):
        return None
    text, problem, _exists = read_node_text(root, args_file)
    if text is None:
        return KubeletLaunch("microk8s", MICROK8S_SERVICE, problems=(problem,), sources=(args_file,))
    variables = {"SNAP": MICROK8S_SNAP, "SNAP_DATA": MICROK8S_DATA, "SNAP_COMMON": MICROK8S_COMMON}
    words, error = bash_array_words(text, variables)
    problems = ("%s: %s" % (args_file, error),) if error else ()
    return KubeletLaunch(
        "microk8s", MICROK8S_SERVICE, tuple(Arg(word, args_file) for word in words), (args_file,), problems
    )


def _k0s_config(root: str, data_dir: str) -> str:
    """The run-dir config of k0s >= v1.32.1, else the older ``<data dir>/kubelet-config.yaml`` when only it exists."""
    legacy = node_join(data_dir, "kubelet-config.yaml")
    if not os.path.exists(under_root(root, K0S_RUN_CONFIG)) and os.path.exists(under_root(root, legacy)):
        return legacy
    return K0S_RUN_CONFIG


def _k0s(root: str) -> Optional[KubeletLaunch]:
    service = _first_service(root, K0S_UNITS)
    if service is None:
        return None
    words = [arg.value for arg in service.command]
    data_dir = _option_value(words, ("--data-dir",)) or K0S_DATA_DIR
    # --kubelet-root-dir (k0s >= v1.32.1) moves kubelet's root dir, default <data dir>/kubelet (cfgvars.go).
    root_dir = _option_value(words, ("--kubelet-root-dir",)) or node_join(data_dir, "kubelet")
    origin = "k0s %s (data dir %s)" % (service.name[: -len(".service")], data_dir)
    args = [Arg("--root-dir=" + node_join(root_dir), origin), Arg("--config=" + _k0s_config(root, data_dir), origin)]
    problems = list(service.problems)
    if service.name == "k0scontroller.service" and not _k0s_controller_runs_kubelet(words):
        problems.append("%s: k0s controller without --enable-worker or --single runs no kubelet" % service.unit_path)
    extra = _option_value(words, ("--kubelet-extra-args",))  # a string flag: the last one counts
    args.extend(Arg(word, "--kubelet-extra-args of " + (service.unit_path or "")) for word in k0s_extra_args(extra or ""))
    return KubeletLaunch("k0s", service.name[: -len(".service")], tuple(args), tuple(_service_sources(service)), tuple(problems))


def _rancher_documents(root: str, config_file: str) -> Tuple[List[Tuple[str, Dict[str, object]]], List[str], List[str]]:
    documents, sources, problems = [], [], []
    document, problem, exists = _load_yaml_file(root, config_file)
    if problem and exists:
        problems.append(problem)
    if document is not None:
        documents.append((config_file, document))
        sources.append(config_file)
    entries, problem = list_node_dir(root, config_file + ".d")
    if problem:
        problems.append(problem)
    for entry in entries or ():
        node_path = node_join(config_file + ".d", entry)
        # k3s' dotDFiles: regular entries ending in .yaml/.yml, case-insensitively (pkg/configfilearg/parser.go)
        if not entry.lower().endswith((".yaml", ".yml")) or os.path.isdir(under_root(root, node_path)):
            continue
        document, problem, _exists = _load_yaml_file(root, node_path)
        if problem:
            problems.append(problem)
        elif document is not None:
            documents.append((node_path, document))
            sources.append(node_path)
    return documents, sources, problems


def _rancher(root: str, flavour: RancherFlavour) -> Optional[KubeletLaunch]:
    service = _first_service(root, flavour.units)
    marker = any(
        os.path.exists(under_root(root, path)) for path in (flavour.config_file, node_join(flavour.data_dir, "agent"))
    )
    if service is None and not marker:
        return None
    words = [arg.value for arg in _command_words(service)]
    env_config = service.environment.get(flavour.config_env).value if service and flavour.config_env in service.environment else None
    config_file = _option_value(words, ("--config", "-c")) or env_config or flavour.config_file
    documents, sources, problems = _rancher_documents(root, config_file)
    problems = list(service.problems if service else ()) + problems
    configured_data_dir = merge_rancher_config(documents, "data-dir")[0]
    data_dir = _option_value(words, ("--data-dir", "-d")) or (configured_data_dir[-1] if configured_data_dir else flavour.data_dir)
    managed_dir = node_join(data_dir, "agent/etc/kubelet.conf.d")
    values, setters = merge_rancher_config(documents, "kubelet-arg")
    user_args = [Arg(value, "kubelet-arg in " + ", ".join(setters)) for value in values]
    user_args += [Arg(value, "--kubelet-arg of " + (service.unit_path or "")) for value in _option_values(words, "--kubelet-arg")]
    if os.path.isdir(under_root(root, managed_dir)):
        kubelet_args, redirects, arg_problems = rancher_kubelet_args(user_args, managed_dir)
        args = [Arg("--config-dir=" + managed_dir, "%s agent (its managed drop-in dir)" % flavour.name)] + kubelet_args
    else:  # an agent older than v1.32 never made the managed dir: it passes every setting as a flag
        args, redirects, arg_problems = rancher_flag_only_kubelet_args(user_args, flavour.name), [], []
    service_name = service.name[: -len(".service")] if service else flavour.units[0]
    return KubeletLaunch(
        flavour.name,
        service_name,
        tuple(args),
        tuple(_service_sources(service) + sources),
        tuple(problems + arg_problems),
        tuple(redirects),
    )


def _systemd_distribution(service: ServiceDefinition, args: Sequence[Arg], root: str) -> str:
    """Tell the distribution by the files its kubelet unit reads (kubelet-layouts.md section 2)."""
    words = [arg.value for arg in service.command]
    env_files = set(service.env_files)
    config = _option_value([arg.value for arg in args], ("--config",)) or ""
    if any(posixpath.basename(word) == "kubenswrapper" for word in words) or "/etc/node-sizing.env" in env_files:
        return "openshift"
    if "/etc/eks/kubelet/environment" in env_files or "NODEADM_KUBELET_ARGS" in service.environment:
        return "eks-al2023"
    if config == "/etc/kubernetes/kubelet/kubelet-config.json" or os.path.exists(under_root(root, "/etc/eks/bootstrap.sh")):
        return "eks-al2"
    if "/etc/kubernetes/kubelet.env" in env_files:
        return "kubespray"
    if "KUBELET_KUBEADM_ARGS" in " ".join(words) or any(path.endswith("/10-kubeadm.conf") for path in service.dropins):
        return "kubeadm"
    if "KUBELET_KUBEADM_ARGS" in service.environment or KUBEADM_FLAGS_FILE in env_files:
        return "kubeadm"
    return "unknown"


def _kubelet_unit(root: str) -> Optional[KubeletLaunch]:
    service = load_service(root, "kubelet.service")
    if not service.found:
        return None
    if not service.problems and not runs_kubelet(service.command):
        # A kubelet.service whose ExecStart is some other program (a site wrapper, a stand-in):
        # its argv cannot be read, so kubeadm's files decide, as on a node without a unit.
        fallback = _kubeadm_without_unit(root)
        return KubeletLaunch(
            fallback.distribution, "kubelet", fallback.args, tuple(_service_sources(service)) + fallback.sources,
            fallback.problems, default_config=fallback.default_config, found=fallback.found,
        )
    args = kubelet_args_of(service.command)
    return KubeletLaunch(
        _systemd_distribution(service, args, root), "kubelet", tuple(args), tuple(_service_sources(service)), service.problems
    )


def _kubeadm_without_unit(root: str) -> KubeletLaunch:
    """No unit and no wrapper: kubeadm's environment files and ``<root dir>/config.yaml`` (today's defaults)."""
    args: List[Arg] = []
    sources: List[str] = []
    problems: List[str] = []
    variables: Dict[str, Arg] = {}
    for node_path in (KUBEADM_FLAGS_FILE,) + EXTRA_ARGS_FILES:
        found, file_problems, exists = read_env_file(root, node_path)
        if found is None and not exists:
            continue
        problems.extend(file_problems)
        if found is None:
            continue
        names = [name for name in FLAG_VARIABLES if name in found]
        if names:
            sources.append(node_path)
        variables.update((name, Arg(found[name], "%s from %s" % (name, node_path))) for name in names)
    for name in FLAG_VARIABLES:
        if name in variables:
            args.extend(Arg(word, variables[name].origin) for word in variables[name].value.split())
    default_config = node_join(DEFAULT_ROOT_DIR, "config.yaml")
    found = bool(sources) or os.path.exists(under_root(root, default_config))
    return KubeletLaunch(
        "kubeadm" if found else "unknown",
        "kubelet" if found else None,
        tuple(args),
        tuple(sources),
        tuple(problems),
        default_config=default_config,
        found=found,
    )


_PROFILES: Tuple[Callable[[str], Optional[KubeletLaunch]], ...] = (
    _microk8s,
    _k0s,
    lambda root: _rancher(root, RKE2),
    lambda root: _rancher(root, K3S),
    _kubelet_unit,
)


def discover_kubelet(root: str = "/") -> KubeletLaunch:
    """The first profile that recognises the node; kubeadm's defaults when none does."""
    for profile in _PROFILES:
        launch = profile(root)
        if launch is not None:
            return launch
    return _kubeadm_without_unit(root)
