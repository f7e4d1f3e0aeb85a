# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's effective configuration, computed the way kubelet computes it at start.

Kubelet's ``NewKubeletCommand`` (cmd/kubelet/app/server.go; kubelet-layouts.md section 1):

1. built-in defaults (policy ``None``, no ``evictionHard``);
2. ``--config``: the file *replaces* the defaults, then v1beta1 defaulting fills what it
   leaves unset (``""`` policy ``None``), and ``loadConfigFile`` turns an unset ``evictionHard``
   into kubelet's default map (``memory.available: 100Mi``): only when a file is loaded;
3. ``--config-dir``: ``filepath.WalkDir`` in lexical order, recursing into sub-directories,
   every regular file whose ``filepath.Ext`` is exactly ``.conf``, each applied as a JSON merge
   patch: scalars and lists are replaced whole, maps merge key by key, ``null`` changes nothing;
4. the command line again (``kubeletConfigFlagPrecedence``): flags win, a map or
   ``--reserved-memory`` flag replaces the whole value; feature gates from flags are the lowest
   layer (the config's gates win over them).

Explicit options of the operator win over everything and are reported as such. The command
line comes from :func:`_distributions.discover_kubelet` unless ``flags`` are given.
:func:`load_kubelet_settings` is the entry point; the merge functions are pure.
Stdlib only (YAML through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.distributions import KubeletLaunch, discover_kubelet
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    DEFAULT_EVICTION_HARD_MEMORY,
    DEFAULT_ROOT_DIR,
    DRIFT_TOLERANCE_GATE,
    DRIFT_TOLERANCE_OPTION,
    MEMORY_AVAILABLE,
    POLICY_NONE,
    POLICY_STATIC,
    KubeletFlags,
    KubeletSettings,
    MemoryReservation,
    go_quote,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.document import parse_kubelet_config
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import (
    added_gate_problems,
    parse_kubelet_flags,
    split_args,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import (
    effective_reserved_memory,
    eviction_memory,
    memory_resources,
    parse_reserved_memory_config,
    parse_reserved_memory_override,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import MAX_NESTING
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import node_join, under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.reading import read_node_text
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import ByteQuantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg

__all__ = [
    "MAP_FIELDS",
    "ConfigLayers",
    "kubelet_defaults",
    "defaulted_config_file",
    "merge_dropin",
    "go_ext",
    "walk_config_dir",
    "load_kubelet_settings",
]

# The KubeletConfiguration fields the memory manager depends on.
MAP_FIELDS = ("systemReserved", "kubeReserved", "evictionHard", "featureGates", "memoryManagerPolicyOptions")
WHOLE_FIELDS = ("memoryManagerPolicy", "reservedMemory", "mergeDefaultEvictionSettings")
# v1beta1 DefaultEvictionHard (pkg/kubelet/apis/config/v1beta1/defaults_linux.go).
DEFAULT_EVICTION_HARD = {
    MEMORY_AVAILABLE: DEFAULT_EVICTION_HARD_MEMORY,
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
DEFAULT = "default"


class ConfigLayers(Record):
    """The merged fields and, per field (and per ``field.key`` of maps), the layer that set it."""

    document: Dict[str, Any] = factory(dict)
    sources: Dict[str, str] = factory(dict)

    def set_whole(self, key: str, value: Any, source: str) -> None:
        self.document[key] = value
        self.sources[key] = source
        if key in MAP_FIELDS and isinstance(value, Mapping):
            for item in value:
                self.sources["%s.%s" % (key, item)] = source

    def source_of(self, key: str, items: Sequence[str] = ()) -> str:
        """Where ``key`` (or, for a map, the last of ``items`` that is set) came from."""
        found = [self.sources["%s.%s" % (key, item)] for item in items if "%s.%s" % (key, item) in self.sources]
        return found[-1] if found else self.sources.get(key, DEFAULT)


# --------------------------------------------------------------------------- the layers (pure)


def kubelet_defaults() -> ConfigLayers:
    """Layer 1: ``options.NewKubeletConfiguration()`` for the fields we use."""
    layers = ConfigLayers()
    layers.set_whole("memoryManagerPolicy", POLICY_NONE, DEFAULT)
    # No evictionHard: kubelet puts its default thresholds in only when --config names a file
    # (cmd/kubelet/app/server.go loadConfigFile); with drop-ins or flags alone there is none.
    layers.set_whole("featureGates", {}, DEFAULT)
    return layers


def defaulted_config_file(document: Mapping[str, Any], path: str) -> ConfigLayers:
    """Layer 2: ``loadConfigFile`` replaces the defaults with the file, then v1beta1 defaulting."""
    layers = ConfigLayers()
    for key in MAP_FIELDS + WHOLE_FIELDS:
        if document.get(key) is not None:
            layers.set_whole(key, document[key], path)
    if not layers.document.get("memoryManagerPolicy"):
        layers.set_whole("memoryManagerPolicy", POLICY_NONE, DEFAULT)  # SetDefaults: "" -> None
    if "evictionHard" not in layers.document:
        layers.set_whole("evictionHard", dict(DEFAULT_EVICTION_HARD), DEFAULT)
    elif document.get("mergeDefaultEvictionSettings") is True and isinstance(layers.document["evictionHard"], Mapping):
        # loadConfigFile: the file's own flag adds the default thresholds it does not set (drop-ins never do).
        merged = dict(layers.document["evictionHard"])
        for signal, threshold in DEFAULT_EVICTION_HARD.items():
            if signal not in merged:
                merged[signal] = threshold
                layers.sources["evictionHard.%s" % signal] = DEFAULT
        layers.document["evictionHard"] = merged
    return layers


def merge_dropin(layers: ConfigLayers, document: Mapping[str, Any], path: str) -> None:
    """Layer 3, one file: JSON merge patch of a drop-in (lists replaced, maps merged key-wise)."""
    for key in MAP_FIELDS + WHOLE_FIELDS:
        value = document.get(key)
        if value is None:
            continue  # absent or null: a merge patch leaves the decoded field as it was
        current = layers.document.get(key)
        if key in MAP_FIELDS and isinstance(value, Mapping) and isinstance(current, Mapping):
            merged = dict(current)
            for item, item_value in value.items():
                if item_value is not None:
                    merged[item] = item_value
                    layers.sources["%s.%s" % (key, item)] = path
            layers.document[key] = merged
            layers.sources[key] = path
        else:
            layers.set_whole(key, value, path)


def go_ext(name: str) -> str:
    """Go's ``filepath.Ext``: from the last dot of the base name (``.conf`` of ``.conf`` too)."""
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


def walk_config_dir(
    root: str, node_dir: str, redirects: Mapping[str, str] = None
) -> Tuple[List[Tuple[str, str]], List[str]]:
    """``filepath.WalkDir`` of a drop-in dir: ``[(node path, node path to read)]`` and problems.

    ``redirects``: node path in the dir -> node path a wrapper copies there at its next start
    (k3s/RKE2 ``10-cli-config.conf`` and ``20-cli-config-dir``); a redirected name is listed
    whether or not the copy exists yet.
    """
    redirects = dict(redirects or {})
    found: List[Tuple[str, str]] = []
    problems: List[str] = []

    def walk(shown_dir: str, read_dir: str, depth: int = 1) -> None:
        if depth > MAX_NESTING:
            problems.append("kubelet --config-dir %s nests directories deeper than %d levels (not followed)" % (shown_dir, MAX_NESTING))
            return
        try:
            entries = set(os.listdir(under_root(root, read_dir)))
        except FileNotFoundError:
            problems.append("kubelet --config-dir %s does not exist (kubelet would not start)" % shown_dir)
            return
        except OSError as error:
            problems.append("cannot list kubelet --config-dir %s: %s" % (shown_dir, error.strerror or error))
            return
        entries |= {path.rsplit("/", 1)[1] for path in redirects if path.rsplit("/", 1)[0] == shown_dir}
        for name in sorted(entries):
            shown = node_join(shown_dir, name)
            source = redirects.get(shown, node_join(read_dir, name))
            try:
                mode = os.lstat(under_root(root, source, follow=False)).st_mode
            except OSError:
                if shown in redirects:
                    problems.append("%s (copied to %s by the agent) does not exist" % (source, shown))
                continue
            if stat.S_ISDIR(mode):
                walk(shown, source, depth + 1)
            elif go_ext(name) == ".conf":
                found.append((shown, source))

    walk(node_join(node_dir), node_join(node_dir))
    return found, problems


def _load_document(root: str, node_path: str, require_kind: bool) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    text, problem, _exists = read_node_text(root, node_path)
    if text is None:
        return None, problem
    if text == "":
        # configfiles.go Load / LoadIntoJSON: "no configuration is an error" (--config and drop-ins alike).
        return None, "kubelet config file %s was empty" % go_quote(node_path)
    document, problems = parse_kubelet_config(text, require_kind=require_kind)
    if problems:
        return None, "%s: %s" % (node_path, "; ".join(problems))
    return document, None


# --------------------------------------------------------------------------- from layers to settings


class _Builder(Record):
    """Scratch state of :func:`load_kubelet_settings`; frozen into ``KubeletSettings`` at the end."""

    policy: str = POLICY_NONE
    entries: Tuple[MemoryReservation, ...] = ()
    system_reserved: Dict[str, ByteQuantity] = factory(dict)
    kube_reserved: Dict[str, ByteQuantity] = factory(dict)
    eviction_hard_memory: Optional[str] = DEFAULT_EVICTION_HARD_MEMORY
    field_sources: Dict[str, str] = factory(dict)
    problems: List[str] = factory(list)


def _memory_keys(value: object) -> List[str]:
    return [key for key in value if isinstance(key, str) and (key == "memory" or key.startswith("hugepages-"))] if isinstance(value, Mapping) else []


def _apply_layers(builder: _Builder, layers: ConfigLayers) -> None:
    document, problems = layers.document, builder.problems
    policy = document.get("memoryManagerPolicy")
    if isinstance(policy, str):
        builder.policy = policy or POLICY_NONE
    else:
        problems.append("kubelet config: memoryManagerPolicy must be a string, got %r" % (policy,))
    builder.field_sources["policy"] = layers.source_of("memoryManagerPolicy")
    entries, entry_problems = parse_reserved_memory_config(document.get("reservedMemory"))
    problems.extend("kubelet config: %s" % item for item in entry_problems)
    builder.entries = entries
    builder.field_sources["reserved_memory"] = layers.source_of("reservedMemory")
    for key, attribute in (("systemReserved", "system_reserved"), ("kubeReserved", "kube_reserved")):
        resources, resource_problems = memory_resources(document.get(key), key)
        problems.extend("kubelet config: %s" % item for item in resource_problems)
        setattr(builder, attribute, resources or {})
        builder.field_sources[attribute] = layers.source_of(key, _memory_keys(document.get(key)))
    threshold, eviction_problems = eviction_memory(document.get("evictionHard", {}), "evictionHard")
    problems.extend("kubelet config: %s" % item for item in eviction_problems)
    builder.eviction_hard_memory = threshold
    builder.field_sources["eviction_hard"] = layers.source_of("evictionHard", [MEMORY_AVAILABLE])


def _apply_flags(builder: _Builder, flags: KubeletFlags) -> None:
    """Layer 4: ``kubeletConfigFlagPrecedence``."""
    builder.problems.extend("kubelet flags: %s" % item for item in flags.problems)
    if flags.policy is not None:
        builder.policy = flags.policy
        builder.field_sources["policy"] = flags.origins["memory-manager-policy"]
    if flags.reserved_memory is not None:
        builder.entries = flags.reserved_memory
        builder.field_sources["reserved_memory"] = flags.origins["reserved-memory"]
    for attribute, flag in (("system_reserved", "system-reserved"), ("kube_reserved", "kube-reserved")):
        value = getattr(flags, attribute)
        if value is not None:
            resources, resource_problems = memory_resources(value, "--" + flag)
            builder.problems.extend("kubelet flags: %s" % item for item in resource_problems)
            setattr(builder, attribute, resources or {})
            builder.field_sources[attribute] = flags.origins[flag]
    if flags.eviction_hard is not None:
        builder.eviction_hard_memory = flags.eviction_hard.get(MEMORY_AVAILABLE)
        builder.field_sources["eviction_hard"] = flags.origins["eviction-hard"]


def _apply_overrides(builder: _Builder, policy: object, reserved_memory: object) -> None:
    if policy is not None:
        if isinstance(policy, str):
            builder.policy = policy
            builder.field_sources["policy"] = "option policy"
        else:
            builder.problems.append("policy override must be a string, got %r" % (policy,))
    if reserved_memory is not None:
        entries, problems = parse_reserved_memory_override(reserved_memory)
        builder.problems.extend(problems)
        builder.entries = entries
        builder.field_sources["reserved_memory"] = "option reserved_memory"


def drift_tolerance(layers: ConfigLayers, flags: KubeletFlags, policy: str) -> Optional[str]:
    """KEP-6232: the tolerance kubelet applies itself, or ``None`` (gate off, option ``off``, not Static).

    The gate is read with the command line's gates below the config's; the option defaults
    to ``auto`` (kubernetes#142121: "auto (default)").
    """
    gates = dict(flags.feature_gates or {})
    config_gates = layers.document.get("featureGates")
    if isinstance(config_gates, Mapping):
        gates.update((key, value) for key, value in config_gates.items() if isinstance(value, bool))
    if gates.get(DRIFT_TOLERANCE_GATE) is not True or policy != POLICY_STATIC:
        return None
    options = layers.document.get("memoryManagerPolicyOptions")
    option = options.get(DRIFT_TOLERANCE_OPTION, "auto") if isinstance(options, Mapping) else "auto"
    option = str(option).strip()
    return None if option == "off" else option


# --------------------------------------------------------------------------- the loader


def _explicit_args(flags: object) -> Tuple[List[Arg], List[str]]:
    if isinstance(flags, str):
        words, problems = split_args(flags)
    elif isinstance(flags, (list, tuple)):
        words = [arg for arg in flags if isinstance(arg, str)]
        problems = ["kubelet flag %r is not a string" % (arg,) for arg in flags if not isinstance(arg, str)]
    else:
        return [], ["flags must be a list of arguments or a string, got %s" % type(flags).__name__]
    return [Arg(word, "option kubelet_flags") for word in words], problems


def _fatal(problem: str) -> str:
    # A file outside the probe's YAML subset may be one kubelet reads well: say only what is known.
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import SUBSET_NOTE  # pylint: disable=import-outside-toplevel

    return problem if SUBSET_NOTE in problem else problem + " (kubelet would not start)"


def _config_file_layers(
    root: str, config_path: Optional[str], named: bool
) -> Tuple[ConfigLayers, Optional[str], List[str], bool]:
    """``(layers, path read, fatal problems, found)`` for layers 1-2."""
    if config_path is None:
        return kubelet_defaults(), None, [], False
    document, problem = _load_document(root, config_path, require_kind=False)
    if document is None:
        missing = problem is not None and problem.endswith("does not exist")
        if missing and not named:
            return kubelet_defaults(), None, [], False
        return kubelet_defaults(), None, [_fatal("kubelet --config: %s" % problem)], False
    return defaulted_config_file(document, config_path), config_path, [], True


def _choose(option: Optional[str], option_name: str, flag: Optional[str], flag_origin: str, default: Optional[str]) -> Tuple[Optional[str], str]:
    if option:
        return node_join(option), "option " + option_name
    if flag:
        return node_join(flag), flag_origin
    return default, DEFAULT


def load_kubelet_settings(
    root: str = "/",
    kubelet_root_dir: Optional[str] = None,
    config_path: Optional[str] = None,
    config_dir: Optional[str] = None,
    flags: Union[None, str, Sequence[str]] = None,
    policy: Optional[str] = None,
    reserved_memory: Union[None, Mapping[Any, Any], Sequence[Any]] = None,
    launch: Optional[KubeletLaunch] = None,
) -> KubeletSettings:
    """Kubelet's effective memory-manager settings on the node under ``root``.

    ``flags``: kubelet's command line given by the operator (then the discovered one is not
    used; the distribution and service are still reported). ``launch``: a discovery result
    to use instead of discovering (tests, the kubelet stand-in).
    """
    root = os.fspath(root) or "/"
    launch = launch or discover_kubelet(root)
    config_problems = list(launch.problems)
    if flags is not None:
        args, arg_problems = _explicit_args(flags)
    else:
        args, arg_problems = list(launch.args), []
    parsed = parse_kubelet_flags([arg.value for arg in args], [arg.origin for arg in args])
    explicit = any(value is not None for value in (kubelet_root_dir, config_path, config_dir, flags, policy, reserved_memory))

    builder = _Builder()
    builder.problems.extend("kubelet flags: %s" % item for item in arg_problems)
    root_dir, builder.field_sources["root_dir"] = _choose(
        kubelet_root_dir, "kubelet_root_dir", parsed.root_dir, parsed.origins.get("root-dir", ""), DEFAULT_ROOT_DIR
    )
    # kubeadm's place, read only where nothing names kubelet's configuration (today's defaults).
    use_fallback = (launch.default_config or flags is not None) and not (parsed.config_dir or config_dir)
    fallback = node_join(root_dir, "config.yaml") if use_fallback else None
    config, builder.field_sources["config_path"] = _choose(config_path, "kubelet_config", parsed.config, parsed.origins.get("config", ""), fallback)
    dropin_dir, builder.field_sources["config_dir"] = _choose(config_dir, "kubelet_config_dir", parsed.config_dir, parsed.origins.get("config-dir", ""), None)

    named = builder.field_sources["config_path"] != DEFAULT
    layers, config_read, problems, config_found = _config_file_layers(root, config, named)
    config_problems.extend(problems)
    sources = list(launch.sources) + ([config_read] if config_read else [])
    dropins: List[str] = []
    if dropin_dir:
        redirects = dict(launch.dropin_redirects) if not config_dir else {}
        files, walk_problems = walk_config_dir(root, dropin_dir, redirects)
        config_problems.extend(walk_problems)
        for shown, source in files:
            document, problem = _load_document(root, source, require_kind=True)
            if document is None:
                config_problems.append(_fatal("kubelet --config-dir drop-in %s" % problem))
                continue
            merge_dropin(layers, document, shown if shown == source else "%s (from %s)" % (shown, source))
            dropins.append(shown)
    if not (launch.found or config_found or dropins or explicit):
        config_problems.append(
            "no kubelet configuration found under %s: no kubelet unit or distribution wrapper (kubeadm, k3s, RKE2, "
            "k0s, MicroK8s, EKS, OpenShift, Kubespray) and no %s; pass kubelet_config, kubelet_config_dir, "
            "kubelet_flags, or policy and reserved_memory" % (root, node_join(DEFAULT_ROOT_DIR, "config.yaml"))
        )

    _apply_layers(builder, layers)
    _apply_flags(builder, parsed)
    builder.problems.extend(added_gate_problems(parsed.feature_gates, layers.document.get("featureGates")))
    _apply_overrides(builder, policy, reserved_memory)
    return KubeletSettings(
        policy=builder.policy,
        reserved_memory=effective_reserved_memory(builder.entries),
        reserved_memory_entries=builder.entries,
        system_reserved=dict(builder.system_reserved),
        kube_reserved=dict(builder.kube_reserved),
        eviction_hard_memory=builder.eviction_hard_memory,
        root_dir=root_dir or DEFAULT_ROOT_DIR,
        config_path=config_read or config,
        field_sources=dict(builder.field_sources),
        sources=tuple(sources + dropins),
        problems=tuple(builder.problems),
        distribution=launch.distribution,
        service=launch.service,
        config_dir=dropin_dir,
        dropins=tuple(dropins),
        config_problems=tuple(config_problems),
        drift_tolerance=drift_tolerance(layers, parsed, builder.policy),
    )
