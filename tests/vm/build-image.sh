#!/usr/bin/env bash
# Build (once) the Debian bookworm guest image of the molecule VM tier, or reuse the cached one.
#
#   bash tests/vm/build-image.sh            print the cache directory of a ready image (builds it when cold)
#   bash tests/vm/build-image.sh --key      print only the cache key
#   bash tests/vm/build-image.sh --rebuild  drop the cached image of this key and build again
#
# Output (in $NUMA_DRIFT_VM_CACHE or ~/.cache/nodeops-numa-drift/vm, under <key>/):
#   rootfs.qcow2   the root filesystem (ext4, no partition table) for /dev/vda; never written
#                  to: every guest boots a copy-on-write overlay of it (tests/vm/qemu.py)
#   vmlinuz, initrd.img   for QEMU's direct kernel boot (small initrd: virtio + ext4 only)
#   rootfs/        the same tree as a directory, for systemd-nspawn containers (fast tier)
#   id_ed25519[.pub]      the root SSH key baked into the image (test-only, local guests only)
#   image.json     what was built: key, kernel version, sizes, build seconds
#
# The key is the sha256 of image-packages.txt, this script and ansiballz_pycache.py: change one and a new image is
# built beside the old one (old keys are pruned after a successful build). Everything comes from
# Debian's packages (debootstrap + apt inside the root); no loop mounts (mkfs.ext4 -d).
# Needs root (debootstrap, chroot). Concurrent callers wait on a lock and reuse the result.
#
# Environment: NUMA_DRIFT_VM_CACHE (cache root), NUMA_DRIFT_DEBIAN_MIRROR (default
# http://deb.debian.org/debian), NUMA_DRIFT_VM_DISK_MB (virtual disk size, default 2048).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PACKAGES_FILE="$HERE/image-packages.txt"
CACHE_ROOT=${NUMA_DRIFT_VM_CACHE:-${HOME:?}/.cache/nodeops-numa-drift/vm}
MIRROR=${NUMA_DRIFT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
DISK_MB=${NUMA_DRIFT_VM_DISK_MB:-2048}

say() { printf 'vm-image: %s\n' "$*" >&2; }
die() { printf 'vm-image: ERROR: %s\n' "$*" >&2; exit 1; }

PYCACHE_FILE="$HERE/ansiballz_pycache.py"
KEY=$(cat "$PACKAGES_FILE" "${BASH_SOURCE[0]}" "$PYCACHE_FILE" | sha256sum | cut -c1-16)
OUT="$CACHE_ROOT/$KEY"

case "${1:-}" in
  --key) echo "$KEY"; exit 0 ;;
  --rebuild) REBUILD=1 ;;
  "") REBUILD=0 ;;
  *) die "usage: build-image.sh [--key|--rebuild]" ;;
esac

ready() { [ -f "$OUT/image.json" ] && [ -f "$OUT/rootfs.qcow2" ] && [ -f "$OUT/vmlinuz" ]; }

if [ "$REBUILD" = 0 ] && ready; then
  say "warm cache: $OUT"
  echo "$OUT"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the image needs root (debootstrap, chroot); cache $OUT is cold"
for cmd in debootstrap mkfs.ext4 qemu-img ssh-keygen flock chroot; do
  command -v "$cmd" >/dev/null 2>&1 || die "$cmd not found (run tests/vm/requirements.sh)"
done

mkdir -p "$CACHE_ROOT"
exec 8>"$CACHE_ROOT/.lock-$KEY"
flock 8
if [ "$REBUILD" = 0 ] && ready; then
  say "built by a concurrent caller: $OUT"
  echo "$OUT"
  exit 0
fi
[ "$REBUILD" = 0 ] || rm -rf "$OUT"

# Stage 1: everything above the "# Stage 2" line; stage 2: the rest (the kernel).
mapfile -t STAGE1 < <(awk '/^# *Stage 2/ {exit} /^[^#[:space:]]/ {print $1}' "$PACKAGES_FILE")
mapfile -t STAGE2 < <(awk '/^# *Stage 2/ {s=1; next} s && /^[^#[:space:]]/ {print $1}' "$PACKAGES_FILE")
[ ${#STAGE1[@]} -gt 0 ] && [ ${#STAGE2[@]} -gt 0 ] || die "bad $PACKAGES_FILE"

WORK=$(mktemp -d "$CACHE_ROOT/.build-$KEY.XXXXXX")
ROOTFS="$WORK/rootfs"
cleanup() {
  local rc=$?
  umount -l "$ROOTFS/proc" 2>/dev/null || true
  [ "$rc" -eq 0 ] || say "build failed (exit $rc); log: $WORK/build.log"
  [ "$rc" -ne 0 ] || rm -rf "$WORK"
}
trap cleanup EXIT
LOG="$WORK/build.log"
started=$(date +%s)
step() { say "$(printf '[%3ss] %s' "$(($(date +%s) - started))" "$*")"; }

in_root() { LC_ALL=C DEBIAN_FRONTEND=noninteractive chroot "$ROOTFS" "$@"; }

step "debootstrap --variant=minbase $SUITE (${STAGE1[*]}) from $MIRROR"
IFS=, ; include="${STAGE1[*]}"; unset IFS
debootstrap --variant=minbase --components=main --include="$include" \
  "$SUITE" "$ROOTFS" "$MIRROR" >>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "debootstrap failed"; }

step "slimming rules (dpkg path excludes, initramfs: virtio + ext4 only)"
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/01-numa-drift-slim" <<'CFG'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
path-exclude=/lib/firmware/*
path-exclude=/usr/lib/firmware/*
CFG
mkdir -p "$ROOTFS/etc/initramfs-tools/conf.d"
cat >"$ROOTFS/etc/initramfs-tools/conf.d/numa-drift.conf" <<'CFG'
MODULES=list
COMPRESS=gzip
CFG
printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >"$ROOTFS/etc/initramfs-tools/modules"
# No services start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
chmod 0755 "$ROOTFS/usr/sbin/policy-rc.d"

step "stage 2: ${STAGE2[*]}"
mount -t proc proc "$ROOTFS/proc"
in_root apt-get install -y -q --no-install-recommends "${STAGE2[@]}" >>"$LOG" 2>&1 \
  || { tail -n 30 "$LOG" >&2; die "apt-get install ${STAGE2[*]} failed"; }

KVER=$(find "$ROOTFS/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort -V | tail -n 1)
step "kernel $KVER: keep only the modules a virtio guest needs"
# The closure (modules.dep) of what the guest loads; every other module and all firmware go.
keep_modules=(virtio_pci virtio_blk virtio_net virtio_rng virtio_console ext4 crc32c_generic crc32c_intel autofs4 configfs)
moddir="$ROOTFS/lib/modules/$KVER"
python3 - "$moddir" "${keep_modules[@]}" <<'PY'
import os, sys
moddir, wanted = sys.argv[1], sys.argv[2:]
deps = {}
with open(os.path.join(moddir, "modules.dep")) as f:
    for line in f:
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
by_name = {}
for path in deps:
    name = os.path.basename(path).split(".ko")[0].replace("-", "_")
    by_name[name] = path
keep, todo = set(), [by_name[n.replace("-", "_")] for n in wanted if n.replace("-", "_") in by_name]
while todo:
    path = todo.pop()
    if path not in keep:
        keep.add(path)
        todo.extend(deps.get(path, []))
for path in deps:
    if path not in keep:
        os.unlink(os.path.join(moddir, path))
for dirpath, dirnames, filenames in os.walk(os.path.join(moddir, "kernel"), topdown=False):
    if not os.listdir(dirpath):
        os.rmdir(dirpath)
print("kept %d of %d modules: %s" % (len(keep), len(deps), " ".join(sorted(os.path.basename(p) for p in keep))))
PY
in_root depmod "$KVER" >>"$LOG" 2>&1
# No udev in the initramfs: devtmpfs gives /dev/vda once the listed modules are loaded, and
# udev's coldplug there costs ~8 s under TCG.
rm -f "$ROOTFS"/usr/share/initramfs-tools/hooks/udev "$ROOTFS"/usr/share/initramfs-tools/scripts/*/udev
in_root update-initramfs -u -k "$KVER" >>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "update-initramfs failed"; }

step "guest configuration (network, ssh key, fast boot)"
# Network: QEMU user networking, fixed addresses (no DHCP wait).
mkdir -p "$ROOTFS/etc/systemd/network"
cat >"$ROOTFS/etc/systemd/network/10-qemu-user.network" <<'CFG'
[Match]
Name=en* eth*

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
DNS=10.0.2.3
LinkLocalAddressing=no
IPv6AcceptRA=no
CFG
echo "nameserver 10.0.2.3" >"$ROOTFS/etc/resolv.conf"
echo "numa-guest" >"$ROOTFS/etc/hostname"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOTFS/etc/hosts"
: >"$ROOTFS/etc/machine-id"
rm -f "$ROOTFS/var/lib/dbus/machine-id"
# No fstab entry: the kernel mounts /dev/vda read-write (root=/dev/vda rw); no fsck at boot.
printf '# root is /dev/vda from the kernel command line\n' >"$ROOTFS/etc/fstab"

# SSH: root with the generated key only.
ssh-keygen -q -t ed25519 -N '' -C "nodeops-numa-drift-vm-$KEY" -f "$WORK/id_ed25519"
install -d -m 0700 "$ROOTFS/root/.ssh"
install -m 0600 "$WORK/id_ed25519.pub" "$ROOTFS/root/.ssh/authorized_keys"
cat >"$ROOTFS/etc/ssh/sshd_config.d/numa-drift.conf" <<'CFG'
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
AllowTcpForwarding yes
GatewayPorts no
ClientAliveInterval 10
CFG

# Ansible's module runs: the guests' Python keeps the compiled code of Ansible's own module_utils
# between runs (ansiballz_pycache.py; under TCG compiling them is about half of every module run).
site=$(in_root python3 -c 'import site; print(site.getsitepackages()[0])')
install -d "$ROOTFS$site"
install -m 0644 "$PYCACHE_FILE" "$ROOTFS$site/nd_ansiballz_pycache.py"
echo 'import nd_ansiballz_pycache; nd_ansiballz_pycache.install()' >"$ROOTFS$site/nd-ansiballz-pycache.pth"
in_root python3 -c 'import compileall, sys; sys.exit(not compileall.compile_file(sys.argv[1], quiet=1))' \
  "$site/nd_ansiballz_pycache.py" >>"$LOG" 2>&1

# Journal in memory only; small.
mkdir -p "$ROOTFS/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=16M\n' >"$ROOTFS/etc/systemd/journald.conf.d/numa-drift.conf"

# Boot straight to multi-user with only what SSH and the kubelet stand-in need.
in_root systemctl set-default multi-user.target >>"$LOG" 2>&1
in_root systemctl enable systemd-networkd.service ssh.service >>"$LOG" 2>&1
for unit in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service \
  e2scrub_all.timer e2scrub_all.service e2scrub_reap.service fstrim.timer dpkg-db-backup.timer \
  systemd-networkd-wait-online.service systemd-timesyncd.service getty@tty1.service \
  serial-getty@ttyS0.service getty-static.service systemd-pstore.service systemd-hwdb-update.service \
  ldconfig.service systemd-journal-catalog-update.service systemd-binfmt.service \
  proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount dev-hugepages.mount dev-mqueue.mount \
  sys-kernel-debug.mount sys-kernel-tracing.mount sys-fs-fuse-connections.mount sys-kernel-config.mount \
  modprobe@configfs.service modprobe@dm_mod.service modprobe@fuse.service modprobe@loop.service \
  modprobe@drm.service modprobe@efi_pstore.service kmod-static-nodes.service \
  systemd-network-generator.service systemd-remount-fs.service systemd-sysusers.service \
  systemd-modules-load.service systemd-firstboot.service systemd-machine-id-commit.service \
  systemd-update-utmp.service systemd-update-utmp-runlevel.service; do
  in_root systemctl mask "$unit" >>"$LOG" 2>&1 || true
done

step "slimming (docs, locales, caches)"
rm -f "$ROOTFS/usr/sbin/policy-rc.d"
in_root apt-get clean >>"$LOG" 2>&1
umount "$ROOTFS/proc"
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/debconf/*-old \
  "$ROOTFS"/var/log/* "$ROOTFS"/tmp/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
  "$ROOTFS"/usr/share/lintian "$ROOTFS"/usr/share/locale/*/ "$ROOTFS"/lib/firmware "$ROOTFS"/usr/lib/firmware
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$ROOTFS/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
# The guest boots the kernel and initrd from the host; /boot keeps them for the record only.

step "ext4 root ($DISK_MB MiB virtual) with mkfs.ext4 -d, then qcow2"
cp "$ROOTFS/boot/vmlinuz-$KVER" "$WORK/vmlinuz"
cp "$ROOTFS/boot/initrd.img-$KVER" "$WORK/initrd.img"
truncate -s "${DISK_MB}M" "$WORK/rootfs.raw"
mkfs.ext4 -q -F -L numa-root -E root_owner=0:0 -d "$ROOTFS" "$WORK/rootfs.raw" >>"$LOG" 2>&1 \
  || { tail -n 30 "$LOG" >&2; die "mkfs.ext4 -d failed"; }
qemu-img convert -O qcow2 "$WORK/rootfs.raw" "$WORK/rootfs.qcow2"
rm -f "$WORK/rootfs.raw"

seconds=$(($(date +%s) - started))
rootfs_mb=$(du -sm "$ROOTFS" | cut -f1)
qcow2_mb=$(du -m "$WORK/rootfs.qcow2" | cut -f1)
initrd_kb=$(du -k "$WORK/initrd.img" | cut -f1)
cat >"$WORK/image.json" <<JSON
{
  "key": "$KEY",
  "suite": "$SUITE",
  "kernel": "$KVER",
  "packages": "$(printf '%s ' "${STAGE1[@]}" "${STAGE2[@]}" | sed 's/ $//')",
  "build_seconds": $seconds,
  "rootfs_mb": $rootfs_mb,
  "qcow2_mb": $qcow2_mb,
  "initrd_kb": $initrd_kb,
  "built_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
JSON
mkdir -p "$OUT"
for f in rootfs.qcow2 vmlinuz initrd.img id_ed25519 id_ed25519.pub build.log; do mv "$WORK/$f" "$OUT/"; done
mv "$ROOTFS" "$OUT/rootfs"
mv "$WORK/image.json" "$OUT/image.json"   # last: marks the image ready
step "ready: $OUT (rootfs ${rootfs_mb} MB, qcow2 ${qcow2_mb} MB, initrd ${initrd_kb} kB)"

# Prune images of other keys (older package lists or scripts); keep this one.
for old in "$CACHE_ROOT"/*/; do
  old=${old%/}
  [ "$old" = "$OUT" ] || [ ! -f "$old/image.json" ] || { say "pruning old image $old"; rm -rf "$old"; }
done
echo "$OUT"
