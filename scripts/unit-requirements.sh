#!/usr/bin/env bash
# System tools the unit stage's fault-injection suite (tests/integration/test_faults.py) uses:
# strace (kill -9 injected at each fsync and rename). Installed with apt-get when missing and
# possible (root); otherwise the tests that need it skip, naming the reason.
set -uo pipefail

command -v strace >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "unit-requirements: strace is missing and cannot be installed here (not root or no apt-get);" \
    "the strace fault-injection tests will skip" >&2
  exit 0
fi
echo "unit-requirements: installing strace" >&2
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends strace >/dev/null \
  || echo "unit-requirements: installing strace failed; the strace fault-injection tests will skip" >&2
exit 0
