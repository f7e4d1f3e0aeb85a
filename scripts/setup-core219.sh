#!/usr/bin/env bash
# Create or refresh <checkout>/.venv-core219: ansible-core 2.19 (the oldest the collection supports) for the probe's
# transport tests (scripts/test.sh, unit stage), with the interpreter of .venv (scripts/setup.sh makes it first).
# Idempotent: a stamp records the interpreter and the sha256 of requirements-core219.txt.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv-core219"
REQUIREMENTS="$ROOT/requirements-core219.txt"
STAMP="$VENV/.numa-drift-setup-stamp"

die() { printf 'setup-core219: ERROR: %s\n' "$*" >&2; exit 1; }

[ -x "$ROOT/.venv/bin/python" ] || die "no $ROOT/.venv: run scripts/setup.sh first"
PYTHON=$("$ROOT/.venv/bin/python" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 11) else 1)' \
  || die "$PYTHON is older than Python 3.11, which ansible-core 2.19 needs"
want="$PYTHON $(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" || die "cannot create $VENV with $PYTHON"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" \
  || die "cannot install $REQUIREMENTS from PyPI"
echo "$want" >"$STAMP"
printf 'setup-core219: %s, ansible-core %s in %s\n' "$("$VENV/bin/python" --version)" \
  "$("$VENV/bin/python" -c 'import ansible.release; print(ansible.release.__version__)')" "$VENV"
