#!/usr/bin/env bash
# The main job (README's first command): boot the built-in sandbox fleet (eleven fake nodes just after
# a reboot, each with a kubelet stand-in under a systemd stand-in, and a Kubernetes API stand-in on
# 127.0.0.1; three of them shaped like k0s, k3s and MicroK8s nodes, whose kubelet runs under
# k0sworker, k3s-agent and snap.microk8s.daemon-kubelite), run the playbook nodeops.numa_drift.probe,
# then nodeops.numa_drift.remediate on it, show the fleet as the API and the services see it
# afterwards, what the probe finds on each node now, and print where the reports are.
#
#   bash scripts/demo.sh                              # under ./numa-drift-demo/
#   NUMA_DRIFT_DEMO_DIR=/tmp/x bash scripts/demo.sh
#   NUMA_DRIFT_DEMO_KEEP=1 bash scripts/demo.sh       # leave the fleet running afterwards
#
# Exits non-zero when a playbook failed; the fleet is taken down on every exit unless kept.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
VENV="$ROOT/.venv"
PYTHON="$VENV/bin/python"
DEMO_DIR=$(mkdir -p "${NUMA_DRIFT_DEMO_DIR:-$PWD/numa-drift-demo}" && cd "${NUMA_DRIFT_DEMO_DIR:-$PWD/numa-drift-demo}" && pwd)
FLEET_DIR="$DEMO_DIR/fleet"
FLEET=("$PYTHON" "$ROOT/tests/sandbox/fleet.py")

section() { printf '\n==== %s\n' "$*"; }

# shellcheck disable=SC2329  # invoked by the EXIT trap
take_down() {
  if [ "${NUMA_DRIFT_DEMO_KEEP:-0}" = 1 ]; then
    echo "The fleet keeps running (at most 2 h): ${FLEET[*]} down --dir $FLEET_DIR"
  else
    "${FLEET[@]}" down --dir "$FLEET_DIR" >/dev/null || true
  fi
}

section "Sandbox fleet in $FLEET_DIR"
"${FLEET[@]}" up --dir "$FLEET_DIR" --scenario mixed-distros --replace
trap take_down EXIT
"${FLEET[@]}" status --dir "$FLEET_DIR"

# fleet.py links the checkout as the collection nodeops.numa_drift under $FLEET_DIR/collections.
export ANSIBLE_COLLECTIONS_PATH="$FLEET_DIR/collections"
export ANSIBLE_RETRY_FILES_ENABLED=false ANSIBLE_DISPLAY_SKIPPED_HOSTS=false ANSIBLE_FORKS=8
playbook() {
  "$VENV/bin/ansible-playbook" -i "$FLEET_DIR/inventory.yml" "nodeops.numa_drift.$1" \
    -e numa_drift_report_dir="$DEMO_DIR/report-$1"
}

section "Probe every node (read-only): nodeops.numa_drift.probe"
playbook probe

section "Remediate: nodeops.numa_drift.remediate (a canary node, then batches)"
rc=0
playbook remediate || rc=$?

section "The fleet afterwards (API and kubelet services)"
"${FLEET[@]}" status --dir "$FLEET_DIR"

section "What the probe finds on each node now (numa_drift_facts, no option but root)"
ANSIBLE_STDOUT_CALLBACK=json ANSIBLE_LOAD_CALLBACK_PLUGINS=1 "$VENV/bin/ansible" -i "$FLEET_DIR/inventory.yml" sandbox \
  -m nodeops.numa_drift.numa_drift_facts -a 'root={{ remediate_root }}' >"$DEMO_DIR/probe-after.json" || true
"$PYTHON" - "$DEMO_DIR/probe-after.json" "$FLEET_DIR/fleet.json" <<'PY'
import json, os, sys
hosts = {}
for play in json.load(open(sys.argv[1]))["plays"]:
    for task in play["tasks"]:
        hosts.update(task["hosts"])
print("  %-12s %-10s %-14s %-30s %-42s %-20s %s" % ("NODE", "DIST", "KUBELET", "SERVICE", "CHECKPOINT (under the node root)", "VERDICT",
                                                    "ROLE'S SYSTEMCTL CALLS"))
for node in json.load(open(sys.argv[2]))["nodes"]:
    facts = hosts.get(node["name"], {}).get("numa_drift") or {}
    kubelet = facts.get("kubelet") or {}
    path = (facts.get("checkpoint") or {}).get("path") or "-"
    log = os.path.join(node["node_dir"], "systemctl.log")
    calls = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    changed = ", ".join("%s %s" % (c["verb"], " ".join(c["units"])) for c in calls if c["verb"] in ("stop", "start"))
    print("  %-12s %-10s %-14s %-30s %-42s %-20s %s" % (
        node["name"], kubelet.get("distribution") or "-", kubelet.get("version") or "unknown", kubelet.get("service") or "-",
        path[len(node["root"]):] if path.startswith(node["root"]) else path,
        facts.get("verdict") or hosts.get(node["name"], {}).get("msg", "?"), changed or ("(command mode)" if node["service_mode"] == "command" else "-")))
PY

section "Reports"
"$PYTHON" - "$DEMO_DIR/report-remediate/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print(report["headline"])
print("  %-12s %-14s %-20s    %-12s %-20s %s" % ("NODE", "KUBELET", "VERDICT BEFORE", "ACTION", "VERDICT AFTER", "MESSAGE"))
for row in report["nodes"]:
    print("  %-12s %-14s %-20s -> %-12s %-20s %s" % (
        row["node"], row["kubelet"].get("version") or "unknown", row["verdict_before"] or "-", row["action"], row["verdict_after"] or "-",
        row["message"]))
PY
echo "  probe:     $DEMO_DIR/report-probe/report.html (and report.json)"
echo "  remediate: $DEMO_DIR/report-remediate/report.html (and report.json)"
echo "  backups of the repaired checkpoints: $FLEET_DIR/nodes/<node>/root/var/lib/nodeops-numa-drift/backups/"
exit "$rc"
