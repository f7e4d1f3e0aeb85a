#!/usr/bin/env bash
# Install the host tools the VM tier needs (QEMU, image build, SSH, nspawn), from Debian's
# packages. Idempotent: installs only what is missing, so a warm machine pays one dpkg query.
#
#   bash tests/vm/requirements.sh          install what is missing (root, apt-get)
#   bash tests/vm/requirements.sh --check  only report; exit 1 when something is missing
set -euo pipefail

# command the VM tier runs -> Debian package that provides it
declare -A PROVIDER=(
  [qemu-system-x86_64]=qemu-system-x86
  [qemu-img]=qemu-utils
  [debootstrap]=debootstrap
  [mkfs.ext4]=e2fsprogs
  [ssh]=openssh-client
  [ssh-keygen]=openssh-client
  [systemd-nspawn]=systemd-container
  [flock]=util-linux
)

missing=()
for cmd in "${!PROVIDER[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${PROVIDER[$cmd]}")
done
# qemu-system-x86_64 needs its firmware/option ROMs (seabios, ipxe-qemu) from the same package.
if command -v dpkg-query >/dev/null 2>&1 \
  && ! dpkg-query -W -f='${Status}\n' qemu-system-x86 2>/dev/null | grep -q 'install ok installed'; then
  missing+=(qemu-system-x86)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "vm-requirements: all present"
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "${1:-}" = "--check" ]; then
  echo "vm-requirements: missing packages: ${missing[*]}"
  exit 1
fi
command -v apt-get >/dev/null 2>&1 || { echo "vm-requirements: missing ${missing[*]} and no apt-get here" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "vm-requirements: missing ${missing[*]}; installing them needs root" >&2; exit 1; }
echo "vm-requirements: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "vm-requirements: installed ${missing[*]}"
