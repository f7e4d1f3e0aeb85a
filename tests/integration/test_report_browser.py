# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report as a person sees it: real playbook runs on the sandbox fleet, opened in real headless Chromium.

The probe, a remediate dry run and a remediate run write report.html on the mixed sandbox fleet
(tests/sandbox/fleet.py: fake node trees, kubelet and API stand-ins on 127.0.0.1; one node with the
boot guard installed by the guard playbook and run once). Each page is loaded in Chromium over the
DevTools pipe (tests/integration/browser.py) and checked as rendered: no console errors, the
tables there, every drift bar on its side of the zero axis (from the computed layout), + and -
in different colours, the bound lines symmetric, one short line per node with its details closed,
the advice once, the pinned pods named from the API (or by UID when the API is not reachable).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any, Dict, Iterator, List

import pytest

from ansible_collections.nodeops.numa_drift.tests.sandbox import kubelet_standin
from ansible_collections.nodeops.numa_drift.tests.integration import browser
from ansible_collections.nodeops.numa_drift.tests.integration.test_fleet_sandbox import (  # noqa: F401  # pylint: disable=unused-import
    ANSIBLE_PLAYBOOK,
    FLEET,
    Fleet,
    Run,
    collections_path,
    make_real_fleet,
)

CHROMIUM = browser.find_chromium()
GUARDED = "sbx-node-06"  # drift_exceeds_bound: the guard touches nothing and records "refused"
CORDONED_BEFORE = "sbx-node-08"  # drift_within_bound, cordoned by someone else before any run
GUARD_PROGRAM = "usr/local/libexec/nodeops-numa-drift/numa-drift-guard"

pytestmark = [
    pytest.mark.skipif(not (os.path.exists(FLEET) and os.path.exists(ANSIBLE_PLAYBOOK)), reason="needs the sandbox and the checkout's .venv"),
    # On CI the browser is installed by tests/integration/requirements.sh: missing there is a failure, not a skip.
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="SKIPPED: no chromium (apt-get install chromium)"),
]


# --------------------------------------------------------------------------- what the page must look like


def layout_problems(layout: Dict[str, Any]) -> List[str]:
    """Everything wrong with the rendered bars: side of the zero axis, colours, bound lines, value text."""
    problems = []
    colours: Dict[str, set] = {"left": set(), "right": set()}
    for drawn in layout["bars"]:
        where = "%s node%s %s (%s)" % (drawn["node"], drawn["numa"], drawn["resource"], drawn["value"])
        track, axis, fill = drawn["track"], drawn["axis"], drawn["fill"]
        if not drawn["visible"] or track["width"] < 50:
            problems.append("%s: track not rendered (%s)" % (where, track))
            continue
        zero = track["left"] + track["width"] / 2
        if abs(axis["left"] - zero) > 1.5:
            problems.append("%s: zero axis at %.1f, not the track's middle %.1f" % (where, axis["left"], zero))
        if drawn["side"] in ("left", "right"):
            if fill is None or fill["width"] <= 0:
                problems.append("%s: no bar for a non-zero drift" % where)
                continue
            colours[drawn["side"]].add(drawn["fill_color"])
            if drawn["side"] == "left" and not (fill["right"] <= zero + 1 and fill["left"] < zero - 0.5):
                problems.append("%s: negative drift not drawn left of zero (fill %.1f..%.1f, zero %.1f)" % (where, fill["left"], fill["right"], zero))
            if drawn["side"] == "right" and not (fill["left"] >= zero - 1 and fill["right"] > zero + 0.5):
                problems.append("%s: positive drift not drawn right of zero (fill %.1f..%.1f, zero %.1f)" % (where, fill["left"], fill["right"], zero))
            if (drawn["delta"] < 0) != (drawn["side"] == "left") or not drawn["value"].startswith("-" if drawn["delta"] < 0 else "+"):
                problems.append("%s: sign of %s does not match side %s / text" % (where, drawn["delta"], drawn["side"]))
            if drawn["over"] and drawn["resource"] == "memory" and drawn["bounds"]:
                outer = drawn["bounds"][0]["left"] if drawn["side"] == "left" else drawn["bounds"][1]["left"]
                if (drawn["side"] == "left" and fill["left"] >= outer) or (drawn["side"] == "right" and fill["right"] <= outer):
                    problems.append("%s: beyond the bound but the bar stops inside the bound line" % where)
        elif drawn["side"] == "zero" and (fill is not None or drawn["value"] != "0" and not drawn["value"].startswith("0 ")):
            problems.append("%s: zero drift drawn as a bar or with a sign" % where)
        if drawn["resource"] == "memory" and drawn["bounds"]:
            if len(drawn["bounds"]) != 2:
                problems.append("%s: %d bound lines, want 2" % (where, len(drawn["bounds"])))
            elif abs((zero - drawn["bounds"][0]["left"]) - (drawn["bounds"][1]["left"] - zero)) > 2:
                problems.append("%s: bound lines not symmetric around zero" % where)
    if colours["left"] & colours["right"]:
        problems.append("the same colour for + and -: %s" % (colours["left"] & colours["right"]))
    return problems


def look(path: str) -> Dict[str, Any]:
    """The page in Chromium: layout, console problems, and the details once opened."""
    assert CHROMIUM, "chromium is not installed (tests/integration/requirements.sh installs it)"
    with browser.opened(CHROMIUM, path) as page:
        layout = page.evaluate(browser.REPORT_LAYOUT)
        layout["details"] = browser.open_details(page)
        layout["console"] = page.console_problems()
    return layout


def assert_renders(run: Run, nodes: List[str]) -> Dict[str, Any]:
    page = look(os.path.join(run.report_dir, "report.html"))
    assert page["console"] == [], page["console"]
    assert {"nodes", "pods", "verdicts", "next-steps"} <= set(page["tables"]), page["tables"]
    assert sorted(row["node"] for row in page["rows"]) == sorted(nodes)
    assert page["bars"], "no drift bars"
    assert layout_problems(page) == []
    assert {drawn["side"] for drawn in page["bars"]} >= {"left", "right", "zero"}
    for row in page["rows"]:
        assert row["open"] is False, "%s: details open by default" % row["node"]
        assert row["summary"] and len(row["summary"]) < 160, row
        assert len(row["todo"]) <= 1, row
    opened = {entry["node"]: entry for entry in page["details"]}
    assert all(entry["after"] > entry["before"] for entry in opened.values()), opened
    return page


def rows_by_node(page: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {row["node"]: row for row in page["rows"]}


# --------------------------------------------------------------------------- the fleet


@pytest.fixture(scope="module")
def fleet(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          collections_path: str) -> Iterator[Fleet]:  # noqa: F811  # pylint: disable=redefined-outer-name
    """The mixed fleet on the session's real kube-apiserver, named sbx-node-NN as on the stand-in (no other module uses that
    prefix there); the playbooks under the shipped ServiceAccount."""
    yield from make_real_fleet(request, tmp_path_factory, collections_path, "mixed", prefix="sbx")


@pytest.fixture(scope="module")
def guarded(fleet: Fleet) -> str:  # pylint: disable=redefined-outer-name
    """The boot guard installed on one node by the guard playbook (into its tree), then run as systemd would."""
    root = fleet.root(GUARDED)
    before = fleet.checkpoint_bytes(GUARDED)
    run = fleet.playbook("guard", "-l", GUARDED, "-e", json.dumps({"guard_root": root, "guard_kubelet_service": "kubelet"}))
    assert run.rc == 0, run.tail()
    done = subprocess.run(["/usr/bin/python3", "-I", os.path.join(root, GUARD_PROGRAM), "--root", root], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and "action refused" in done.stderr, done.stderr
    assert fleet.checkpoint_bytes(GUARDED) == before
    return GUARDED


# --------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def probed(fleet: Fleet, guarded: str) -> Run:  # pylint: disable=redefined-outer-name
    """The probe over the whole fleet, before anything was repaired."""
    run = fleet.playbook("probe")
    assert run.rc == 0, run.tail()
    return run


def test_probe_report_renders_signed_bars_pods_guard_and_distribution(fleet: Fleet, guarded: str, probed: Run) -> None:  # pylint: disable=redefined-outer-name
    run = probed
    report = run.report()
    rows = run.rows()
    page = assert_renders(run, list(fleet.nodes))
    shown = rows_by_node(page)

    # Direction: the KASLR node lost 45260 kB on node0 and gained it on node1 -> left and right, with sign and unit.
    bars = {(b["node"], b["numa"], b["resource"]): b for b in page["bars"]}
    assert bars[("sbx-node-01", 0, "memory")]["side"] == "left" and bars[("sbx-node-01", 0, "memory")]["value"] == "-44.2 MiB"
    assert bars[("sbx-node-01", 1, "memory")]["side"] == "right" and bars[("sbx-node-01", 1, "memory")]["value"] == "+44.2 MiB"
    lost = bars[("sbx-node-06", 1, "memory")]
    assert lost["side"] == "left" and lost["over"] and lost["value"] == "-1.0 GiB"
    assert bars[("sbx-node-07", 1, "hugepages-1Gi")]["side"] == "left" and bars[("sbx-node-07", 1, "hugepages-1Gi")]["over"]
    assert "within bound 96.0 MiB" in shown["sbx-node-01"]["summary"]
    assert shown["sbx-node-06"]["summary"].startswith("needs a human (drift_exceeds_bound); node1 memory -1.0 GiB > bound")

    # What now, first: the nodes that need a human, each with why and the next step (the advice, once per page:
    # it used to be in the message, the advice line and the next step); their rows point up to it.
    now = page["now"]
    assert now["first"] and not now["none"], now
    needs = {entry["node"]: entry for entry in now["needs_human"]}
    assert sorted(needs) == ["sbx-node-06", "sbx-node-07"], needs
    for name in ("sbx-node-06", "sbx-node-07"):
        advice = rows[name]["advice"]
        assert advice and page["body"].count(advice) == 1
        assert needs[name]["next_step"] == advice and rows[name]["verdict_before"] in needs[name]["text"]
        assert shown[name]["text"].count(advice) == 0 and shown[name]["todo"] == [], shown[name]
        assert shown[name]["todo_above"] == ["see What now, at the top"]
    assert shown["sbx-node-04"]["todo"] == [] and shown["sbx-node-04"]["todo_above"] == []  # in_sync: nothing said
    # A repairable node's advice leads to the safe path: the remediate playbook limited to it.
    repairable = sorted(n for n, node in fleet.nodes.items() if node["expected_verdict"] == "drift_within_bound")
    # The advice is said once per page (the per-verdict table), with the run's inventory; each row points up to the
    # command in What now. report.json keeps each row's own what_to_do.
    for name in repairable:
        assert shown[name]["todo"] == [] and shown[name]["todo_above"] == [
            "repair it with the remediate playbook: the command is in What now, at the top"], shown[name]
        assert rows[name]["what_to_do"] == rows[name]["advice"][:1].upper() + rows[name]["advice"][1:] + "."
        assert "ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s " % (fleet.inventory, name) in rows[name]["what_to_do"]
    assert "ansible-playbook -i %s nodeops.numa_drift.remediate --limit %s" % (fleet.inventory, ",".join(repairable)) in now["repairable"]
    assert page["body"].count("which cordons the Node, stops kubelet") == 1, page["body"]
    # Each row shows its Node as one Node list had it: its Ready condition, and its cordon as the API has it.
    assert report["node_states_source"] == "api"
    for name in fleet.nodes:
        state = rows[name]["node_state"]
        cordoned = fleet.unschedulable(name)
        ours = fleet.annotations(name).get("numa-drift.nodeops.io/cordoned-by") == "nodeops.numa_drift"
        assert state["found"] is True and state["ready"] in ("True", "False", "Unknown"), state
        assert (state["cordoned"], state["cordoned_by"]) == (cordoned, ("us" if ours else "someone else") if cordoned else None), state
        assert rows[name]["node_state_text"].startswith({"True": "Ready, ", "False": "NotReady, "}.get(state["ready"], "Ready unknown, "))

    # Pinned pods: the checkpoint's UIDs, named from the API (the sandbox registers them as workloads/numa-app-*).
    assert report["pods_source"] == "api"
    for name, node in fleet.nodes.items():
        uids = sorted(pod["uid"] for pod in rows[name]["pinned_pods"])
        assert uids == sorted(node["pods"]), name
        listed = [pod for pod in page["pods"] if pod["node"] == name]
        assert sorted(pod["uid"] for pod in listed) == uids
        for pod, entry in zip(sorted(listed, key=lambda p: p["uid"]), sorted(rows[name]["pinned_pods"], key=lambda p: p["uid"])):
            assert entry["namespace"] == "workloads" and entry["name"].startswith("numa-app-"), entry
            assert "workloads/" + entry["name"] in pod["text"] and "app" in pod["text"]
    cross = [pod for pod in rows["sbx-node-03"]["pinned_pods"] if pod["numa_nodes"] == [2, 3]]
    assert len(cross) == 1 and cross[0]["sizes"] == {"memory": 20 << 30, "hugepages-1Gi": 2 << 30}, rows["sbx-node-03"]["pinned_pods"]

    # The boot guard (issue 11 item 8) and where kubelet runs.
    assert re.search(r"boot guard: installed; last boot \S+Z: drift_exceeds_bound \u2192 refused", shown[guarded]["guard"]), shown[guarded]["guard"]
    assert rows[guarded]["guard"]["installed"] is True and rows[guarded]["guard"]["action"] == "refused"
    assert all("not installed" in row["guard"] for name, row in shown.items() if name != guarded)
    assert all(row["distribution"].split() == ["kubeadm", "\u00b7", "kubelet"] for row in shown.values()), [r["distribution"] for r in shown.values()]
    assert rows["sbx-node-01"]["kubelet"]["distribution"] == "kubeadm" and rows["sbx-node-01"]["service"] == "kubelet"
    # Which kubelet each node runs: what its program says (the column, its source on hover) and the JSON row.
    for name, node in fleet.nodes.items():
        version = kubelet_standin.KUBELET_VERSIONS[node["era"]]
        assert rows[name]["kubelet"]["version"] == version and rows[name]["kubelet"]["release"] == version[1:5], rows[name]["kubelet"]
        assert shown[name]["kubelet"].strip() == version, shown[name]["kubelet"]
        assert shown[name]["kubelet_title"] == "/usr/bin/kubelet --version: Kubernetes %s" % version, shown[name]["kubelet_title"]


def test_dry_run_report_lists_the_pods_at_stake(fleet: Fleet) -> None:  # pylint: disable=redefined-outer-name
    before = {name: fleet.checkpoint_bytes(name) for name in fleet.nodes}
    run = fleet.playbook("remediate", "-e", "numa_drift_batch=100%", "-e", "remediate_dry_run=true")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    page = assert_renders(run, list(fleet.nodes))
    shown = rows_by_node(page)
    dry = [name for name, row in rows.items() if row["action"] == "dry_run"]
    assert sorted(dry) == sorted(n for n, node in fleet.nodes.items() if node["expected_verdict"] == "drift_within_bound")
    for name in dry:
        assert shown[name]["summary"].startswith("dry run, would repair (drift_within_bound)"), shown[name]["summary"]
        assert shown[name]["todo"] == ["Run again without remediate_dry_run (and without --check) to repair."]
        assert rows[name]["pinned_pods"] and all(pod["name"] for pod in rows[name]["pinned_pods"])
        assert len([pod for pod in page["pods"] if pod["node"] == name]) == len(fleet.nodes[name]["pods"])
    assert {name: fleet.checkpoint_bytes(name) for name in fleet.nodes} == before


def test_remediate_report_shows_what_happened_once_per_node(fleet: Fleet) -> None:  # pylint: disable=redefined-outer-name
    run = fleet.playbook("remediate", "-l", "sbx-node-01,sbx-node-06,%s" % CORDONED_BEFORE, "-e", "numa_drift_batch=100%")
    assert run.rc == 0, run.tail()
    rows = run.rows()
    page = assert_renders(run, ["sbx-node-01", "sbx-node-06", CORDONED_BEFORE])
    shown = rows_by_node(page)
    assert rows["sbx-node-01"]["action"] == "repaired"
    assert shown["sbx-node-01"]["summary"].startswith("repaired: drift_within_bound -> in_sync; node0 memory -44.2 MiB"), shown["sbx-node-01"]
    assert shown["sbx-node-01"]["todo"] == []
    assert shown["sbx-node-01"]["action_note"] == "cordoned, then uncordoned"
    # A Node someone else cordoned is repaired and left cordoned: the action cell says so.
    assert rows[CORDONED_BEFORE]["action"] == "repaired" and rows[CORDONED_BEFORE]["cordoned_by_us"] is False
    assert shown[CORDONED_BEFORE]["action_note"] == "stays cordoned (cordoned before by someone else)"
    assert rows["sbx-node-06"]["action"] == "refused"
    assert shown["sbx-node-06"]["summary"].startswith("left as it is: drift_exceeds_bound; node1 memory -1.0 GiB > bound")
    advice = rows["sbx-node-06"]["advice"]
    assert [entry["node"] for entry in page["now"]["needs_human"]] == ["sbx-node-06"] and page["now"]["first"]
    assert page["now"]["needs_human"][0]["next_step"] == advice and page["body"].count(advice) == 1
    # The details have the causes and the run's own words for the repaired node (its backup).
    opened = {entry["node"]: entry["text"] for entry in page["details"]}
    assert rows["sbx-node-01"]["backup_file"] and rows["sbx-node-01"]["backup_file"] in opened["sbx-node-01"]
    assert "more than the bound" in opened["sbx-node-06"] and advice not in opened["sbx-node-06"]


def test_pods_are_listed_by_uid_when_the_api_is_not_reachable(fleet: Fleet, tmp_path: Any) -> None:  # pylint: disable=redefined-outer-name
    kubeconfig = tmp_path / "kubeconfig"
    with open(os.path.join(fleet.dir, "kubeconfig"), encoding="utf-8") as handle:
        # A port nothing listens on (port 1 on 127.0.0.1: connection refused at once).
        kubeconfig.write_text(re.sub(r"https?://127\.0\.0\.1:\d+", "http://127.0.0.1:1", handle.read()))
    run = fleet.playbook("probe", "-e", "remediate_kubeconfig=%s" % kubeconfig)
    assert run.rc == 0, run.tail()
    report = run.report()
    assert report["pods_source"].startswith("API not reachable"), report["pods_source"]
    page = assert_renders(run, list(fleet.nodes))
    assert "API not reachable" in page["body"]
    rows = run.rows()
    for name, node in fleet.nodes.items():
        assert sorted(pod["uid"] for pod in rows[name]["pinned_pods"]) == sorted(node["pods"])
        assert all(pod["name"] is None for pod in rows[name]["pinned_pods"])
    assert {pod["uid"] for pod in page["pods"]} == {uid for node in fleet.nodes.values() for uid in node["pods"]}
    assert "workloads/numa-app" not in page["body"]


def test_the_browser_check_catches_console_errors_and_misdrawn_bars(probed: Run, tmp_path: Any) -> None:  # pylint: disable=redefined-outer-name
    """The checks above can fail: the probe's report with a script error and one negative bar drawn right is caught."""
    with open(os.path.join(probed.report_dir, "report.html"), encoding="utf-8") as handle:
        html = handle.read()
    broken = html.replace('class="fill neg" style="right: 50%', 'class="fill neg" style="left: 50%', 1)
    broken = broken.replace("</body>", "<script>console.error('drawn wrong'); notAFunction();</script></body>")
    assert broken.count("notAFunction") == 1 and 'class="fill neg" style="left: 50%' in broken
    path = tmp_path / "broken.html"
    path.write_text(broken, encoding="utf-8")
    bad = look(str(path))
    assert any("drawn wrong" in problem for problem in bad["console"]) and any("notAFunction" in p for p in bad["console"]), bad["console"]
    problems = layout_problems(bad)
    assert len(problems) == 1 and "negative drift not drawn left of zero" in problems[0], problems
