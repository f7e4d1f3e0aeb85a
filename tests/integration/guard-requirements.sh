#!/usr/bin/env bash
# Real components the guard's Prometheus tests start (Debian packages), installed when missing:
# promtool (package prometheus) and prometheus-node-exporter. Idempotent; needs root and apt-get to install.
set -euo pipefail

declare -A PROVIDER=([promtool]=prometheus [prometheus-node-exporter]=prometheus-node-exporter)
missing=()
for cmd in "${!PROVIDER[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${PROVIDER[$cmd]}")
done
[ ${#missing[@]} -gt 0 ] || exit 0
command -v apt-get >/dev/null 2>&1 || { echo "guard-requirements: missing ${missing[*]} and no apt-get here" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "guard-requirements: missing ${missing[*]}; installing them needs root" >&2; exit 1; }
echo "guard-requirements: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# The package's own service is not wanted (the test starts the exporter on a free 127.0.0.1 port).
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
