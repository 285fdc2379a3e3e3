#!/usr/bin/env bash
# Runs one of the checkout's scripts against Debian 13 (trixie): libtorch 2.6 with LLVM-enabled
# NNC, gcc 14, python3-torch 2.6, torchvision 0.21. Runs as root on a Debian host:
#   1. makes a Debian 13 root with debootstrap from the host's Debian mirror, once: it is kept in
#      $TSREPRO_DEBIAN13_ROOT (default /var/cache/tsrepro/debian13) for later runs on this machine;
#   2. copies the checkout (tracked and untracked, not ignored: what a clone would hold) into the
#      root, leaving files that did not change untouched, so the build kept there is incremental;
#   3. runs the script inside it, from the checkout's copy, with the build in /tsrepro/build.
#
#   scripts/in-debian13.sh scripts/test.sh [CTEST ARGS]   # what scripts/test-debian13.sh does
#   scripts/in-debian13.sh scripts/corpus.sh resnet18     # the corpus on libtorch 2.6
# Exits with the inner run's status.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"

root="${TSREPRO_DEBIAN13_ROOT:-/var/cache/tsrepro/debian13}"
ready_marker="$root/.tsrepro-root-ready"

die() { echo "in-debian13: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: scripts/in-debian13.sh SCRIPT [ARGS...]"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"

# The mirror this host's apt already uses: the Debian archive, reachable from here.
host_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

host_tools=()
command -v debootstrap >/dev/null || host_tools+=(debootstrap)
command -v rsync >/dev/null || host_tools+=(rsync)
if [ ${#host_tools[@]} -gt 0 ]; then
  echo "in-debian13: installing ${host_tools[*]} on the host"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${host_tools[@]}" >/dev/null
fi

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9  # one run at a time owns the root and its mounts

# A root is made beside its final place and moved there whole: a killed debootstrap leaves only
# the .partial folder, which the next run starts again.
if [ ! -f "$ready_marker" ]; then
  [ ! -e "$root" ] || die "$root exists but was never finished (no $ready_marker): remove it by hand"
  mirror=$(host_mirror)
  echo "in-debian13: debootstrap trixie from $mirror into $root"
  rm -rf "$root.partial"
  debootstrap --variant=minbase trixie "$root.partial" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    die "debootstrap failed: see $root.debootstrap.log"
  touch "$root.partial/.tsrepro-root-ready"
  mv "$root.partial" "$root"
fi

# The checkout, as a clone holds it, into a staging folder; then into the root's copy by content.
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
git -C "$checkout" ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar -C "$checkout" --null -T - -cf - | tar -C "$staging" -xf -
mkdir -p "$root/tsrepro/src"
# -c: compare contents; no -t: an unchanged file keeps its time, so make rebuilds only what changed.
rsync -rlc --delete "$staging/" "$root/tsrepro/src/"

cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true  # apt inside resolves as the host does

# /proc, /sys and /dev are mounted in a private mount namespace: they vanish with it, however the
# run ends, and no other user of the root or of the host sees them.
echo "in-debian13: $* in the Debian 13 root ($root)"
unshare --mount --propagation private bash -euc '
  root=$1; shift
  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro sysfs "$root/sys"
  mount --rbind /dev "$root/dev"
  exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CI="${CI:-}" TSREPRO_BUILD_DIR=/tsrepro/build \
    TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT="${TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT:-}" \
    bash -c "cd /tsrepro/src && exec \"\$@\"" in-debian13 "$@"
' in-debian13 "$root" "$@"
