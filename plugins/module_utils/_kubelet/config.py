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
:func:`load_kubelet_settings` is the entry point; the merge functions are pure (:mod:`_kubelet.layers`).
Stdlib only (YAML through :mod:`_yaml`), Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.distributions import discover_kubelet
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import KubeletLaunch
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import (
    DEFAULT_ROOT_DIR,
    KubeletSettings,
    go_quote,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.decode import dropins_error, load_error, type_error
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.document import parse_kubelet_config
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.flags import (
    added_gate_problems,
    parse_kubelet_flags,
    split_args,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import read_release, rules_release
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.options import check_overrides
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import effective_reserved_memory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import MAX_NESTING
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NodeFiles, list_dir, node_join, read_node_text
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.layers import (
    DEFAULT,
    ConfigLayers,
    _apply_flags,
    _apply_layers,
    _apply_overrides,
    _Builder,
    cpu_manager_settings,
    defaulted_config_file,
    drift_tolerance,
    effective_gates,
    kubelet_defaults,
    merge_dropin,
)

__all__ = [
    "go_ext",
    "walk_config_dir",
    "load_kubelet_settings",
]


# --------------------------------------------------------------------------- the --config-dir walk and its files


def go_ext(name: str) -> str:
    """Go's ``filepath.Ext``: from the last dot of the base name (``.conf`` of ``.conf`` too)."""
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


def walk_config_dir(
    files: NodeFiles, node_dir: str, redirects: Optional[Mapping[str, str]] = None
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
        listed, problem = list_dir(files, read_dir, "kubelet --config-dir " + shown_dir)
        if listed is None:
            problems.append(problem or "kubelet --config-dir %s does not exist (kubelet would not start)" % shown_dir)
            return
        entries = set(listed)
        entries |= {path.rsplit("/", 1)[1] for path in redirects if path.rsplit("/", 1)[0] == shown_dir}
        for name in sorted(entries):
            shown = node_join(shown_dir, name)
            source = redirects.get(shown, node_join(read_dir, name))
            kind = files.kind(source, follow=False)
            if kind in ("absent", "error"):
                if shown in redirects:
                    problems.append("%s (copied to %s by the agent) does not exist" % (source, shown))
                continue
            if kind == "dir":
                walk(shown, source, depth + 1)
            elif go_ext(name) == ".conf":
                found.append((shown, source))

    walk(node_join(node_dir), node_join(node_dir))
    return found, problems


def _load_document(files: NodeFiles, node_path: str, require_kind: bool) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    text, problem, _exists = read_node_text(files, node_path)
    if text is None:
        return None, problem
    if text == "":
        # configfiles.go Load / LoadIntoJSON: "no configuration is an error" (--config and drop-ins alike).
        return None, "kubelet config file %s was empty" % go_quote(node_path)
    document, problems = parse_kubelet_config(text, require_kind=require_kind)
    if problems:
        return None, "%s: %s" % (node_path, "; ".join(problems))
    return document, None


# --------------------------------------------------------------------------- the loader


def _explicit_args(flags: Union[str, Sequence[str]]) -> Tuple[List[Arg], List[str]]:
    """``kubelet_flags`` (checked by :func:`check_overrides`): a string split as the shell would, or its list."""
    words, problems = split_args(flags) if isinstance(flags, str) else (list(flags), [])
    return [Arg(word, "option kubelet_flags") for word in words], problems


def _fatal(problem: str) -> str:
    # A file outside the probe's YAML subset may be one kubelet reads well: say only what is known.
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import SUBSET_NOTE  # pylint: disable=import-outside-toplevel

    return problem if SUBSET_NOTE in problem else problem + " (kubelet would not start)"


def _decode_error(files: NodeFiles, config_path: str, document: Mapping[str, Any]) -> Optional[str]:
    """Kubelet's refusal of a field of the wrong type in the ``--config`` file (:mod:`_kubelet.decode`), or None."""
    text, _problem, _exists = read_node_text(files, config_path)
    inner = type_error(document, (text or "").lstrip("\ufeff \t\r\n").startswith("{"))
    return load_error(config_path, inner) if inner else None


def _config_file_layers(
    files: NodeFiles, config_path: Optional[str], named: bool
) -> Tuple[ConfigLayers, Optional[str], List[str], bool, Optional[str]]:
    """``(layers, path read, fatal problems, found, kubelet's refusal of a field's type)`` for layers 1-2."""
    if config_path is None:
        return kubelet_defaults(), None, [], False, None
    document, problem = _load_document(files, config_path, require_kind=False)
    if document is None:
        missing = problem is not None and problem.endswith("does not exist")
        if missing and not named:
            return kubelet_defaults(), None, [], False, None
        return kubelet_defaults(), None, [_fatal("kubelet --config: %s" % problem)], False, None
    return defaulted_config_file(document, config_path), config_path, [], True, _decode_error(files, config_path, document)


def _choose(option: Optional[str], option_name: str, flag: Optional[str], flag_origin: str, default: Optional[str]) -> Tuple[Optional[str], str]:
    if option:
        return node_join(option), "option " + option_name
    if flag:
        return node_join(flag), flag_origin
    return default, DEFAULT


def load_kubelet_settings(
    files: NodeFiles,
    kubelet_root_dir: Optional[str] = None,
    config_path: Optional[str] = None,
    config_dir: Optional[str] = None,
    flags: Union[None, str, Sequence[str]] = None,
    policy: Optional[str] = None,
    reserved_memory: Union[None, Mapping[Any, Any], Sequence[Any]] = None,
    launch: Optional[KubeletLaunch] = None,
    kubelet_release: Optional[str] = None,
    untested_release: str = "refuse",
) -> KubeletSettings:
    """Kubelet's effective memory-manager settings on the node whose files are ``files``, judged at the release of
    the kubelet that will start.

    ``flags``: kubelet's command line given by the operator (then the discovered one is not
    used; the distribution and service are still reported). ``launch``: a discovery result
    to use instead of discovering (tests, the kubelet stand-in). ``kubelet_release``: the release, named by the
    operator instead of asked of the node's program; ``untested_release``: ``nearest`` judges a release outside the
    tested matrix by the nearest tested release's rules. An override of the wrong shape (``flags``, ``policy``,
    ``reserved_memory``) or a ``kubelet_release`` that names no release raises ``OptionError``, naming the option.
    """
    check_overrides(flags, policy, reserved_memory)
    launch = launch or discover_kubelet(files)
    release = read_release(files, launch.program, launch.release_metadata, kubelet_release)
    judged_at = rules_release(release, untested_release)
    config_problems = list(launch.problems)
    if flags is not None:
        args, arg_problems = _explicit_args(flags)
    else:
        args, arg_problems = list(launch.args), []
    parsed = parse_kubelet_flags([arg.value for arg in args], [arg.origin for arg in args], judged_at)
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
    layers, config_read, problems, config_found, decode_error = _config_file_layers(files, config, named)
    file_gates = layers.document.get("featureGates") if config_read else None
    config_problems.extend(problems)
    sources = list(launch.sources) + ([config_read] if config_read else [])
    dropins: List[str] = []
    if dropin_dir:
        redirects = dict(launch.dropin_redirects) if not config_dir else {}
        found_dropins, walk_problems = walk_config_dir(files, dropin_dir, redirects)
        config_problems.extend(walk_problems)
        documents = []
        for shown, source in found_dropins:
            document, problem = _load_document(files, source, require_kind=True)
            if document is None:
                config_problems.append(_fatal("kubelet --config-dir drop-in %s" % problem))
                continue
            merge_dropin(layers, document, shown if shown == source else "%s (from %s)" % (shown, source))
            dropins.append(shown)
            documents.append(document)
        decode_error = decode_error or dropins_error(documents)  # kubelet loads --config, then merges the drop-ins
    if not (launch.found or config_found or dropins or explicit):
        config_problems.append(
            "no kubelet configuration found under %s: no kubelet unit or distribution wrapper (kubeadm, k3s, RKE2, "
            "k0s, MicroK8s, EKS, OpenShift, Kubespray) and no %s; pass kubelet_config, kubelet_config_dir, "
            "kubelet_flags, or policy and reserved_memory" % (files.root, node_join(DEFAULT_ROOT_DIR, "config.yaml"))
        )

    _apply_layers(builder, layers)
    _apply_flags(builder, parsed)
    builder.problems.extend(added_gate_problems(judged_at, parsed.feature_gates, layers.document.get("featureGates")))
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
        release=release,
        rules_release=judged_at,
        feature_gates=effective_gates(layers, parsed),
        cpu=cpu_manager_settings(layers, parsed, decode_error, file_gates),
    )
