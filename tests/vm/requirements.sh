#!/usr/bin/env bash
# Install the host tools the VM tier needs (QEMU, image build, SSH, nspawn, etcd for the control plane the
# guests register with), from Debian's packages. Idempotent: installs only what is missing, so a warm machine pays one dpkg query
# (tests/apt-requirements.sh does the work).
#
#   bash tests/vm/requirements.sh          install what is missing (root, apt-get)
#   bash tests/vm/requirements.sh --check  only report; exit 1 when something is missing
set -euo pipefail
# shellcheck source=tests/apt-requirements.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../apt-requirements.sh"

# command the VM tier runs=Debian package that provides it; qemu-system-x86_64 also needs its
# firmware/option ROMs (seabios, ipxe-qemu) from the same package, hence the package on its own.
apt_requirements vm-requirements "${1:-}" \
  qemu-system-x86_64=qemu-system-x86 \
  qemu-img=qemu-utils \
  debootstrap=debootstrap \
  mkfs.ext4=e2fsprogs \
  ssh=openssh-client \
  ssh-keygen=openssh-client \
  systemd-nspawn=systemd-container \
  flock=util-linux \
  etcd=etcd-server \
  qemu-system-x86
