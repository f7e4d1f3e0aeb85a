# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The distributions whose own wrapper starts kubelet: what MicroK8s, k0s, k3s and RKE2 read.

Each profile finds its service and the files its wrapper reads, and hands them to the wrapper's
argv rules (pure, :mod:`_kubelet.wrappers`); :mod:`_kubelet.distributions` tries them in order.
Reads only; stdlib only (the k3s and RKE2 config files through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    NodeFiles,
    list_dir,
    node_join,
    read_node_text,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import FOLLOWED_PATH, KUBELET_FOLLOWS, path_flag
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader import filled
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_STATE_FILE_NAME, STATE_FILE_NAME
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import (
    KubeletLaunch,
    _command_words,
    _first_service,
    _service_sources,
    service_reads,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import (
    _k0s_controller_runs_kubelet,
    _option_value,
    _option_values,
    bash_array_words,
    k0s_extra_args,
    kubelet_program,
    merge_rancher_config,
    rancher_flag_only_kubelet_args,
    rancher_kubelet_args,
)

__all__ = [
    "K3S",
    "RKE2",
    "WRAPPED_READS",
    "WRAPPED_FOLLOWS",
]


MICROK8S_SNAP = "/snap/microk8s/current"
MICROK8S_DATA = "/var/snap/microk8s/current"
MICROK8S_COMMON = "/var/snap/microk8s/common"
MICROK8S_VARIABLES = {"SNAP": MICROK8S_SNAP, "SNAP_DATA": MICROK8S_DATA, "SNAP_COMMON": MICROK8S_COMMON}
MICROK8S_ARGS = MICROK8S_DATA + "/args/kubelet"
MICROK8S_METADATA = MICROK8S_SNAP + "/meta/snap.yaml"  # the snap's version: the Kubernetes release it carries
MICROK8S_SERVICE = "snap.microk8s.daemon-kubelite"
K0S_UNITS = ("k0sworker", "k0scontroller")
K0S_DATA_DIR = "/var/lib/k0s"
K0S_LEGACY_CONFIG = "kubelet-config.yaml"
# k0s >= v1.32.1 writes kubelet's config to <run dir>/kubelet/config.yaml at every start, the run dir
# being /run/k0s for root; before, <data dir>/kubelet-config.yaml (k0sproject/k0s
# pkg/component/worker/kubelet.go Init, pkg/config/cfgvars.go NewCfgVars).
K0S_RUN_CONFIG = "/run/k0s/kubelet/config.yaml"
RANCHER_AGENT_DIR = "agent"
RANCHER_MANAGED_DIR = "agent/etc/kubelet.conf.d"
RANCHER_DOT_D_SUFFIXES = (".yaml", ".yml")


class RancherFlavour(Record, frozen=True):
    """What differs between k3s and RKE2 (same agent code)."""

    name: str
    units: Tuple[str, ...]
    config_file: str
    data_dir: str
    config_env: str


K3S = RancherFlavour("k3s", ("k3s-agent", "k3s"), "/etc/rancher/k3s/config.yaml", "/var/lib/rancher/k3s", "K3S_CONFIG_FILE")
RKE2 = RancherFlavour("rke2", ("rke2-agent", "rke2-server"), "/etc/rancher/rke2/config.yaml", "/var/lib/rancher/rke2", "RKE2_CONFIG_FILE")

# --------------------------------------------------------------------------- what these profiles read (the node reader's plan)

_DATA_DIR_THEN = [{"stat": "{}/" + RANCHER_AGENT_DIR}, {"walk": "{}/" + RANCHER_MANAGED_DIR, "follow": []}]
_CONFIG_FILE_THEN = [{"read": "{}"}, {"list": "{}.d", "entries": ["*" + suffix for suffix in RANCHER_DOT_D_SUFFIXES], "nocase": True}]
# What a k3s or RKE2 service, its environment and its config files name: the config file (--config, -c, the
# <FLAVOUR>_CONFIG_FILE variable), the data dir (--data-dir, -d, data-dir:), and kubelet-arg's config=, config-dir=
# and root-dir= (without dashes: the agent adds them); k0s' data dir and kubelet root dir.
WRAPPED_FOLLOWS: Dict[str, Dict[str, Any]] = {
    "rancher-config-file": {"pattern": r"(?:%s|\b(?:%s)=%s)" % (path_flag("--config|-c"), "|".join((K3S.config_env, RKE2.config_env)), FOLLOWED_PATH),
                            "then": _CONFIG_FILE_THEN},
    "rancher-data-dir": {"pattern": r"(?:%s|^[ \t]*data-dir[ \t]*:[ \t]*%s)" % (path_flag("--data-dir|-d"), FOLLOWED_PATH), "then": _DATA_DIR_THEN},
    "kubelet-arg-config": {"pattern": r"(?<![\w.-])config=" + FOLLOWED_PATH, "then": KUBELET_FOLLOWS["kubelet-config"]["then"]},
    "kubelet-arg-config-dir": {"pattern": r"(?<![\w.-])config-dir=" + FOLLOWED_PATH, "then": KUBELET_FOLLOWS["kubelet-config-dir"]["then"]},
    "kubelet-arg-root-dir": {"pattern": r"(?<![\w.-])root-dir=" + FOLLOWED_PATH, "then": KUBELET_FOLLOWS["kubelet-root-dir"]["then"]},
    "k0s-data-dir": {"pattern": path_flag("--data-dir"),
                     "then": [{"read": "{}/" + K0S_LEGACY_CONFIG, "follow": []}, {"read": "{}/kubelet/" + STATE_FILE_NAME, "raw": True},
                              {"read": "{}/kubelet/" + CPU_STATE_FILE_NAME, "raw": True}]},
    "k0s-kubelet-root-dir": {"pattern": path_flag("--kubelet-root-dir"), "then": KUBELET_FOLLOWS["kubelet-root-dir"]["then"]},
}
_RANCHER_FOLLOW = ("rancher-config-file", "rancher-data-dir", "kubelet-arg-config", "kubelet-arg-config-dir", "kubelet-arg-root-dir")
# k0s' own --config is the cluster's configuration, never read: only the root dir and drop-ins a --kubelet-extra-args names.
_K0S_FOLLOW = ("k0s-data-dir", "k0s-kubelet-root-dir", "kubelet-root-dir", "kubelet-config-dir")


def _rancher_reads(flavour: RancherFlavour) -> List[Dict[str, Any]]:
    """A k3s or RKE2 service, its config file and ``.d`` files, its agent dir and managed drop-in dir, by default."""
    return (service_reads(flavour.units, _RANCHER_FOLLOW) + filled(_CONFIG_FILE_THEN, flavour.config_file, _RANCHER_FOLLOW)
            + filled(_DATA_DIR_THEN, flavour.data_dir))


WRAPPED_READS: Tuple[Dict[str, Any], ...] = tuple(
    [{"read": MICROK8S_ARGS, "variables": MICROK8S_VARIABLES, "follow": list(KUBELET_FOLLOWS)}, {"read": MICROK8S_METADATA}]
    + service_reads(K0S_UNITS, _K0S_FOLLOW)
    + [{"read": K0S_RUN_CONFIG, "follow": []}] + filled(WRAPPED_FOLLOWS["k0s-data-dir"]["then"], K0S_DATA_DIR)
    + _rancher_reads(RKE2) + _rancher_reads(K3S)
)


def _load_yaml_file(files: NodeFiles, node_path: str) -> Tuple[Optional[Dict[str, object]], Optional[str], bool]:
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping  # pylint: disable=import-outside-toplevel

    text, problem, exists = read_node_text(files, node_path)
    if text is None:
        return None, problem, exists
    document, problem = load_mapping(text)
    if problem:
        return None, "%s: %s" % (node_path, problem), True
    return document, None, True


def _microk8s(files: NodeFiles) -> Optional[KubeletLaunch]:
    args_file = MICROK8S_ARGS
    if not files.exists(args_file):
        return None
    text, problem, _exists = read_node_text(files, args_file)
    if text is None:
        return KubeletLaunch("microk8s", MICROK8S_SERVICE, problems=(problem,), sources=(args_file,), release_metadata=MICROK8S_METADATA)
    words, error = bash_array_words(text, MICROK8S_VARIABLES)
    problems = ("%s: %s" % (args_file, error),) if error else ()
    return KubeletLaunch(
        "microk8s", MICROK8S_SERVICE, tuple(Arg(word, args_file) for word in words), (args_file,), problems,
        release_metadata=MICROK8S_METADATA,
    )


def _k0s_config(files: NodeFiles, data_dir: str) -> str:
    """The run-dir config of k0s >= v1.32.1, else the older ``<data dir>/kubelet-config.yaml`` when only it exists."""
    legacy = node_join(data_dir, K0S_LEGACY_CONFIG)
    if not files.exists(K0S_RUN_CONFIG) and files.exists(legacy):
        return legacy
    return K0S_RUN_CONFIG


def _k0s(files: NodeFiles) -> Optional[KubeletLaunch]:
    service = _first_service(files, K0S_UNITS)
    if service is None:
        return None
    words = [arg.value for arg in service.command]
    data_dir = _option_value(words, ("--data-dir",)) or K0S_DATA_DIR
    # --kubelet-root-dir (k0s >= v1.32.1) moves kubelet's root dir, default <data dir>/kubelet (cfgvars.go).
    root_dir = _option_value(words, ("--kubelet-root-dir",)) or node_join(data_dir, "kubelet")
    origin = "k0s %s (data dir %s)" % (service.name[: -len(".service")], data_dir)
    args = [Arg("--root-dir=" + node_join(root_dir), origin), Arg("--config=" + _k0s_config(files, data_dir), origin)]
    problems = list(service.problems)
    if service.name == "k0scontroller.service" and not _k0s_controller_runs_kubelet(words):
        problems.append("%s: k0s controller without --enable-worker or --single runs no kubelet" % service.unit_path)
    extra = _option_value(words, ("--kubelet-extra-args",))  # a string flag: the last one counts
    args.extend(Arg(word, "--kubelet-extra-args of " + (service.unit_path or "")) for word in k0s_extra_args(extra or ""))
    return KubeletLaunch("k0s", service.name[: -len(".service")], tuple(args), tuple(_service_sources(service)), tuple(problems),
                         program=kubelet_program(service.command))


def _rancher_documents(files: NodeFiles, config_file: str) -> Tuple[List[Tuple[str, Dict[str, object]]], List[str], List[str]]:
    documents, sources, problems = [], [], []
    document, problem, exists = _load_yaml_file(files, config_file)
    if problem and exists:
        problems.append(problem)
    if document is not None:
        documents.append((config_file, document))
        sources.append(config_file)
    entries, problem = list_dir(files, config_file + ".d", config_file + ".d")
    if problem:
        problems.append(problem)
    for entry in entries or ():
        node_path = node_join(config_file + ".d", entry)
        # k3s' dotDFiles: regular entries ending in .yaml/.yml, case-insensitively (pkg/configfilearg/parser.go)
        if not entry.lower().endswith(RANCHER_DOT_D_SUFFIXES) or files.isdir(node_path):
            continue
        document, problem, _exists = _load_yaml_file(files, node_path)
        if problem:
            problems.append(problem)
        elif document is not None:
            documents.append((node_path, document))
            sources.append(node_path)
    return documents, sources, problems


def _rancher(files: NodeFiles, flavour: RancherFlavour) -> Optional[KubeletLaunch]:
    service = _first_service(files, flavour.units)
    marker = any(files.exists(path) for path in (flavour.config_file, node_join(flavour.data_dir, RANCHER_AGENT_DIR)))
    if service is None and not marker:
        return None
    words = [arg.value for arg in _command_words(service)]
    env_config = service.environment.get(flavour.config_env).value if service and flavour.config_env in service.environment else None
    config_file = _option_value(words, ("--config", "-c")) or env_config or flavour.config_file
    documents, sources, problems = _rancher_documents(files, config_file)
    problems = list(service.problems if service else ()) + problems
    configured_data_dir = merge_rancher_config(documents, "data-dir")[0]
    data_dir = _option_value(words, ("--data-dir", "-d")) or (configured_data_dir[-1] if configured_data_dir else flavour.data_dir)
    managed_dir = node_join(data_dir, RANCHER_MANAGED_DIR)
    values, setters = merge_rancher_config(documents, "kubelet-arg")
    user_args = [Arg(value, "kubelet-arg in " + ", ".join(setters)) for value in values]
    user_args += [Arg(value, "--kubelet-arg of " + (service.unit_path or "")) for value in _option_values(words, "--kubelet-arg")]
    if files.isdir(managed_dir):
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
        program=kubelet_program(service.command) if service else None,
    )
