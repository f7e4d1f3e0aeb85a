# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The distributions whose own wrapper starts kubelet: what MicroK8s, k0s, k3s and RKE2 read.

Each profile finds its service and the files its wrapper reads, and hands them to the wrapper's
argv rules (pure, :mod:`_kubelet.wrappers`); :mod:`_kubelet.distributions` tries them in order.
Reads only; stdlib only (the k3s and RKE2 config files through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import (
    list_node_dir,
    node_join,
    under_root,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import read_node_text
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import (
    KubeletLaunch,
    _command_words,
    _first_service,
    _service_sources,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import (
    _k0s_controller_runs_kubelet,
    _option_value,
    _option_values,
    bash_array_words,
    k0s_extra_args,
    merge_rancher_config,
    rancher_flag_only_kubelet_args,
    rancher_kubelet_args,
)

__all__ = [
    "K3S",
    "RKE2",
]


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


class RancherFlavour(Record, frozen=True):
    """What differs between k3s and RKE2 (same agent code)."""

    name: str
    units: Tuple[str, ...]
    config_file: str
    data_dir: str
    config_env: str


K3S = RancherFlavour("k3s", ("k3s-agent", "k3s"), "/etc/rancher/k3s/config.yaml", "/var/lib/rancher/k3s", "K3S_CONFIG_FILE")
RKE2 = RancherFlavour("rke2", ("rke2-agent", "rke2-server"), "/etc/rancher/rke2/config.yaml", "/var/lib/rancher/rke2", "RKE2_CONFIG_FILE")


def _load_yaml_file(root: str, node_path: str) -> Tuple[Optional[Dict[str, object]], Optional[str], bool]:
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping  # pylint: disable=import-outside-toplevel

    text, problem, exists = read_node_text(root, node_path)
    if text is None:
        return None, problem, exists
    document, problem = load_mapping(text)
    if problem:
        return None, "%s: %s" % (node_path, problem), True
    return document, None, True


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
