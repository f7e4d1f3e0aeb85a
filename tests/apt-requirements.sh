# shellcheck shell=bash
# The body the tests' host-tool installers share (tests/integration/requirements.sh and
# tests/vm/requirements.sh source this file): find which Debian packages are missing, report
# them (--check) or install them with apt-get. Idempotent: a warm machine pays a PATH lookup a
# command (and one dpkg query a package named on its own).
#
#   apt_requirements LABEL MODE NEED...
#
# LABEL   prefix of every message ("test-requirements", "vm-requirements")
# MODE    "--check": only report, return 1 when something is missing; anything else installs
# NEED    COMMAND=PACKAGE  PACKAGE is missing when COMMAND is not on PATH
#         PACKAGE          missing when dpkg does not list it installed (checked only where
#                          dpkg-query exists): for files a command needs that are not on PATH
#
# Returns 0 when everything is present or was installed, 1 when something is missing and
# cannot be installed here (--check, no apt-get, not root), apt-get's status when it fails.
# Messages: "LABEL: all present", "LABEL: missing packages: ..." (--check, stdout),
# "LABEL: installing ..." / "LABEL: installed ..." (stdout), the reasons it cannot (stderr).
apt_requirements() {
  local label=$1 mode=$2 need
  shift 2
  local -a missing=()
  for need in "$@"; do
    if [ "${need#*=}" != "$need" ]; then
      command -v "${need%%=*}" >/dev/null 2>&1 || missing+=("${need#*=}")
    elif command -v dpkg-query >/dev/null 2>&1 \
      && ! dpkg-query -W -f='${Status}\n' "$need" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$need")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "$label: all present"
    return 0
  fi
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [ "$mode" = "--check" ]; then
    echo "$label: missing packages: ${missing[*]}"
    return 1
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "$label: missing ${missing[*]} and no apt-get here" >&2; return 1; }
  [ "$(id -u)" -eq 0 ] || { echo "$label: missing ${missing[*]}; installing them needs root" >&2; return 1; }
  echo "$label: installing ${missing[*]}"
  # Packages' own services are not wanted: the tests start Prometheus and the exporter on free
  # 127.0.0.1 ports.
  # The test command's stages run side by side and may install at the same time: apt takes its own
  # locks without waiting, so they queue on one lock of theirs first (NUMA_DRIFT_APT_LOCK moves it,
  # for the scripts' own tests).
  (
    flock 9
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  ) 9>"${NUMA_DRIFT_APT_LOCK:-/var/lock/nodeops-numa-drift-apt.lock}" || {
    local status=$?
    echo "$label: apt-get failed to install ${missing[*]}" >&2
    return "$status"
  }
  echo "$label: installed ${missing[*]}"
}
