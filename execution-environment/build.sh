#!/usr/bin/env bash
# Build the execution environment of execution-environment.yml from this checkout, with no Galaxy:
#
#   EE_BASE_IMAGE=<your base image> bash execution-environment/build.sh -t numa-drift-ee:0.1.0 [ansible-builder build options]
#
# 1. `ansible-galaxy collection build` of this checkout into execution-environment/collections/ (the tarball
#    requirements.yml names);
# 2. kubernetes.core: the copy installed on this machine (`ansible-galaxy collection list kubernetes.core`, e.g.
#    from the `ansible` package on PyPI) into execution-environment/collections/kubernetes.core;
# 3. `ansible-builder build -f execution-environment.yml -c context --build-arg EE_BASE_IMAGE=...` in
#    execution-environment/, with the options given to this script appended (-t, --container-runtime,
#    --build-arg, --extra-build-cli-args, ...).
#
# EE_BASE_IMAGE: an image of your registry with Python >= 3.12 and pip (your organisation's EE base, an
# ee-minimal image); unset, images.base_image.name of execution-environment.yml is used unless it is still
# the placeholder. Needs ansible-core and ansible-builder (python3 -m pip install ansible ansible-builder) and
# podman or docker. docs/awx.md, "Execution environment".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CHECKOUT=$(dirname "$HERE")
COLLECTIONS="$HERE/collections"

say() { printf 'build.sh: %s\n' "$*" >&2; }
die() {
  printf 'build.sh: ERROR: %s\n' "$*" >&2
  exit 2
}

# The base image: EE_BASE_IMAGE, else the definition's line unless it is the placeholder (a .invalid name).
base_args=()
if [ -n "${EE_BASE_IMAGE:-}" ]; then
  case "$EE_BASE_IMAGE" in
    *.invalid/* | *.invalid) die "EE_BASE_IMAGE=$EE_BASE_IMAGE is a placeholder: set it to your base image (Python >= 3.12 with pip)" ;;
  esac
  base_args=(--build-arg "EE_BASE_IMAGE=$EE_BASE_IMAGE")
elif grep -Eq '^ *name: *[^ #]*\.invalid/' "$HERE/execution-environment.yml"; then
  die "no base image: set EE_BASE_IMAGE to an image of your registry with Python >= 3.12 and pip (your \
organisation's EE base or an ee-minimal image), e.g.
  EE_BASE_IMAGE=registry.example.com/ansible/ee-minimal:latest bash execution-environment/build.sh -t numa-drift-ee:0.1.0
or replace images.base_image.name in $HERE/execution-environment.yml"
fi

for tool in ansible-galaxy ansible-builder; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed: python3 -m pip install ansible ansible-builder"
done

mkdir -p "$COLLECTIONS"
rm -rf "$COLLECTIONS"/nodeops-numa_drift-*.tar.gz "$COLLECTIONS/kubernetes.core"

# 1. This collection, built from this checkout.
say "ansible-galaxy collection build $CHECKOUT"
ansible-galaxy collection build --force --output-path "$COLLECTIONS" "$CHECKOUT" >&2
tarball=$(cd "$COLLECTIONS" && ls nodeops-numa_drift-*.tar.gz)
grep -q "name: collections/$tarball\$" "$HERE/requirements.yml" \
  || die "requirements.yml does not name collections/$tarball (the version of galaxy.yml): update it"

# 2. kubernetes.core as installed here (the first one ansible-galaxy lists is the one Ansible uses).
core=$(ansible-galaxy collection list kubernetes.core 2>/dev/null \
  | awk '/^# /{path=$2} $1=="kubernetes.core"{print path "/kubernetes/core"; exit}') || true
[ -n "$core" ] && [ -f "$core/MANIFEST.json" ] \
  || die "kubernetes.core is not installed on this machine: python3 -m pip install ansible (it ships kubernetes.core), or
  ansible-galaxy collection install kubernetes.core (Galaxy or your Automation Hub)"
say "kubernetes.core from $core"
cp -R "$core" "$COLLECTIONS/kubernetes.core"
find "$COLLECTIONS/kubernetes.core" -name __pycache__ -type d -prune -exec rm -rf {} +

# 3. The image.
cd "$HERE"
command=(ansible-builder build -f execution-environment.yml -c context ${base_args[@]+"${base_args[@]}"} "$@")
say "${command[*]}"
exec "${command[@]}"
