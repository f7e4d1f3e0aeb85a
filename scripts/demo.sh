#!/usr/bin/env bash
# The main job (README's first command): build an example fleet of fake kubelet nodes just after a
# reboot (KASLR moves, a boot-memory loss, a lost DIMM, lost hugepages, one node in sync), probe them
# with nodeops.numa_drift.numa_drift_facts, repair the benign ones with kubelet_mm_checkpoint, probe
# again, and write a JSON report.
#
#   bash scripts/demo.sh                            # under ./numa-drift-demo/
#   NUMA_DRIFT_DEMO_DIR=/tmp/x bash scripts/demo.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
VENV="$ROOT/.venv"
DEMO_DIR=$(mkdir -p "${NUMA_DRIFT_DEMO_DIR:-$PWD/numa-drift-demo}" && cd "${NUMA_DRIFT_DEMO_DIR:-$PWD/numa-drift-demo}" && pwd)

echo "==== Example fleet in $DEMO_DIR/nodes"
"$VENV/bin/python" "$ROOT/scripts/demo/build_nodes.py" "$DEMO_DIR"

# The checkout as the collection nodeops.numa_drift, through a link outside the tree.
mkdir -p "$DEMO_DIR/collections/ansible_collections/nodeops"
ln -sfn "$ROOT" "$DEMO_DIR/collections/ansible_collections/nodeops/numa_drift"
export ANSIBLE_COLLECTIONS_PATH="$DEMO_DIR/collections"
export ANSIBLE_RETRY_FILES_ENABLED=false ANSIBLE_DISPLAY_SKIPPED_HOSTS=false ANSIBLE_FORKS=6

echo
echo "==== Probe, repair, probe again"
"$VENV/bin/ansible-playbook" -i "$DEMO_DIR/inventory.yml" "$ROOT/scripts/demo/demo.yml" -e demo_report="$DEMO_DIR/report.json"

echo
echo "==== Report (machine-readable, the probe before repair): $DEMO_DIR/report.json"
"$VENV/bin/python" - "$DEMO_DIR/report.json" <<'PY'
import json, sys
for host, facts in sorted(json.load(open(sys.argv[1])).items()):
    print("  %-10s %-20s %s" % (host, facts["verdict"], "repairable" if facts["repairable"] else facts["advice"]))
PY
