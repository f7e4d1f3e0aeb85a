#!/usr/bin/env bash
# The molecule stage of the test command: real multi-NUMA QEMU guests (extensions/molecule/).
#
#   bash tests/vm/run-molecule.sh                 every scenario (fast, then drift guard kaslr refuse)
#   bash tests/vm/run-molecule.sh drift kaslr     molecule test -s drift -s kaslr
#
# `molecule test` inside one time budget, with a summary (time and result per scenario): first the
# scenarios of the nspawn tier (fast), while the guests' kubelet may still be building, then the QEMU
# ones; exits non-zero when a scenario failed or the budget ran out.
# Exits 0 with a clear "SKIPPED: <why>" line where QEMU guests cannot run: not Linux, not x86_64,
# not root while the guest image still has to be built, NUMA_DRIFT_MOLECULE=0. Guests run under TCG
# (no /dev/kvm needed). Host tools come from Debian's packages (tests/vm/requirements.sh installs
# what is missing); the guest image is built on the first run and cached (tests/vm/build-image.sh).
#
# Environment:
#   NUMA_DRIFT_MOLECULE=0             skip this stage
#   NUMA_DRIFT_MOLECULE_BUDGET=2700   seconds for all scenarios together (then they are stopped)
#   NUMA_DRIFT_VM_CACHE               guest image cache (default ~/.cache/nodeops-numa-drift/vm)
#   NUMA_DRIFT_VM_RECORDS             where boot records and serial logs are kept (default tests/output/molecule)
set -uo pipefail
shopt -s lastpipe  # the output filter below keeps its variables

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUDGET=${NUMA_DRIFT_MOLECULE_BUDGET:-2700}

say() { printf 'molecule-vm: %s\n' "$*"; }
skip() { say "SKIPPED: $*"; exit 0; }

[ "${NUMA_DRIFT_MOLECULE:-1}" != 0 ] || skip "NUMA_DRIFT_MOLECULE=0"
[ "$(uname -s)" = Linux ] || skip "QEMU guests with a Debian image need Linux (this is $(uname -s))"
[ "$(uname -m)" = x86_64 ] || skip "the guest image is amd64 and is built with debootstrap on the host (this is $(uname -m))"

scenarios=("$@")
if [ ${#scenarios[@]} -gt 0 ]; then
  for s in "${scenarios[@]}"; do
    [ -f "$ROOT/extensions/molecule/$s/molecule.yml" ] || { say "no scenario $s in extensions/molecule"; exit 2; }
  done
else
  mapfile -t scenarios < <(cd "$ROOT/extensions/molecule" && for f in */molecule.yml; do echo "${f%/molecule.yml}"; done)
fi

if ! bash "$HERE/requirements.sh" --check >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    skip "QEMU/debootstrap are missing and installing them needs root: $(bash "$HERE/requirements.sh" --check)"
  fi
  bash "$HERE/requirements.sh" || { say "FAILED: could not install the host tools (tests/vm/requirements.sh)"; exit 1; }
fi
if [ "$(id -u)" -ne 0 ] && ! bash "$HERE/build-image.sh" >/dev/null 2>&1; then
  skip "the guest image is not built yet and building it (debootstrap, chroot) needs root"
fi

# molecule and ansible from the project's venv; the checkout as the collection nodeops.numa_drift.
VENV="$ROOT/.venv"
[ -x "$VENV/bin/molecule" ] || { say "FAILED: $VENV/bin/molecule missing (run scripts/setup.sh)"; exit 1; }
export PATH="$VENV/bin:$PATH" VIRTUAL_ENV="$VENV"
key=$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)
collections="${TMPDIR:-/tmp}/nodeops-numa-drift-$key"
mkdir -p "$collections/ansible_collections/nodeops"
ln -sfn "$ROOT" "$collections/ansible_collections/nodeops/numa_drift"
export ANSIBLE_COLLECTIONS_PATH="$collections"
export NUMA_DRIFT_VM_RECORDS=${NUMA_DRIFT_VM_RECORDS:-$ROOT/tests/output/molecule}
export ANSIBLE_FORCE_COLOR=${ANSIBLE_FORCE_COLOR:-0} PY_COLORS=${PY_COLORS:-0}
mkdir -p "$NUMA_DRIFT_VM_RECORDS"
cd "$ROOT" || exit 1

start_all=$(date +%s)
image_start=$(date +%s)
image=$(bash "$HERE/build-image.sh") || { say "FAILED: guest image build"; exit 1; }
say "guest image $image ready in $(($(date +%s) - image_start))s"

# Copy molecule's output through, noting when each scenario starts, its recap line, whether one of its
# guests stopped answering (a host's play recap with unreachable=N: the guest hung, see ssh_args in molecule.yml),
# and its first failure (the task's header and the first lines of Ansible's error) for the summary: the summary
# is what a CI log's tail shows.
FAILURE_LINES=14
declare -A started=() ended=() recap=() unreachable=() rerun=() failure=()
order=()
follow() {
  local line name task="" keep=0
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [ "$keep" -gt 0 ]; then
      failure[${order[-1]}]+="    ${line:0:240}"$'\n'
      keep=$((keep - 1))
    fi
    if [[ $line =~ ^TASK\ \[ ]]; then
      task=$line
    elif [[ $line == '...ignoring' ]] && [ ${#order[@]} -gt 0 ]; then
      unset "failure[${order[-1]}]"  # a failure the scenario expects (ignore_errors)
      keep=0
    elif [[ $line =~ ^(fatal|failed):\ \[ ]] && [ ${#order[@]} -gt 0 ] && [ -z "${failure[${order[-1]}]:-}" ]; then
      failure[${order[-1]}]="    ${task:0:240}"$'\n'"    ${line:0:240}"$'\n'
      keep=$FAILURE_LINES
    elif [[ $line =~ \[([A-Za-z0-9_-]+)\ \>\ [a-z_]+\]\ Executing ]]; then
      name=${BASH_REMATCH[1]}
      if [ -z "${started[$name]:-}" ]; then
        [ ${#order[@]} -eq 0 ] || [ -n "${ended[${order[-1]}]:-}" ] || ended[${order[-1]}]=$(date +%s)
        started[$name]=$(date +%s)
        order+=("$name")
      fi
    elif [[ $line =~ ^([A-Za-z0-9_-]+)\ +:\ actions=.*failed=([0-9]+) ]]; then
      recap[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    elif [[ $line =~ ^[A-Za-z0-9_.-]+\ +:\ ok=.*unreachable=[1-9] ]] && [ ${#order[@]} -gt 0 ]; then
      unreachable[${order[-1]}]=1
    fi
  done
}

# The last lines of each guest's newest serial log of a scenario (kept by destroy.yml): why a guest stopped answering.
show_serial_tails() {
  local s=$1 log
  find "$NUMA_DRIFT_VM_RECORDS/$s" -maxdepth 1 -name '*-serial-*.log' -printf '%T@ %p\n' 2>/dev/null | sort -rn | cut -d' ' -f2- \
    | awk -F'-serial-' '!seen[$1]++' | while IFS= read -r log; do
      say "last lines of $log:"
      tail -n 12 "$log" | sed 's/^/    /'
    done
}

# One `molecule test` over the named scenarios, inside what is left of the budget; its exit status.
rc=0
test_round() {
  local -a round=("$@") args=()
  local s left round_rc
  for s in "${round[@]}"; do args+=(-s "$s"); done
  left=$((BUDGET - ($(date +%s) - start_all)))
  if [ "$left" -le 0 ]; then
    say "stopped: the time budget of ${BUDGET}s ran out before ${round[*]}"
    rc=124
    return
  fi
  say "molecule test ${args[*]} (${left}s left of the ${BUDGET}s budget)"
  timeout --foreground -k 30 "$left" molecule test "${args[@]}" 2>&1 | follow
  round_rc=${PIPESTATUS[0]}
  [ ${#order[@]} -eq 0 ] || [ -n "${ended[${order[-1]}]:-}" ] || ended[${order[-1]}]=$(date +%s)
  [ "$round_rc" -ne 124 ] || say "stopped: the time budget of ${BUDGET}s ran out"
  if [ "$round_rc" -ne 0 ]; then
    # A failed or stopped run leaves its guests up: take them down.
    timeout 600 molecule destroy "${args[@]}" >/dev/null 2>&1 || say "molecule destroy failed"
    rc=$round_rc
  fi
}

# One round; when it failed because a guest of the failing scenario stopped answering (a TCG guest starved by
# a busy host: 2 of the CI runs of 2026-12-06, once right after its first SSH, once in the middle of drift's
# prepare), that scenario and the ones after it run once more, in what is left of the budget. The first
# failure stays in the output and the summary says the scenario was run twice; a scenario that fails
# again, or fails any other way, fails the stage.
test_round_once_more_on_hung_guest() {
  local -a round=("$@")
  local earlier=$rc
  test_round "${round[@]}"
  once_more_on_hung_guest "${round[@]}"
  [ "$earlier" -eq 0 ] || rc=$earlier  # an earlier round's failure stands, whatever this round did
}

once_more_on_hung_guest() {
  local -a round=("$@")
  local failed i
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ ${#order[@]} -gt 0 ] || return 0
  failed=${order[-1]}
  [ -n "${unreachable[$failed]:-}" ] && [ -z "${rerun[$failed]:-}" ] || return 0
  for i in "${!round[@]}"; do [ "${round[$i]}" != "$failed" ] || break; done
  [ "${round[$i]}" = "$failed" ] || return 0
  say "a guest of $failed stopped answering; $failed${round[$((i + 1))]:+ and the scenarios after it} run once more"
  show_serial_tails "$failed"
  rerun[$failed]=1
  unset "started[$failed]" "ended[$failed]" "recap[$failed]" "unreachable[$failed]" "failure[$failed]"
  order=("${order[@]:0:${#order[@]}-1}")
  rc=0
  test_round "${round[@]:$i}"
}

# Scenarios of the nspawn tier (NUMA_DRIFT_VM_TIER: nspawn) run the stand-in, not the guests' kubelet: they
# go first, while the Go builds (scripts/test.sh's queue, or the build below) are still making it.
early=() guests=()
for s in "${scenarios[@]}"; do
  if grep -q 'NUMA_DRIFT_VM_TIER: nspawn' "$ROOT/extensions/molecule/$s/molecule.yml"; then early+=("$s"); else guests+=("$s"); fi
done

# An interrupted earlier run may have left guests, containers or API stand-ins: clear them.
destroy_args=()
for s in "${scenarios[@]}"; do destroy_args+=(-s "$s"); done
timeout 600 molecule destroy "${destroy_args[@]}" >/dev/null 2>&1 || true
[ ${#early[@]} -eq 0 ] || test_round_once_more_on_hung_guest "${early[@]}"

if [ ${#guests[@]} -gt 0 ] && [ "$rc" -ne 124 ]; then
  # The guests' real kubelet (tests/vm/kubelet_disk.py: kubelet v1.34 and v1.37 built from k8s.io/kubernetes,
  # kubelet's fake remote runtime, on a read-only disk): built here when not cached (Go from
  # scripts/go-toolchain.sh, as the kubelet judges), so create.yml only reuses it.
  kubelet_start=$(date +%s)
  if ! python3 "$HERE/kubelet_disk.py" --check; then
    go=$(bash "$ROOT/scripts/go-toolchain.sh" "$VENV") || { say "FAILED: no Go toolchain for the guests' kubelet"; exit 1; }
    PATH="$(dirname "$go"):$PATH" python3 "$HERE/kubelet_disk.py" >/dev/null || { say "FAILED: the guests' kubelet build"; exit 1; }
  fi
  say "guests' kubelet ready in $(($(date +%s) - kubelet_start))s"
  test_round_once_more_on_hung_guest "${guests[@]}"
fi
finished=$(date +%s)

say "summary (records: $NUMA_DRIFT_VM_RECORDS)"
for i in "${!order[@]}"; do
  s=${order[$i]}
  end=${ended[$s]:-$finished}
  case "${recap[$s]:-}" in
    0) state=passed ;;
    "") state="FAILED (did not finish)" ;;
    *) state="FAILED (${recap[$s]} actions failed)" ;;
  esac
  [ -z "${rerun[$s]:-}" ] || state="$state (run twice: a guest hung)"
  printf '  %-8s %-28s %5ss\n' "$s" "$state" "$((end - ${started[$s]}))"
done
for s in "${order[@]}"; do
  [ "${recap[$s]:-}" != 0 ] && [ -n "${failure[$s]:-}" ] || continue
  say "first failure of $s:"
  printf '%s' "${failure[$s]}"
done
for s in "${scenarios[@]}"; do
  [ -n "${started[$s]:-}" ] || printf '  %-8s %-28s\n' "$s" "NOT RUN"
done
say "total $((finished - start_all))s, molecule exit $rc"
exit "$rc"
