# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's CPU-manager rules, one by one (``_cpu.rules``, ``_cpu.cpuset``, ``_cpu.checkpoint``, ``_cpu.reserved``), and
the classes ``_cpu.assess`` gives a node tree. Kubelet's own code judges the same rules in tests/kubelet_judge."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu import rules
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import (
    CORRUPTED,
    CpuState,
    RestoreError,
    accepted_checksums,
    data_checksum,
    pod_level_cpus,
    recorded_cpus,
    restore,
    v2_checksum,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, format_cpuset, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.reserved import take_packed
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.cpus import CpuInfo, read_cpu_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support import cputree

CPUS = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2)
ALL = sorted(CPUS)
STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}
POD = {"pod-a": {"app": "2,10"}}
S = frozenset


@pytest.mark.parametrize("text, cpus", [("", []), ("0-2,5", [0, 1, 2, 5]), ("7", [7]), ("3-3", [3])])
def test_cpuset_round_trip(text, cpus):
    assert parse_cpuset(text) == S(cpus)
    assert format_cpuset(cpus) == text or text == "3-3"


@pytest.mark.parametrize("text", ["1-0", "a", "1 ,2", "1-2-3", "0-99999999", "-1", "0-65535,1-65535"])
def test_cpuset_refuses_what_kubelet_or_any_machine_cannot_hold(text):
    with pytest.raises(CpuSetError):
        parse_cpuset(text)


@pytest.mark.parametrize("text, error", [
    ("1-0", 'invalid range "1-0" (1 > 0)'),
    ("a", 'strconv.Atoi: parsing "a": invalid syntax'),
    ("1 ,2", 'strconv.Atoi: parsing "1 ": invalid syntax'),
    ("1-2-3", 'strconv.Atoi: parsing "2-3": invalid syntax'),  # strings.SplitN(r, "-", 2)
    ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
    ("1--3", 'invalid range "1--3" (1 > -3)'),
    ("99999999999999999999", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
])
def test_cpuset_errors_are_kubelets(text, error):
    with pytest.raises(CpuSetError) as raised:
        parse_cpuset(text)
    assert str(raised.value) == error


def test_cpuset_takes_a_sign_as_strconv_does():
    assert parse_cpuset("+1-+3,05") == S([1, 2, 3, 5])


def test_v2_checksum_is_kubelets_test_vector():
    # v1.34.4 state/state_checkpoint_test.go TestCheckpointStateRestore "Restore valid checkpoint".
    assert v2_checksum("none", "1-3", {"pod": {"container1": "4-6", "container2": "1-3"}}) == 3610638499


def test_data_checksum_is_kubelets_test_vector():
    assert data_checksum('{"policyName":"none","defaultCPUSet":"4-6"}') == 657950972


def test_restore_reads_the_layout_of_each_release():
    good = cputree.cpu_checkpoint_v4("static", "0-1,3-9,11-15", POD)
    broken = cputree.cpu_checkpoint_v4("static", "0-1,3-9,11-15", POD, data_checksum=1)
    assert isinstance(restore(good, "static", 37), CpuState) and restore(good, "static", 37).layout == "v4"
    assert restore(broken, "static", 34).layout == "v2"  # v1.34 reads the v2 half only
    assert restore(broken, "static", 37) == RestoreError("could not load v4 checkpoint: " + CORRUPTED)


@pytest.mark.parametrize("minor, error", [(34, CORRUPTED), (35, CORRUPTED), (37, CORRUPTED),
                                          (36, "json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string")])
def test_a_bad_v2_checksum_as_each_release_says_it(minor, error):
    raw = cputree.cpu_checkpoint_v2("static", "0-1,3-9,11-15", POD, checksum=12345)
    assert restore(raw, "static", minor) == RestoreError(error)


def test_checksum_zero_is_restored_but_marked():
    state = restore(cputree.cpu_checkpoint_v2("static", "0-15", {}, checksum=0), "static", 34)
    assert state.checksum_zero and state.default == S(ALL)


def test_policy_then_default_then_entries():
    assert restore(cputree.cpu_checkpoint_v2("none", "0-15"), "static", 34) == RestoreError(
        'configured policy "static" differs from state checkpoint policy "none"')
    assert "could not parse default cpu set \"x\"" in restore(cputree.cpu_checkpoint_v2("static", "x"), "static", 34).text
    assert "could not parse default CPU set" in restore(cputree.cpu_checkpoint_v4("static", "x"), "static", 37).text
    assert 'for container "app" in pod "pod-a"' in restore(cputree.cpu_checkpoint_v2("static", "0", {"pod-a": {"app": "9-1"}}), "static", 34).text


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'{"policyName": 7}', b'{"checksum": -1}', b'{"entries": {"p": 3}}', b"9" * 5000])
def test_hostile_files_are_restore_errors_never_exceptions(raw):
    assert isinstance(restore(raw, "static", 34), RestoreError)


def test_a_v1_layout_with_entries_is_not_judged_before_1_37():
    assert restore(b'{"policyName":"static","defaultCpuSet":"0","entries":{"cid":"1"},"checksum":1}', "static", 34).modelled is False


# Kubelet's own v3 files (state_checkpoint_test.go at v1.36.3 and v1.37.2, with their checksums).
V3_36 = (b'{"policyName":"none","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"1-3"}},'
         b'"podEntries":{"pod":{"cpuSet":"4-6"}},"checksum":2649431787}')
V3_37 = (b'{"policyName":"static","defaultCPUSet":"1-2","entries":{"pod1":{"container1":"5-6","container2":"3-4"}},'
         b'"podEntries":{"pod2":{"cpuSet":"7-9"}},"checksum":%d}')


def test_a_v3_file_is_read_by_v1_36_with_pod_level_resource_managers_and_by_v1_37():
    """v1.36 reads the v3 layout only with the gate on (its v2 reader, the gate off, falls back to v1 and says why);
    v1.37's v3 reader takes both checksums kubelet's test holds valid, and restores podEntries only with the gate on."""
    state = restore(V3_36, "none", 36, pod_level=True)
    assert (state.layout, state.pod_entries, state.pod_level) == ("v3", {"pod": frozenset({4, 5, 6})}, True)
    assert restore(V3_36, "none", 36) == RestoreError("json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string")
    assert restore(V3_36, "none", 35) == RestoreError(CORRUPTED)
    for stored in (766259872, 2284712151):
        for pod_level in (False, True):
            state = restore(V3_37 % stored, "static", 37, pod_level=pod_level)
            assert (state.layout, state.pod_entries, state.pod_level) == ("v3", {"pod2": frozenset({7, 8, 9})}, pod_level)
    assert restore(V3_37 % 2284712151, "static", 36, pod_level=True) == RestoreError(
        "json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string")  # v1.36 knows no V3 name


def test_pod_level_cpus_count_only_where_restored():
    state = restore(V3_37 % 766259872, "static", 37, pod_level=True)
    assert pod_level_cpus(state) == frozenset({7, 8, 9}) and recorded_cpus(state) == frozenset(range(1, 10))
    assert pod_level_cpus(restore(V3_37 % 766259872, "static", 37)) == frozenset()


@pytest.mark.parametrize("pod_entries, error", [
    ('{"p":{"cpuSet":"9-1"}}', 'failed to parse cpuset: invalid range "9-1" (9 > 1)'),
    ('{"p":{"cpuSet":"x"}}', 'failed to parse cpuset: strconv.Atoi: parsing "x": invalid syntax'),
    ('{"p":"1"}', "json: cannot unmarshal string into Go value of type state.podEntryJSON"),
    ('[1]', "json: cannot unmarshal array into Go struct field CPUManagerCheckpointData.podEntries of type state.PodCPUAssignments"),
])
def test_a_v4_data_part_whose_pod_entries_do_not_decode_is_refused(pod_entries, error):
    data = '{"policyName":"static","defaultCpuSet":"0-3","podEntries":%s}' % pod_entries
    raw = cputree.cpu_checkpoint_v4("static", "0-3", {}, data=data)
    assert restore(raw, "static", 37) == RestoreError("could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: " + error)


def test_validate_state_order_and_words():
    online = S(ALL)
    assert rules.validate_state(online, S([0]), False, S(), {"p": {"c": S([1])}}) == "default cpuset cannot be empty"
    assert rules.validate_state(online, S([0]), False, S(), {}) is None
    assert rules.validate_state(online, S([0]), False, S([1]), {}) == 'not all reserved cpus: "0" are present in defaultCpuSet: "1"'
    assert rules.validate_state(online, S([0]), True, S([0, 1]), {}) == 'some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-1"'
    assert rules.validate_state(online, S([0]), False, S([0, 1]), {"p": {"c": S([1, 2])}}) == (
        'pod: p, container: c cpuset: "1-2" overlaps with default cpuset "0-1"')
    assert rules.validate_state(online, S([0]), False, S([0, 1]), {"p": {"c": S([2])}}) == (
        'current set of available CPUs "0-15" doesn\'t match with CPUs in state "0-2"')
    assert rules.validate_state(S([0, 1, 2]), S([0]), True, S([1]), {"p": {"c": S([2])}}) is None


def test_construction_rules():
    assert rules.reserved_cpus_online("0,15", S([0, 15]), S(range(15))) == "reserved-cpus: 0,15 is not a subset of online-cpus: 0-14"
    assert rules.reservation_known(None) and rules.reservation_known(0) is None
    assert rules.reservation_nonzero(0) and rules.reservation_nonzero(1) is None
    assert rules.reserved_size(S(), 2).endswith("(size of  did not equal 2)")


def _info(machine):
    return {cpu: CpuInfo(min(o for o, spec in machine.items() if spec[:2] == (core, socket)), socket, node)
            for cpu, (core, socket, node) in machine.items()}


def test_kubelets_pick_packs_into_the_least_free_socket():
    cpus = _info(CPUS)
    assert take_packed(cpus, 2, 8, 1) == S([0])
    assert take_packed(cpus, 2, 8, 2) == S([0, 8])  # a whole core
    socket_1_smaller = {cpu: info for cpu, info in cpus.items() if cpu not in (0, 8)}
    assert take_packed(socket_1_smaller, 2, 7, 1) == S([1])  # socket 0 has fewer free CPUs: packed there
    only_socket_1 = {cpu: info for cpu, info in cpus.items() if info.socket == 1}
    assert take_packed(only_socket_1, 1, 4, 1) == S([4])
    assert take_packed(only_socket_1, 1, 4, 9) == S()


def test_topology_skips_offline_cpus(tmp_path):
    root = cputree.build_cpu_node(str(tmp_path), CPUS, [cpu for cpu in ALL if cpu not in (3, 11)], STATIC)
    topology = read_cpu_topology(HostFiles(root))
    assert topology.known and sorted(topology.cpus) == [cpu for cpu in ALL if cpu not in (3, 11)]
    assert topology.cpus[10] == CpuInfo(2, 0, 0) and topology.cpus[12] == CpuInfo(4, 1, 1)


def test_missing_sysfs_names_the_verdict(tmp_path):
    root = cputree.build_cpu_node(str(tmp_path), CPUS, ALL, STATIC, cputree.cpu_checkpoint_v2("static", "0-1,3-9,11-15", POD))
    (tmp_path / "sys/devices/system/cpu/online").unlink()
    result = probe(HostFiles(root), kubelet_release="1.34.4")
    assert result.assessment.verdict == "cpu_manager_unknown" and not result.assessment.repairable
    assert "sys/devices/system/cpu/online: No such file or directory" in result.assessment.causes_for("cpu_manager_unknown")[0]


@pytest.mark.parametrize("online, default, entries, cls, verdict", [
    (ALL, "0-1,3-9,11-15", POD, "in_sync", None),
    (ALL, "0-1,3-5,8-9,11-13", POD, "cpus_unrecorded", "cpu_default_set_stale"),
    ([c for c in ALL if c not in (7, 15)], "0-1,3-9,11-15", POD, "shared_cpus_offline", "cpu_default_set_stale"),
    ([c for c in ALL if c not in (10, 11)], "0-1,3-9,11-15", POD, "assigned_cpu_offline", "cpu_manager_refuses"),
    (ALL, "0-1,4-9,12-15", {"pod-a": {"app": "2-3,10"}, "pod-b": {"app": "3,11"}}, "cpu_claimed_twice", "cpu_checkpoint_untrusted"),
])
def test_classes(tmp_path, online, default, entries, cls, verdict):
    root = cputree.build_cpu_node(str(tmp_path), CPUS, online, STATIC, cputree.cpu_checkpoint_v2("static", default, entries))
    result = probe(HostFiles(root), kubelet_release="1.35.4")
    assert (result.cpu.cls, result.cpu.verdict) == (cls, verdict), result.cpu.message
    # No memory_manager_state: the CPU manager's verdict is the node's, repairable only for a stale defaultCpuSet.
    assert result.assessment.repairable is (verdict == "cpu_default_set_stale")
    if verdict:
        assert result.assessment.verdict == verdict and result.assessment.plan is None
    if cls == "assigned_cpu_offline":  # CPU 11 (shared) is offline too: only the assigned one is named as assigned
        assert result.cpu.pods == ("pod-a",) and result.cpu.message.startswith("assigned CPUs 10 are offline or gone: pods pod-a"), result.cpu.message
    if cls == "cpus_unrecorded":
        assert format_cpuset(result.cpu.rederived_default) == "0-1,3-9,11-15"


@pytest.mark.parametrize("options, minor, gates, error", [
    ({"full-pcpus-only": "true"}, 34, {}, None),
    ({"strict-cpu-reservation": "true"}, 34, {"CPUManagerPolicyBetaOptions": False},
     'CPU Manager Policy Beta-level Options not enabled, but option "strict-cpu-reservation" provided'),
    ({"strict-cpu-reservation": "true"}, 35, {"CPUManagerPolicyBetaOptions": False}, None),  # stable from 1.35
    ({"prefer-align-cpus-by-uncorecache": "true"}, 35, {"CPUManagerPolicyBetaOptions": False},
     'CPU Manager Policy Beta-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided'),
    ({"prefer-align-cpus-by-uncorecache": "true"}, 36, {"CPUManagerPolicyBetaOptions": False}, None),  # stable from 1.36
    ({"align-by-socket": "true"}, 37, {}, 'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided'),
    ({"align-by-socket": "true"}, 37, {"CPUManagerPolicyAlphaOptions": True}, None),
    ({"pack-tightly": "true"}, 36, {}, 'unknown CPU Manager Policy option: "pack-tightly"'),
    ({"full-pcpus-only": "yes"}, 36, {}, 'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax'),
    ({"full-pcpus-only": "true", "distribute-cpus-across-cores": "1"}, 36, {"CPUManagerPolicyAlphaOptions": True},
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time"),
    ({"prefer-align-cpus-by-uncorecache": "T", "distribute-cpus-across-numa": "t"}, 37, {},
     "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa can not be used at the same time"),
    ({"full-pcpus-only": "false", "distribute-cpus-across-cores": "true"}, 36, {"CPUManagerPolicyAlphaOptions": True}, None),
])
def test_static_policy_options_as_each_release_takes_them(options, minor, gates, error):
    assert rules.static_policy_options(options, minor, gates)[1] == error


def test_align_by_socket_checks_the_topology_manager_and_the_machine():
    assert rules.static_policy_options_fit({"align-by-socket": True}, 2, 2, "none") is None
    assert rules.static_policy_options_fit({"align-by-socket": True}, 2, 2, "single-numa-node").startswith("Topolgy manager single-numa-node")
    assert rules.static_policy_options_fit({"align-by-socket": True}, 2, 1, "best-effort").startswith("Align by socket is not compatible")
    assert rules.static_policy_options_fit({"align-by-socket": False}, 2, 1, "single-numa-node") is None


def test_the_none_policy_takes_no_option():
    assert rules.none_policy_options({}) is None
    assert rules.none_policy_options({"full-pcpus-only": "true", "b": "x"}) == (
        "new none policy error: None policy: received unsupported options=map[b:x full-pcpus-only:true]")


# Kubelet's own checksums of one state (static, "7-9", two containers) under each type name its readers hash, from the
# kubelet judge's translation of state_checkpoint_test.go (tests/kubelet_judge/kubelet_cpu_tables.py).
ENTRIES = {"pod": {"container1": "4-6", "container2": "1-3"}}


@pytest.mark.parametrize("stored, minors", [
    (1942532442, (37,)),  # *state.CPUManagerCheckpointV3, empty PodEntries: v1.37's v3 reader
    (1844444301, (37,)),  # the same under the legacy name
    (1692845551, (36, 37)),  # *state.CPUManagerCheckpointV2: v1.36 and v1.37
])
def test_each_release_accepts_the_checksums_its_readers_verify(stored, minors):
    for minor in (34, 35, 36, 37):
        assert (stored in accepted_checksums("static", "7-9", ENTRIES, minor)) is (minor in minors), minor
    legacy = v2_checksum("static", "7-9", ENTRIES)
    assert all(legacy in accepted_checksums("static", "7-9", ENTRIES, minor) for minor in (34, 35, 36, 37))


def test_a_v1_file_without_entries_starts_up_to_1_36_and_not_on_1_37():
    raw = b'{"policyName":"none","defaultCPUSet":"1-3","checksum":1694838852}'  # kubelet's own v1 vector
    for minor in (34, 35, 36):
        state = restore(raw, "none", minor)
        assert isinstance(state, CpuState) and state.default == frozenset({1, 2, 3}), minor
    assert restore(raw, "none", 37) == RestoreError(CORRUPTED)


@pytest.mark.parametrize("config_policy, flags, refused", [
    (None, [], False),
    ("single-numa-node", [], True),
    ("single-numa-node", ["--topology-manager-policy=best-effort"], False),  # the flag over the configuration
    ("none", ["--topology-manager-policy", "single-numa-node"], True),
])
def test_align_by_socket_meets_the_topology_manager_policy_where_kubelet_takes_it(tmp_path, config_policy, flags, refused):
    config = dict(STATIC, cpuManagerPolicyOptions={"align-by-socket": "true"}, featureGates={"CPUManagerPolicyAlphaOptions": True})
    if config_policy:
        config["topologyManagerPolicy"] = config_policy
    root = cputree.build_cpu_node(str(tmp_path), CPUS, ALL, config, cputree.cpu_checkpoint_v2("static", "0-1,3-9,11-15", POD))
    result = probe(HostFiles(root), kubelet_release="1.37.2", kubelet_flags=flags)
    assert result.cpu.start.stage == ("construct" if refused else "started"), result.cpu.message
    if refused:
        assert result.cpu.start.error == ("new static policy error: Topolgy manager single-numa-node policy is incompatible with CPUManager "
                                          "align-by-socket policy option")
        assert result.assessment.verdict == "cpu_manager_refuses"


@pytest.mark.parametrize("field, value", [("entries", {"pod-a": {"app": 5}}), ("policyName", 7), ("checksum", "x")])
def test_a_v4_file_whose_v2_part_has_the_wrong_types_is_refused_at_1_37(field, value):
    """v1.37's UnmarshalCheckpoint decodes the whole file before it reads data: a v2 part of the wrong JSON types fails it
    (kubelet: "failed to deserialize cpu manager checkpoint: json: cannot unmarshal ..."), and data is set: no fallback."""
    document = json.loads(cputree.cpu_checkpoint_v4("static", "0-1,3-9,11-15", POD))
    document[field] = value
    restored = restore(json.dumps(document).encode(), "static", 37)
    assert isinstance(restored, RestoreError) and restored.text.startswith(
        "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint: json: cannot unmarshal"), restored


@pytest.mark.parametrize("gates, name, minor, on", [
    ({}, "CPUManagerPolicyBetaOptions", 37, True),
    ({"AllBeta": False}, "CPUManagerPolicyBetaOptions", 37, False),
    ({"AllBeta": False, "CPUManagerPolicyBetaOptions": True}, "CPUManagerPolicyBetaOptions", 37, True),  # named wins
    ({"AllAlpha": True}, "CPUManagerPolicyAlphaOptions", 34, True),
    ({"AllAlpha": True}, "InPlacePodVerticalScalingExclusiveCPUs", 37, True),
    ({"AllAlpha": True}, "PodLevelResourceManagers", 36, True),
    ({"AllAlpha": True}, "PodLevelResourceManagers", 37, False),  # beta at v1.37
    ({"AllBeta": True}, "PodLevelResourceManagers", 37, True),
])
def test_gates_as_component_base_sets_them(gates, name, minor, on):
    assert rules.gate_on(gates, name, minor) is on


def test_all_beta_off_refuses_a_beta_option_as_kubelet_does():
    assert rules.static_policy_options({"distribute-cpus-across-numa": "true"}, 37, {"AllBeta": False})[1] == (
        'CPU Manager Policy Beta-level Options not enabled, but option "distribute-cpus-across-numa" provided')


# --------------------------------------------------------------------------- the topology manager, before the CPU manager


def test_validation_refuses_an_unknown_topology_manager_policy_and_scope_in_kubelets_words():
    assert rules.topology_manager_config("none", "container") == []
    assert rules.topology_manager_config("numa-aware", "node") == [
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "numa-aware" must be one of: '
        '["none" "best-effort" "restricted" "single-numa-node"]',
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be one of: "container", or "pod"',
    ]


@pytest.mark.parametrize("policy, options, nodes, minor, gates, error", [
    ("none", {"pack-numa": "true"}, 16, 37, {}, None),  # policy none: NewManager takes nothing
    ("best-effort", {}, 8, 37, {}, None),
    ("best-effort", {}, 9, 37, {}, "unsupported on machines with more than 8 NUMA Nodes"),
    ("restricted", {"max-allowable-numa-nodes": "9"}, 9, 37, {}, None),
    ("restricted", {"max-allowable-numa-nodes": "9"}, 10, 35, {}, "unsupported on machines with more than 9 NUMA Nodes"),
    ("restricted", {"max-allowable-numa-nodes": "4"}, 2, 37, {}, 'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("restricted", {"max-allowable-numa-nodes": "eight"}, 2, 36, {},
     'unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing "eight": invalid syntax'),
    ("restricted", {"max-allowable-numa-nodes": "9"}, 2, 34, {"TopologyManagerPolicyBetaOptions": False},
     'topology manager policy beta-level options not enabled, but option "max-allowable-numa-nodes" provided'),
    ("restricted", {"max-allowable-numa-nodes": "9"}, 2, 34, {"AllBeta": False},
     'topology manager policy beta-level options not enabled, but option "max-allowable-numa-nodes" provided'),
    ("restricted", {"max-allowable-numa-nodes": "9"}, 2, 35, {"TopologyManagerPolicyBetaOptions": False}, None),  # stable from v1.35
    ("single-numa-node", {"pack-numa": "true"}, 2, 37, {}, 'unknown Topology Manager Policy option: "pack-numa"'),
    ("best-effort", {"prefer-closest-numa-nodes": "yes"}, 2, 37, {},
     'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": invalid syntax'),
])
def test_the_topology_managers_new_manager(policy, options, nodes, minor, gates, error):
    assert rules.topology_manager(policy, options, nodes, minor, gates) == error


def test_prefer_closest_numa_nodes_needs_every_nodes_distances():
    options = {"prefer-closest-numa-nodes": "true"}
    assert rules.topology_manager("best-effort", options, 2, 37, {}, distances_missing=True) == (
        "cannot discover NUMA topology: error getting NUMA distances from cadvisor")
    assert rules.topology_manager("best-effort", options, 2, 37, {}, distances_missing=False) is None
    assert rules.topology_manager("best-effort", {"prefer-closest-numa-nodes": "false"}, 2, 37, {}, distances_missing=True) is None


@pytest.mark.parametrize("config, flags, stage, error", [
    (dict(STATIC, topologyManagerPolicy="best-effort", topologyManagerScope="node"), [], "config",
     'failed to validate kubelet configuration, error: invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
     'one of: "container", or "pod"'),
    (dict(STATIC, topologyManagerPolicy="best-effort"), ["--topology-manager-scope=node"], "config",
     'failed to validate kubelet configuration, error: invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
     'one of: "container", or "pod"'),
    (dict(STATIC, topologyManagerPolicy="restricted"), ["--topology-manager-policy-options=max-allowable-numa-nodes=4"], "construct",
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    (dict(STATIC, cpuManagerPolicyOptions={"full-pcpus-only": True}), [], "config",
     "failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: failed to load Kubelet config file "
     "/var/lib/kubelet/config.yaml, error failed to decode: json: cannot unmarshal bool into Go struct field "
     "KubeletConfiguration.cpuManagerPolicyOptions of type string"),
    (dict(STATIC, featureGates={"PodLevelResourceManagers": True, "PodLevelResources": False}), [], "config",
     "kubelet panics: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
     "[InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: [PodLevelResources], "
     "PodLevelResourceManagers is enabled, but depends on features that are disabled: [PodLevelResources]]"),
    (dict(STATIC, topologyManagerPolicy="best-effort", topologyManagerPolicyOptions={"prefer-closest-numa-nodes": "true"}), [], "construct",
     "cannot discover NUMA topology: error getting NUMA distances from cadvisor"),  # the fake tree has no distance files
])
def test_kubelet_refuses_its_configuration_or_topology_manager_before_the_cpu_manager(tmp_path, config, flags, stage, error):
    """The CPU manager's start is refused at ``config`` (decoding, gates, validation) or ``construct`` (the topology
    manager's NewManager), whatever the checkpoint holds: never repairable."""
    root = cputree.build_cpu_node(str(tmp_path), CPUS, ALL, config, cputree.cpu_checkpoint_v2("static", "0-1,3-9,11-15", POD))
    result = probe(HostFiles(root), kubelet_release="1.36.3", kubelet_flags=flags or None)
    assert (result.cpu.start.stage, result.cpu.start.error) == (stage, error), result.cpu.message
    assert (result.cpu.cls, result.assessment.verdict, result.assessment.repairable) == ("kubelet_config_refused", "cpu_manager_refuses", False)


def test_policy_none_is_judged_where_kubelet_refuses_its_configuration(tmp_path):
    root = cputree.build_cpu_node(str(tmp_path), CPUS, ALL, {"cpuManagerPolicy": "none", "topologyManagerPolicy": "numa-aware"})
    result = probe(HostFiles(root), kubelet_release="1.37.2")
    assert (result.cpu.start.stage, result.cpu.cls) == ("config", "kubelet_config_refused"), result.cpu.message
    root = cputree.build_cpu_node(str(tmp_path / "fine"), CPUS, ALL, {"cpuManagerPolicy": "none", "topologyManagerPolicy": "restricted"})
    assert probe(HostFiles(root), kubelet_release="1.37.2").cpu.cls == "not_static"
