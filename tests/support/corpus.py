# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node trees for the kubelet judge and the parity test: the unit tests' recipes, kubelet's checkpoint vectors in a tree.

Each case builds one node tree (``build(root) -> root``) and names the ``drift_bound`` the probe
runs with; the verdict is never written here: the probe computes it and kubelet's own code judges it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import (
    PR_140473_IOMEM,
    build_node_tree,
    iomem_text,
)
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    HUGEPAGE_1G_KB,
    HUGEPAGE_2M_KB,
    KIB,
    MIB,
    Boot,
    guaranteed_pods,
    kubelet_config,
    recorded_checkpoint,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import NON_REPAIRABLE, kaslr_node


class Case(NamedTuple):
    build: Callable[[str], str]
    bound: str = "auto"


def _node(recorded: Boot, current: Optional[Boot] = None, **options: Any) -> Callable[[str], str]:
    return lambda root: write_kubelet_node(root, recorded, current, **options)


def _kaslr(move_kb: int) -> Callable[[str], str]:
    before = two_node_boot()
    after = before.moved(node0=-move_kb, node1=move_kb)
    return _node(before, after, pods=guaranteed_pods(4, (0,), 2 * GIB), iomem=iomem_text(kernel_start=0x1000000, ram_end=512 * GIB))


def _n_nodes(count: int) -> Callable[[str], str]:
    before = Boot({n: 16 * GIB // KIB for n in range(count)})
    moves = {"node%d" % n: (-45260 if n == 0 else 45260 if n == count - 1 else 0) for n in range(count)} if count > 1 else {"node0": -8}
    return _node(before, before.moved(**moves), pods={"pod-%d" % n: {"c": [([n], "memory", GIB)]} for n in range(count)})


def _both_hugepage_sizes() -> Callable[[str], str]:
    pools = {HUGEPAGE_2M_KB: 512, HUGEPAGE_1G_KB: 4}
    before = Boot({0: 32 * GIB // KIB, 1: 32 * GIB // KIB}, {0: dict(pools), 1: dict(pools)})
    pods = {"p": {"c": [([0, 1], "memory", 20 * GIB), ([0, 1], "hugepages-1Gi", 6 * GIB), ([0, 1], "hugepages-2Mi", 512 * MIB)]}}
    return _node(before, before.moved(node0=45260, node1=-45260), pods=pods)


def _cross_numa_v3() -> Callable[[str], str]:
    before = Boot({n: 8 * GIB // KIB for n in range(4)})
    pods = {"a": {"x": [([0, 1], "memory", 10 * GIB)]}, "b": {"y": [([2, 3], "memory", 3 * GIB)], "z": [([2, 3], "memory", GIB)]}}
    return _node(before, before.moved(node1=-45260, node2=45260), pods=pods, layout="v3")


def _nearly_full(extra: int) -> Callable[[str], str]:
    before = Boot({0: 16 * GIB // KIB})
    after = before.moved(node0=-45260)
    return _node(before, after, pods={"full": {"c": [([0], "memory", after.mem_total_kb[0] * KIB - GIB + extra)]}})


def _policy_static_lowercase(root: str) -> str:
    before = two_node_boot()
    return write_kubelet_node(root, before, checkpoint_bytes=recorded_checkpoint(before, uniform_reserved([0, 1]), {}, policy="static"))


def _policy_none_in_sync(root: str) -> str:
    before = two_node_boot()
    raw = recorded_checkpoint(before, {}, {}, policy="None")
    return write_kubelet_node(root, before, before.moved(node0=-4 * 1024 * 1024), checkpoint_bytes=raw, config={"memoryManagerPolicy": "None"})


def _zero_checksum(root: str) -> str:
    before = two_node_boot()
    text = recorded_checkpoint(before, uniform_reserved([0, 1]), {}).decode()
    raw = (text[: text.rindex('"checksum":')] + '"checksum":0}').encode()
    return write_kubelet_node(root, before, before.moved(node0=-4), checkpoint_bytes=raw)


def _empty_state_with_entries(root: str) -> str:
    fields = CheckpointFields(policy_name="Static", machine_state={}, entries={"p": {"c": [Block([0], "memory", 1)]}})
    return write_kubelet_node(root, two_node_boot(), checkpoint_bytes=marshal_legacy(fields))


def _block_on_missing_resource(root: str) -> str:
    pods = {"p": {"c": [([0], "hugepages-1Gi", GIB)]}}
    raw = recorded_checkpoint(Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 2}}), uniform_reserved([0]), pods)
    return write_kubelet_node(root, Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0}}), checkpoint_bytes=raw)


def _reserved_doubled(root: str) -> str:
    return write_kubelet_node(root, two_node_boot(), reserved=uniform_reserved([0, 1]), config=kubelet_config(uniform_reserved([0, 1], 2 * GIB)))


def _allocatable_mismatch(root: str) -> str:
    config = kubelet_config(uniform_reserved([0, 1]))
    config["systemReserved"] = {"memory": "1Gi"}
    return write_kubelet_node(root, two_node_boot(), config=config)


def _non_repairable(name: str) -> Callable[[str], str]:
    build = NON_REPAIRABLE[name][0]

    def at(root: str) -> str:
        import pathlib

        return build(pathlib.Path(root))

    return at


def unit_cases() -> Dict[str, Case]:
    """The trees of the engine's unit tests (test_drift.py, the modules' NON_REPAIRABLE table)."""
    cases: Dict[str, Case] = {}
    for move_mib in (40, 44.19921875, 64, 100, 130):
        cases["kaslr_move_%smib" % move_mib] = Case(_kaslr(int(move_mib * 1024) // 4 * 4))
    for loss in (4, 12, 44, 1024):
        before = Boot({0: 65839165440 // KIB})
        cases["kib_loss_%d" % loss] = Case(_node(before, before.moved(node0=-loss), pods=guaranteed_pods(2, (0,), 8 * GIB)))
    for count in (1, 2, 4, 8):
        cases["numa_nodes_%d" % count] = Case(_n_nodes(count))
    cases["hugepages_both_sizes_with_drift"] = Case(_both_hugepage_sizes())
    cases["cross_numa_group_v3"] = Case(_cross_numa_v3())
    cases["nearly_full_fits_by_zero"] = Case(_nearly_full(0))
    cases["nearly_full_short_by_one_page"] = Case(_nearly_full(4096))
    before = two_node_boot()
    for move, name in ((100 * MIB, "bound_equal"), (100 * MIB + 4096, "bound_plus_one_page")):
        cases["drift_%s_100Mi" % name] = Case(_node(before, before.moved(node0=-move // KIB, node1=move // KIB)), "100Mi")
    cases["pr_140473_iomem_in_sync"] = Case(_node(two_node_boot(), iomem=PR_140473_IOMEM))
    cases["capacity_loss_1gib"] = Case(_node(before, before.moved(node0=-GIB // KIB)))
    cases["off_bound_4kib"] = Case(_node(before, before.moved(node0=-4)), "off")
    moved = before.moved(node0=-45260, node1=45260)
    cases["zeroed_iomem_drift"] = Case(_node(before, moved, iomem=iomem_text(zeroed=True)))
    cases["zeroed_iomem_drift_bound_128Mi"] = Case(_node(before, moved, iomem=iomem_text(zeroed=True)), "128Mi")
    cases["zeroed_iomem_in_sync"] = Case(_node(before, iomem=iomem_text(zeroed=True)))
    cases["hugepages_4_to_2"] = Case(_node(two_node_boot(hugepages_1g=4), two_node_boot(hugepages_1g=2)))
    cases["node_disappears"] = Case(_node(before, Boot({0: before.mem_total_kb[0]}), reserved=uniform_reserved([0, 1])))
    cases["hugepage_size_appears"] = Case(_node(Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0}}),
                                                Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 0}})))
    cases["reserved_doubled_in_config"] = Case(_reserved_doubled)
    cases["node_allocatable_mismatch"] = Case(_allocatable_mismatch)
    cases["policy_static_lowercase"] = Case(_policy_static_lowercase)
    cases["policy_none_in_sync"] = Case(_policy_none_in_sync)
    cases["missing_config_policy_none"] = Case(_node(before, config=""))
    for index, content in enumerate((b"{", b" ", b"garbage", b"\x00" * 64, b'{"policyName":"Static","checksum":1}')):
        cases["corrupt_%d" % index] = Case(_node(before, checkpoint_bytes=content))
    cases["zero_checksum_with_drift"] = Case(_zero_checksum)
    cases["no_checkpoint"] = Case(_node(before, checkpoint_bytes=b""))
    cases["empty_machine_state"] = Case(_node(before, checkpoint_bytes=b'{"policyName":"Static","machineState":{},"checksum":3940083781}'))
    cases["empty_machine_state_with_entries"] = Case(_empty_state_with_entries)
    cases["block_on_missing_resource"] = Case(_block_on_missing_resource)
    cases["precedence_hugepages_first"] = Case(_node(two_node_boot(hugepages_1g=2), two_node_boot(hugepages_1g=1).moved(node0=-GIB // KIB),
                                                     iomem=iomem_text(zeroed=True)))
    for layout in checkpoint_layouts():
        cases["modules_kaslr_node_%s" % layout] = Case(lambda root, layout=layout: _kaslr_node_at(root, layout))
    for name in sorted(NON_REPAIRABLE):
        cases["modules_%s" % name] = Case(_non_repairable(name))
    cases.update(layout_cases())
    cases.update(distribution_cases())
    return cases


def distribution_cases() -> Dict[str, Case]:
    """The distribution corpus (test_distributions.py LAYOUTS): kubelet as each distribution starts it."""
    from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, drifted_node

    def case(name: str) -> Case:
        files, _distribution, _service, root_dir = LAYOUTS[name]
        return Case(lambda root: drifted_node(root, files, kubelet_root_dir=root_dir))

    cases = {"distribution_%s" % name: case(name) for name in sorted(LAYOUTS)}
    cases.update(release_cases())
    return cases


def release_cases() -> Dict[str, Case]:
    """Distribution nodes whose program says its release (tests/support/programs.py): each layout at one release,
    and the layouts that carry the pause-image flag kubelet 1.35 removed, at every release."""
    from ansible_collections.nodeops.numa_drift.tests.support.distributions import (  # pylint: disable=import-outside-toplevel
        LAYOUTS, PAUSE_IMAGE_FILES, VERSIONS, released_node, with_pause_image,
    )

    def case(layout: str, version: str, pause_image: bool) -> Case:
        return Case(lambda root: released_node(root, layout, version, with_pause_image(layout) if pause_image else None))

    cases = {"release_%s_%s" % (layout, VERSIONS[index % len(VERSIONS)]): case(layout, VERSIONS[index % len(VERSIONS)], False)
             for index, layout in enumerate(sorted(LAYOUTS))}
    cases.update(("release_%s_pause_image_%s" % (layout, version), case(layout, version, True))
                 for layout in sorted(PAUSE_IMAGE_FILES) for version in VERSIONS)
    return cases


def _edited(layout: str, edit: Callable[[str], str], drift_kb: int = 0) -> Callable[[str], str]:
    """A checkpoint kubelet wrote for this very boot (or ``drift_kb`` ago), then one field edited."""
    def build(root: str) -> str:
        before = two_node_boot()
        pods = guaranteed_pods(2, (0,), GIB)
        raw = edit(recorded_checkpoint(before, uniform_reserved([0, 1]), pods, layout).decode()).encode()
        return write_kubelet_node(root, before, before.moved(node0=drift_kb, node1=-drift_kb), checkpoint_bytes=raw)
    return build


def _bump(key: str, by: int = 1) -> Callable[[str], str]:
    pattern = re.compile(r'"%s":(\d+)' % key)
    return lambda text: pattern.sub(lambda m: '"%s":%d' % (key, int(m.group(1)) + by), text, count=1)


def _set_number(key: str, value: int) -> Callable[[str], str]:
    pattern = re.compile(r'"%s":\d+' % key)
    return lambda text: pattern.sub('"%s":%d' % (key, value), text, count=1)


def _empty_data(text: str) -> str:
    return re.sub(r'"data":"(?:[^"\\]|\\.)*","dataChecksum":\d+', '"data":"","dataChecksum":0', text)


def _unknown_key(before: str, after: str) -> Callable[[str], str]:
    return lambda text: text.replace(before, after, 1)


def _same(text: str) -> str:
    return text


def layout_cases() -> Dict[str, Case]:
    """Files on which kubelet releases may differ: each layout's checksums, damaged one part at a time."""
    cases = {}
    for drift_kb, suffix in ((0, ""), (45260, "_with_drift")):
        cases["layout_legacy%s" % suffix] = Case(_edited("legacy", _same, drift_kb))
        cases["layout_v3%s" % suffix] = Case(_edited("v3", _same, drift_kb))
        cases["layout_legacy_checksum_zero%s" % suffix] = Case(_edited("legacy", _set_number("checksum", 0), drift_kb))
        cases["layout_legacy_checksum_wrong%s" % suffix] = Case(_edited("legacy", _bump("checksum"), drift_kb))
        cases["layout_v3_data_checksum_wrong%s" % suffix] = Case(_edited("v3", _bump("dataChecksum"), drift_kb))
        cases["layout_v3_data_checksum_zero%s" % suffix] = Case(_edited("v3", _set_number("dataChecksum", 0), drift_kb))
        cases["layout_v3_inline_checksum_wrong%s" % suffix] = Case(_edited("v3", _bump("checksum"), drift_kb))
        cases["layout_v3_inline_checksum_zero%s" % suffix] = Case(_edited("v3", _set_number("checksum", 0), drift_kb))
        cases["layout_v3_data_empty%s" % suffix] = Case(_edited("v3", _empty_data, drift_kb))
        # Fields kubelet did not write: its decoder reads past them (in sync: it starts; drifted: never rewritten).
        cases["layout_legacy_unknown_key%s" % suffix] = Case(_edited("legacy", _unknown_key('{"policyName"', '{"extra":1,"policyName"'), drift_kb))
        spare_key = _unknown_key('"numaAffinity"', '"spare":[0],"numaAffinity"')
        cases["layout_legacy_unknown_block_key%s" % suffix] = Case(_edited("legacy", spare_key, drift_kb))
    return cases


def checkpoint_layouts() -> List[str]:
    return ["legacy", "v3"]


def _kaslr_node_at(root: str, layout: str) -> str:
    import pathlib

    return kaslr_node(pathlib.Path(root), layout=layout)


# --- the sandbox fleet's nodes ----------------------------------------------------------------


def sandbox_fleet_trees() -> Dict[str, Tuple[str, Any]]:
    """The sandbox fleet's nodes (``fleet.SCENARIOS``), laid out by ``fleet.write_node_tree`` in a test.

    ``{"<scenario>/<node>": (node name, plan)}``: each scenario at its default size, a node
    already listed under an earlier scenario (same name, same plan: the same tree) left out."""
    from ansible_collections.nodeops.numa_drift.tests.sandbox import fleet

    trees: Dict[str, Tuple[str, Any]] = {}
    seen: List[Tuple[str, Any]] = []
    for scenario in sorted(fleet.SCENARIOS):
        build, count, _about = fleet.SCENARIOS[scenario]
        for name, plan in build(count):
            if (name, plan) not in seen:
                seen.append((name, plan))
                trees["%s/%s" % (scenario, name)] = (name, plan)
    return trees


# --- kubelet's checkpoint vectors in a node tree ----------------------------------------------


def _inline_or_data(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The part of a vector that describes the machine: the V3 ``data`` when it parses, else inline."""
    data = document.get("data")
    if isinstance(data, str):
        try:
            parsed = json.loads(data)
            if isinstance(parsed, dict) and parsed.get("machineState"):
                return parsed
        except ValueError:
            pass
    return document


def vector_tree(root: str, content: str) -> str:
    """A node whose machine and configuration are the ones the vector's machine state records.

    Per NUMA node: MemTotal = the ``memory`` total (in kB, rounded up), nr_hugepages = each
    hugepage total / page size, reservedMemory = each systemReserved; the Node Allocatable
    reservation equals the reservedMemory sum (systemReserved + evictionHard). An unparsable
    vector gets a one-node machine.
    """
    try:
        document = _inline_or_data(json.loads(content))
        state = document.get("machineState") or {}
    except ValueError:
        state = {}
    nodes: Dict[int, Dict[str, Any]] = {}
    reserved: Dict[int, Dict[str, int]] = {}
    for key, node in sorted(state.items(), key=lambda item: int(item[0])) or [("0", {"memoryMap": {"memory": {"total": 4 * GIB, "systemReserved": GIB}}})]:
        memory_map = node.get("memoryMap") or {}
        memory = memory_map.get("memory", {})
        pools = {}
        for resource, table in memory_map.items():
            if resource.startswith("hugepages-"):
                size_kb = {"hugepages-2Mi": 2048, "hugepages-1Gi": 1048576}.get(resource)
                if size_kb:
                    pools[size_kb] = int(table.get("total", 0)) // (size_kb * KIB)
        nodes[int(key)] = {"mem_total_kb": -(-int(memory.get("total", 0)) // KIB), "hugepages": pools or {2048: 0}}
        limits = {res: int(table.get("systemReserved", 0)) for res, table in memory_map.items() if int(table.get("systemReserved", 0))}
        if limits:
            reserved[int(key)] = limits
    totals: Dict[str, int] = {}
    for limits in reserved.values():
        for resource, size in limits.items():
            totals[resource] = totals.get(resource, 0) + size
    eviction = min(totals.get("memory", 0), 100 * MIB)
    system_reserved = {resource: str(size) for resource, size in totals.items()}
    system_reserved["memory"] = str(totals.get("memory", 0) - eviction)
    config: Dict[str, Any] = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": n, "limits": {r: str(v) for r, v in limits.items()}} for n, limits in sorted(reserved.items())],
        "evictionHard": {"memory.available": str(eviction)},
        "systemReserved": system_reserved,
    }
    return build_node_tree(root, nodes=nodes, kubelet_config=config, checkpoint=content)


# --- configurations as people write them (the checkpoint itself in sync) -----------------------


def _with_config(edit: Callable[[Dict[str, Any]], None], **options: Any) -> Callable[[str], str]:
    boot = two_node_boot()
    config = kubelet_config(uniform_reserved([0, 1]))
    edit(config)
    return _node(boot, config=config, **options)


def _set(**values: Any) -> Callable[[Dict[str, Any]], None]:
    return lambda config: config.update(values)


def _reserved_spelled(first: str, second: str) -> Callable[[Dict[str, Any]], None]:
    def edit(config: Dict[str, Any]) -> None:
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": first}}, {"numaNode": 1, "limits": {"memory": second}}]
    return edit


def _reserved_split_entries(config: Dict[str, Any]) -> None:
    # Node 0 named twice (512Mi each): kubelet decides whether that is 512Mi, 1Gi or an error.
    config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "512Mi"}}, {"numaNode": 0, "limits": {"memory": "512Mi"}},
                                {"numaNode": 1, "limits": {"memory": "1Gi"}}]


def _kube_and_system_reserved(config: Dict[str, Any]) -> None:
    config["systemReserved"] = {"memory": "1Gi"}
    config["kubeReserved"] = {"memory": "948Mi"}


def _eviction_explicit(config: Dict[str, Any]) -> None:
    config["evictionHard"] = {"memory.available": "200Mi"}
    config["systemReserved"] = {"memory": "1848Mi"}


def _eviction_percentage(config: Dict[str, Any]) -> None:
    config["evictionHard"] = {"memory.available": "1%"}


def config_cases() -> Dict[str, Case]:
    cases: Dict[str, Case] = {}
    for policy in ("Static", "static", "STATIC", "Statik", "None", "none", "BestEffort", "besteffort", ""):
        cases["config_policy_%s" % (policy or "empty")] = Case(_with_config(_set(memoryManagerPolicy=policy)))
    for first, second in (("1Gi", "1024Mi"), ("1073741824", "1048576Ki"), ("1G", "1Gi"), ("0.5Gi", "1536Mi"), ("1Gi", "1Gb"),
                          ("1e9", "1Gi"), ("1Gi ", "1Gi"), ("+1Gi", "1Gi"), ("-1Gi", "3Gi")):
        cases["config_reserved_%s_%s" % (first.strip(), second)] = Case(_with_config(_reserved_spelled(first, second)))
    cases["config_reserved_duplicate_node_entries"] = Case(_with_config(_reserved_split_entries))
    cases["config_kube_and_system_reserved"] = Case(_with_config(_kube_and_system_reserved))
    cases["config_eviction_explicit_200Mi"] = Case(_with_config(_eviction_explicit))
    cases["config_eviction_percentage"] = Case(_with_config(_eviction_percentage))
    cases["config_reserved_larger_than_node"] = Case(_with_config(_reserved_spelled("70Gi", "1Gi")))
    cases["config_reserved_by_flag"] = Case(_with_config(lambda config: config.pop("reservedMemory"),
                                                         kubeadm_flags="--reserved-memory=0:memory=1Gi;1:memory=1Gi"))
    cases["config_policy_by_flag_overrides_file"] = Case(_with_config(_set(memoryManagerPolicy="None"),
                                                                      kubeadm_flags="--memory-manager-policy=Static"))
    return cases
