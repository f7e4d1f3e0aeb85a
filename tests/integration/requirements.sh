#!/usr/bin/env bash
# Install the real components the integration tests start (Debian packages), when missing:
# Prometheus (the remediate playbook's health gate reads its firing alerts) and Chromium
# (the fleet report is rendered in a headless browser). Idempotent.
#
#   bash tests/integration/requirements.sh          install what is missing (root, apt-get)
#   bash tests/integration/requirements.sh --check  only report; exit 1 when something is missing
set -euo pipefail

declare -A PROVIDER=(
  [prometheus]=prometheus
  [chromium]=chromium
)

missing=()
for cmd in "${!PROVIDER[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${PROVIDER[$cmd]}")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "integration-requirements: all present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "integration-requirements: missing packages: ${missing[*]}"
  exit 1
fi
command -v apt-get >/dev/null 2>&1 || { echo "integration-requirements: missing ${missing[*]} and no apt-get here" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "integration-requirements: missing ${missing[*]}; installing them needs root" >&2; exit 1; }
echo "integration-requirements: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "integration-requirements: installed ${missing[*]}"
