#!/usr/bin/env bash
# Run every test of the collection (the README's test command; .ci/run calls it).
#
#   bash scripts/test.sh                 all stages, in order
#   bash scripts/test.sh unit lint       only the named stages
#
# Stages: unit (pytest tests/unit: the engine and plugins in-process, no system packages; the
# fast loop, a few minutes), integration (pytest tests/integration: playbooks, the sandbox fleet,
# Chromium, Prometheus, the execution environment; installs Debian packages first; the rest),
# kubelet (pytest tests/kubelet_judge: kubelet's own start-up code (memory and CPU managers) at every supported release judges
# every verdict and repair; builds the judges with Go, cached per release), sanity (ansible-test sanity, no ignores), lint (ansible-lint, production profile, offline),
# changelog (antsibull-changelog lint), molecule (every scenario in real multi-NUMA QEMU guests;
# skipped with a reason where they cannot run). Every selected stage runs; the exit status is
# non-zero when any of them failed. When other stages are selected too, molecule runs beside them from
# the start (NUMA_DRIFT_SERIAL=1: in turn), and the Go builds the stages need run in one background queue.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
ALL_STAGES=(unit integration kubelet sanity lint changelog molecule)

usage() {
  local IFS='|'
  echo "usage: bash scripts/test.sh [${ALL_STAGES[*]}]..." >&2
  echo "       no argument runs all stages in the order above" >&2
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${ALL_STAGES[@]}")
for stage in "${stages[@]}"; do
  case " ${ALL_STAGES[*]} " in
    *" $stage "*) ;;
    *) usage; exit 2 ;;
  esac
done

bash "$ROOT/scripts/setup.sh" || exit 1
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
PY_MINOR=$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cd "$ROOT" || exit 1

# Show a command, then run it.
run() {
  printf '+ %s\n' "$*"
  "$@"
}

# pytest over one directory; collecting no test is a failure (a stage that tested nothing failed).
# PYTEST_NICE=N runs it at that niceness.
run_pytest() {
  local rc
  [ -e "$1" ] || { echo "no $1" >&2; return 1; }
  run ${PYTEST_NICE:+nice -n "$PYTEST_NICE"} python -m pytest "$@"
  rc=$?
  [ "$rc" -ne 5 ] || echo "pytest collected no tests in $1" >&2
  return "$rc"
}

# The probe's transport tests (its action plugin on the node's interpreter, real playbooks through it): they use
# ansible-core's ActionBase and connection plugins, so they run under the oldest supported ansible-core too.
CORE219_TESTS=(tests/unit/plugins/action/test_numa_drift_facts.py tests/unit/plugins/action/test_numa_drift_facts_playbook.py
  tests/unit/plugins/plugin_utils/test_snapshot.py)

# The collection as shipped, for the unit stage: galaxy.yml builds the tarball from a copy of the checkout's
# files and `ansible-galaxy collection install --offline` puts it into PROJECT/collections (as docs/install.md
# says: no Galaxy here); prints the installed collection's directory.
install_collection() {
  local project=$1 copy="$1/checkout-copy"
  mkdir -p "$copy" "$project/dist" "$project/collections" || return 1
  copy_checkout "$copy" || return 1
  ansible-galaxy collection build "$copy" --output-path "$project/dist" >&2 || return 1
  ansible-galaxy collection install --offline "$project"/dist/nodeops-numa_drift-*.tar.gz -p "$project/collections" >&2 || return 1
  echo "$project/collections/ansible_collections/nodeops/numa_drift"
}

stage_unit() {
  # In-process tests of the engine and the plugins: Python only, nothing installed on the system. Nothing
  # waits for them, so beside the background Go builds they yield the CPU (see YIELD_NICE).
  #
  # The unit tests the tarball ships run from the installed tarball, with docs/collection-readme.md's command
  # (the checkout's pytest.ini options added): the code they test is the code that ships, and a test needing a
  # file the tarball leaves out fails. The unit tests of the checkout's own tooling (left out by galaxy.yml's
  # build_ignore) run from the checkout. Every file of tests/unit runs once.
  local rc=0 project installed
  local -a own=()
  project=$(mktemp -d "${TMPDIR:-/tmp}/numa-drift-unit.XXXXXX") || return 1
  installed=$(install_collection "$project") || { echo "unit: could not build and install the collection" >&2; rm -rf "$project"; return 1; }
  (cd "$installed" && PYTHONPATH="$project/collections" PYTEST_NICE=$(yield_nice) run_pytest tests/unit \
    -p no:pytest-ansible --strict-markers --import-mode=importlib -p no:cacheprovider) || rc=1
  while IFS= read -r -d '' test_file; do
    [ -e "$installed/$test_file" ] || own+=("$test_file")
  done < <(find tests/unit -name 'test_*.py' -print0 | sort -z)
  rm -rf "$project"
  echo "unit: ${#own[@]} test files of the checkout's own tooling, from the checkout"
  [ ${#own[@]} -eq 0 ] || PYTEST_NICE=$(yield_nice) run_pytest "${own[@]}" || rc=1
  # The transport tests again under ansible-core 2.19 (.venv-core219, from PyPI: scripts/setup-core219.sh).
  run bash "$ROOT/scripts/setup-core219.sh" || return 1
  PATH="$ROOT/.venv-core219/bin:$PATH" VIRTUAL_ENV="$ROOT/.venv-core219" run python -m pytest "${CORE219_TESTS[@]}" || rc=1
  return "$rc"
}

stage_integration() {
  # Real components the integration tests start (strace, Prometheus, node exporter, Chromium,
  # podman, etcd), from Debian.
  run bash tests/integration/requirements.sh || return 1
  # kube-apiserver and kube-controller-manager of the real control plane (tests/integration/controlplane.py;
  # the molecule stage's guests register with it), built before the tests (cached under
  # ~/.cache/nodeops-numa-drift/kube-apiserver/; when the Go build queue below is building them, this
  # waits for it), with Go from scripts/go-toolchain.sh.
  local go
  go=$(bash "$ROOT/scripts/go-toolchain.sh" "$VENV") || return 1
  PATH="$(dirname "$go"):$PATH" run python "$ROOT/tests/integration/controlplane.py" build || return 1
  PATH="$(dirname "$go"):$PATH" run_pytest tests/integration --durations=25
}

# The Go builds of the tests: the control plane (tests/integration/controlplane.py: integration and
# molecule), the guests' kubelet (tests/vm/kubelet_disk.py: molecule) and the kubelet judges
# (tests/kubelet_judge/build.py: kubelet), each cached per release under ~/.cache/nodeops-numa-drift/.
# Cold, they are most of a fresh machine's CI time, so when other stages run too a queue builds them in
# the background from the start, one at a time (every Go build waits for its turn under one lock,
# tests/kubelet_judge/build.py go_build_turn: `go build` uses every core, and two builds of one release at
# once would compile the same packages twice), in the order the stages need them. A stage that needs a
# binary goes on as soon as it exists, or builds whatever is still missing itself in its turn.
GO_BUILDS_PID=""
GO_BUILDS_LOG="$ROOT/tests/output/go-builds.log"

selected() {
  case " ${stages[*]} " in *" $1 "*) return 0 ;; esac
  return 1
}

# The critical path of a cold run is the Go builds the guests' scenarios wait for (the control plane, the
# guests' kubelet), then those scenarios. Work nothing waits for meanwhile, the unit tests and the judges'
# builds (only the kubelet stage, late in the order, needs them), runs at niceness YIELD_NICE while the
# background queue runs, so it takes the CPU the critical path leaves. Work that talks to servers with
# deadlines (integration, molecule) keeps the normal priority.
YIELD_NICE=10
yield_nice() {
  [ -z "$GO_BUILDS_PID" ] || echo "$YIELD_NICE"
}

go_build_step() {
  local go
  local -a builder
  case "$1" in
    control-plane) builder=(python "$ROOT/tests/integration/controlplane.py" build) ;;
    guest-kubelet) builder=(python "$ROOT/tests/vm/kubelet_disk.py") ;;
    kubelet-judges) builder=(nice -n "$YIELD_NICE" python "$ROOT/tests/kubelet_judge/build.py") ;;
  esac
  go=$(bash "$ROOT/scripts/go-toolchain.sh" "$VENV") || return 1
  PATH="$(dirname "$go"):$PATH" "${builder[@]}"
}

# CHILDREN_CPU: the CPU seconds (user + system) of this shell's finished children so far (from
# /proc/$BASHPID/stat, so no subshell: a subshell's children would not be this shell's).
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
children_cpu() {
  local -a stat
  read -r -a stat <"/proc/$BASHPID/stat" || { CHILDREN_CPU=0; return; }
  # fields 16 and 17: cutime and cstime, in clock ticks (comm, field 2, is "(bash)": no spaces)
  CHILDREN_CPU=$(((stat[15] + stat[16]) / CLK_TCK))
}

start_go_builds() {
  local -a steps=()
  local guests=""
  selected molecule && [ "${NUMA_DRIFT_MOLECULE:-1}" != 0 ] && guests=yes
  { selected integration || [ -n "$guests" ]; } && steps+=(control-plane)
  [ -n "$guests" ] && steps+=(guest-kubelet)
  selected kubelet && steps+=(kubelet-judges)
  # Alone, a stage builds what it needs in the foreground.
  [ ${#steps[@]} -gt 0 ] && [ ${#stages[@]} -gt 1 ] || return 0
  mkdir -p "$(dirname "$GO_BUILDS_LOG")"
  echo "Go builds: ${steps[*]}, one at a time in the background while the stages run (log: $GO_BUILDS_LOG)"
  (
    for step in "${steps[@]}"; do
      began=$(date +%s)
      children_cpu
      cpu_began=$CHILDREN_CPU
      go_build_step "$step"
      rc=$?
      children_cpu
      echo "go-builds: $step exit $rc in $(($(date +%s) - began))s, CPU $((CHILDREN_CPU - cpu_began))s"
    done
  ) >"$GO_BUILDS_LOG" 2>&1 &
  GO_BUILDS_PID=$!
}

stage_kubelet() {
  local go
  if [ -n "$GO_BUILDS_PID" ]; then
    # The judges are the queue's last step: wait for it rather than build beside it.
    echo "kubelet judges: waiting for the background Go builds"
    wait "$GO_BUILDS_PID"
    GO_BUILDS_PID=""
    cat "$GO_BUILDS_LOG"
  fi
  go=$(bash "$ROOT/scripts/go-toolchain.sh" "$VENV") || return 1
  # Builds what the background queue did not (nothing when it succeeded); a build failure fails the tests.
  PATH="$(dirname "$go"):$PATH" run_pytest tests/kubelet_judge
}

# The files of the checkout: tracked plus untracked-but-not-ignored, NUL-separated.
checkout_files() {
  if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$ROOT" ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
      # Skip tracked files deleted in the work tree.
      if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
    done
  else
    find . \( -name .git -o -name .venv -o -name .ansible -o -name .cache -o -name .pytest_cache \
      -o -name .hypothesis -o -name __pycache__ -o -path ./collections -o -path ./tests/output \) -prune \
      -o \( -type f -o -type l \) -printf '%P\0'
  fi
}

# Copy the checkout's files (checkout_files) into the directory $1.
copy_checkout() {
  checkout_files | tar -C "$ROOT" --null -T - -cf - | tar -C "$1" -xf -
}

# ansible-test bootstraps pip in its sanity virtual environments with a get-pip.py downloaded
# from outside the package registries; give it the offline stand-in (see that file).
provide_get_pip() {
  local version cache
  version=$(python -c 'import sys, types
from ansible_test._internal.python_requirements import get_venv_packages
print(get_venv_packages(types.SimpleNamespace(version=sys.argv[1]))["pip"])' "$PY_MINOR") || return 1
  cache="${HOME:?}/.ansible/test/cache/get_pip_${version//./_}.py"
  [ -e "$cache" ] && return 0
  mkdir -p "${cache%/*}" && cp "$ROOT/scripts/ansible_test_get_pip.py" "$cache" \
    && echo "installed the offline pip bootstrap for ansible-test at $cache"
}

stage_sanity() {
  # ansible-test only runs inside .../ansible_collections/<namespace>/<name>/, so test a copy
  # of the checkout's files there (a symlink would not do: the symlinks test rejects it).
  local tmp dest rc
  provide_get_pip || return 1
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/numa-drift-sanity.XXXXXX") || return 1
  dest="$tmp/ansible_collections/nodeops/numa_drift"
  mkdir -p "$dest"
  copy_checkout "$dest" || { rm -rf "$tmp"; return 1; }
  echo "testing a copy of $(find "$dest" -type f | wc -l) files in $dest"
  (cd "$dest" && run ansible-test sanity --local --python "$PY_MINOR" --requirements)
  rc=$?
  rm -rf "$tmp"
  return "$rc"
}

stage_lint() {
  # Offline, ansible-lint does not install the collection it lints, so FQCNs such as
  # nodeops.numa_drift.numa_drift_facts would not resolve: put the checkout on the collections
  # path through a symlink outside the tree. awx/configure.yml's awx.awx modules come from PyPI's ansible 13.x
  # (tests/integration/awx_offline.py: downloaded once, cached).
  local tmp rc awx
  awx=$(python "$ROOT/tests/integration/awx_offline.py") || { echo "lint: could not get the awx.awx collection" >&2; return 1; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/numa-drift-lint.XXXXXX") || return 1
  mkdir -p "$tmp/ansible_collections/nodeops"
  ln -s "$ROOT" "$tmp/ansible_collections/nodeops/numa_drift"
  ANSIBLE_COLLECTIONS_PATH="$tmp:$awx${ANSIBLE_COLLECTIONS_PATH:+:$ANSIBLE_COLLECTIONS_PATH}" \
    run ansible-lint --offline --profile production
  rc=$?
  rm -rf "$tmp"
  return "$rc"
}

stage_changelog() {
  run antsibull-changelog lint && run antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml
}

stage_molecule() {
  # Every scenario of extensions/molecule/ in real multi-NUMA QEMU guests (docs/dev/molecule.md).
  # The runner installs QEMU and builds the guest image when needed, and prints
  # "SKIPPED: <why>" (exit 0) where guests cannot run.
  run bash "$ROOT/tests/vm/run-molecule.sh"
}

run_stage() {
  case "$1" in
    unit) stage_unit ;;
    integration) stage_integration ;;
    kubelet) stage_kubelet ;;
    sanity) stage_sanity ;;
    lint) stage_lint ;;
    changelog) stage_changelog ;;
    molecule) stage_molecule ;;
  esac
}

# The molecule stage beside the others: its QEMU guests spend much of their time waiting (boots, kubelet's
# restarts, the node lifecycle controller's grace period) and the other stages on one Python process, so
# when molecule and other stages are selected it starts first, in the background, its output kept in
# $MOLECULE_LOG and shown where the molecule stage comes in the order. NUMA_DRIFT_SERIAL=1 runs it in turn.
MOLECULE_PID=""
MOLECULE_LOG="$ROOT/tests/output/molecule-stage.log"
MOLECULE_END="$ROOT/tests/output/molecule-stage.end"

start_molecule_beside() {
  mkdir -p "$(dirname "$MOLECULE_LOG")"
  rm -f "$MOLECULE_END"
  echo "molecule: running beside the other stages from $(date -u +%H:%M:%SZ) (log: $MOLECULE_LOG)"
  (
    began=$(date +%s)
    # Beside the other stages the guests get half the machine: a longer budget (run-molecule.sh). It starts
    # right after set-up and is the last stage to end: 4500 s keeps the whole run 15 minutes inside CI's
    # 90 (the last CI's molecule took 2935 s; a run beside extra load needed more than 3600).
    NUMA_DRIFT_MOLECULE_BUDGET=${NUMA_DRIFT_MOLECULE_BUDGET:-4500} stage_molecule >"$MOLECULE_LOG" 2>&1
    echo "$? $(($(date +%s) - began))" >"$MOLECULE_END"
  ) &
  MOLECULE_PID=$!
}

# Show the background molecule stage's output (following it until it ends); its exit status.
finish_molecule_beside() {
  local rc seconds
  tail -n +1 --pid="$MOLECULE_PID" -f "$MOLECULE_LOG"
  wait "$MOLECULE_PID"
  read -r rc seconds <"$MOLECULE_END" || { rc=1; seconds=0; }
  took[molecule]=$seconds
  return "$rc"
}

declare -A result=() took=()
failed=0
start_go_builds
if selected molecule && [ ${#stages[@]} -gt 1 ] && [ "${NUMA_DRIFT_SERIAL:-0}" != 1 ]; then
  start_molecule_beside
fi
mkdir -p "$ROOT/tests/output"
for stage in "${stages[@]}"; do
  printf '\n==== [%s] start %s\n' "$stage" "$(date -u +%H:%M:%SZ)"
  start=$(date +%s)
  if [ "$stage" = molecule ] && [ -n "$MOLECULE_PID" ]; then
    echo "molecule: ran beside the other stages; its output so far, then until it ends:"
    finish_molecule_beside
    rc=$?
  else
    # Kept, so that the summary can name what failed (a CI log shows only its end).
    run_stage "$stage" 2>&1 | tee "$ROOT/tests/output/stage-$stage.log"
    rc=${PIPESTATUS[0]}
    took[$stage]=$(($(date +%s) - start))
  fi
  if [ "$rc" -eq 0 ]; then result[$stage]=passed; else result[$stage]="FAILED (exit $rc)"; failed=1; fi
  printf '==== [%s] %s in %ss\n' "$stage" "${result[$stage]}" "${took[$stage]}"
done
if [ -n "$GO_BUILDS_PID" ]; then
  wait "$GO_BUILDS_PID"
  cat "$GO_BUILDS_LOG"
fi

printf '\n==== summary (Python %s)\n' "$PY_MINOR"
for stage in "${stages[@]}"; do
  printf '  %-10s %-18s %5ss\n' "$stage" "${result[$stage]}" "${took[$stage]}"
done
# What failed, last: pytest's short summary lines (FAILED/ERROR), or the stage's last lines.
for stage in "${stages[@]}"; do
  [ "${result[$stage]}" = passed ] && continue
  log="$ROOT/tests/output/stage-$stage.log"
  [ "$stage" = molecule ] && log="$MOLECULE_LOG"
  [ -f "$log" ] || continue
  printf '\n==== what failed in %s (%s)\n' "$stage" "${log#"$ROOT"/}"
  said=$(grep -aE '^(FAILED|ERROR) |^molecule-vm: +[a-z0-9_-]+ +FAILED' "$log" | tail -n 20)
  [ -n "$said" ] || said=$(tail -n 15 "$log")
  printf '%s\n' "$said" | cut -c1-400
done
exit "$failed"
