#!/usr/bin/env bash
# Install the real components the unit and integration tests start (Debian packages), when missing:
#   strace                    fault injection (kill -9 at each fsync and rename, tests/integration/test_faults.py)
#   prometheus, promtool      the rollout health gate reads a real Prometheus' firing alerts; the guard's
#                             alerting rules are checked with promtool check/test rules
#   prometheus-node-exporter  the guard's textfile metrics are read back through a real node exporter
#   chromium                  the fleet report is rendered in a headless browser
#   podman, runc, debootstrap the AWX execution environment image is built (ansible-builder with podman, on a
#                             debootstrap'd base image) and the probe job runs inside it
#                             (execution-environment/build_local.py, tests/integration/test_execution_environment.py)
# Idempotent.
#
#   bash tests/integration/requirements.sh          install what is missing (root, apt-get)
#   bash tests/integration/requirements.sh --check  only report; exit 1 when something is missing
set -euo pipefail

declare -A PROVIDER=(
  [strace]=strace
  [prometheus]=prometheus
  [promtool]=prometheus
  [prometheus-node-exporter]=prometheus-node-exporter
  [chromium]=chromium
  [podman]=podman
  [runc]=runc
  [debootstrap]=debootstrap
)

missing=()
for cmd in "${!PROVIDER[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${PROVIDER[$cmd]}")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "test-requirements: all present"
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "${1:-}" = "--check" ]; then
  echo "test-requirements: missing packages: ${missing[*]}"
  exit 1
fi
command -v apt-get >/dev/null 2>&1 || { echo "test-requirements: missing ${missing[*]} and no apt-get here" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "test-requirements: missing ${missing[*]}; installing them needs root" >&2; exit 1; }
echo "test-requirements: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# Packages' own services are not wanted: the tests start Prometheus and the exporter on free 127.0.0.1 ports.
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "test-requirements: installed ${missing[*]}"
