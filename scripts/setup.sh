#!/usr/bin/env bash
# Create or refresh the development virtual environment in <checkout>/.venv.
#
# Picks a controller Python >= 3.12 when one exists (ansible-core 2.21.x), else Python 3.11
# (ansible-core 2.19.x, by the environment markers in requirements.txt), and installs the pinned
# requirements. Idempotent: a stamp in .venv records the interpreter and the sha256 of
# requirements.txt; nothing is installed again until one of them changes.
#
# Environment: NUMA_DRIFT_PYTHON=/path/to/python forces the interpreter (3.11 or newer).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/requirements.txt"
STAMP="$VENV/.numa-drift-setup-stamp"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

# True when "$1" runs, is at least Python $2 (a "3.12"-style version) and can create a venv.
python_fits() {
  [ -n "$1" ] || return 1
  "$1" - "$2" >/dev/null 2>&1 <<'PY'
import sys
import ensurepip, venv  # venv bootstraps pip with ensurepip
want = tuple(int(part) for part in sys.argv[1].split("."))
sys.exit(0 if sys.version_info[:2] >= want else 1)
PY
}

# Candidate interpreters for one minor version, newest patch release first.
pyenv_candidates() {
  local minor=$1 root
  command -v pyenv >/dev/null 2>&1 || return 0
  root=$(pyenv root 2>/dev/null) || return 0
  # Sorted by version, so 3.13.10 comes before 3.13.9.
  compgen -G "$root/versions/$minor*/bin/python$minor" | sort -V -r || true
}

choose_python() {
  local c
  local -a looked=()
  if [ -n "${NUMA_DRIFT_PYTHON:-}" ]; then
    python_fits "$NUMA_DRIFT_PYTHON" 3.11 && { echo "$NUMA_DRIFT_PYTHON"; return 0; }
    die "NUMA_DRIFT_PYTHON=$NUMA_DRIFT_PYTHON is not a working Python >= 3.11 with the venv module"
  fi
  # Python >= 3.12 first: ansible-core 2.21.x. The pyenv shims on PATH refuse versions that
  # are not selected, so every candidate is judged by running it.
  local -a preferred=(python3.13 python3.12)
  mapfile -t -O "${#preferred[@]}" preferred < <(pyenv_candidates 3.13; pyenv_candidates 3.12)
  preferred+=(/usr/bin/python3.13 /usr/bin/python3.12 python3)
  for c in "${preferred[@]}"; do
    looked+=("$c")
    python_fits "$c" 3.12 && { command -v "$c"; return 0; }
  done
  # Fallback: Python 3.11, ansible-core 2.19.x.
  local -a fallback=(python3.11)
  mapfile -t -O 1 fallback < <(pyenv_candidates 3.11)
  fallback+=(/usr/bin/python3.11 python3)
  for c in "${fallback[@]}"; do
    looked+=("$c")
    python_fits "$c" 3.11 && { command -v "$c"; return 0; }
  done
  die "no usable Python found. Need Python >= 3.12 (or 3.11 as a fallback) with the venv module.
  Looked for (in order): \$NUMA_DRIFT_PYTHON (unset), ${looked[*]}.
  On Debian 12: apt-get install python3 python3-venv (3.11), or install 3.12+ (e.g. with pyenv)
  and point NUMA_DRIFT_PYTHON at it."
}

[ -f "$REQUIREMENTS" ] || die "missing $REQUIREMENTS"

# One setup at a time per checkout (the demo and the tests may start together).
if command -v flock >/dev/null 2>&1; then
  exec 9<"${BASH_SOURCE[0]}"
  flock 9
fi

PYTHON=$(choose_python)
PYTHON=$(cd / && "$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))')
PY_VERSION=$("$PYTHON" -c 'import platform; print(platform.python_version())')
REQ_SHA=$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)
WANT_STAMP="python=$PYTHON version=$PY_VERSION requirements=$REQ_SHA"

venv_python_version() {
  "$VENV/bin/python" -c 'import platform; print(platform.python_version())' 2>/dev/null
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ] \
  && [ "$(venv_python_version)" = "$PY_VERSION" ]; then
  state="up to date"
else
  start=$SECONDS
  if [ "$(venv_python_version)" != "$PY_VERSION" ]; then
    # Missing, broken or built on another interpreter: start over.
    say "creating $VENV with Python $PY_VERSION ($PYTHON)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" \
      || die "'$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)"
  fi
  rm -f "$STAMP"
  say "installing pinned requirements from requirements.txt (a few minutes on a cold cache)"
  log="$VENV/pip-install.log"
  if ! "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q \
    -r "$REQUIREMENTS" >"$log" 2>&1; then
    grep -v '^WARNING: Location ' "$log" | tail -n 40 >&2
    die "pip install failed (full log: $log)"
  fi
  echo "$WANT_STAMP" >"$STAMP"
  state="installed in $((SECONDS - start))s"
fi

CORE_VERSION=$("$VENV/bin/python" -c 'from ansible.release import __version__; print(__version__)') \
  || die "ansible-core is not importable from $VENV; remove $VENV and run again"
say "Python $PY_VERSION ($PYTHON), ansible-core $CORE_VERSION, venv $VENV ($state)"
