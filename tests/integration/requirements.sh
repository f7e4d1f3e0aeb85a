#!/usr/bin/env bash
# Install the real components the unit and integration tests start (Debian packages), when missing:
#   strace                    fault injection (kill -9 at each fsync and rename, tests/integration/test_faults.py)
#   prometheus, promtool      the rollout health gate reads a real Prometheus' firing alerts; the guard's
#                             alerting rules are checked with promtool check/test rules
#   prometheus-node-exporter  the guard's textfile metrics are read back through a real node exporter
#   chromium                  the fleet report is rendered in a headless browser
#   podman, runc, debootstrap the AWX execution environment image is built (ansible-builder with podman, on a
#                             debootstrap'd base image) and the probe job runs inside it
#                             (tests/integration/ee_build.py, tests/integration/test_execution_environment.py)
#   etcd (etcd-server)        the real control plane's store: kube-apiserver (built from the Go module proxy)
#                             + etcd on loopback (tests/integration/controlplane.py)
# Idempotent (tests/apt-requirements.sh does the work).
#
#   bash tests/integration/requirements.sh          install what is missing (root, apt-get)
#   bash tests/integration/requirements.sh --check  only report; exit 1 when something is missing
set -euo pipefail
# shellcheck source=tests/apt-requirements.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../apt-requirements.sh"

# command the tests run=Debian package that provides it
apt_requirements test-requirements "${1:-}" \
  strace=strace \
  prometheus=prometheus \
  promtool=prometheus \
  prometheus-node-exporter=prometheus-node-exporter \
  chromium=chromium \
  podman=podman \
  runc=runc \
  debootstrap=debootstrap \
  etcd=etcd-server
