#!/bin/bash
# make-root.sh: the Debian 13 root of tests/versions/make-chroot.sh plus
# enroot 4.1.2 and pyxis 0.24.0 built inside it from ../shared/containers/,
# cached on this machine as a root of its own (the shared root is copied,
# never changed), keyed by that root, the two tarballs' checksums, the
# runtime package list and this script. A second run prints the path and
# costs nothing. Prints the root.
#
#   RDZV_VERSIONS_CACHE  cache root (default /var/cache/spank-rdzv)
#   RDZV_CONTAINERS_SRC  folder of the tarballs (default ../shared/containers)
#
# Facts behind the recipe (../shared/containers/README.md): enroot's
# `git archive` lacks its submodules; FORCE_GLIBC=1 skips musl (glibc 2.41
# here has strlcpy), Debian's makeself stands in for the makeself submodule,
# the root's kernel headers for linux-headers. pyxis builds against the
# root's libslurm-dev (Slurm 24.11): a SPANK plugin loads only into the
# major it was built for.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
src=${RDZV_CONTAINERS_SRC:-$top/../shared/containers}
enroot_tgz=$src/enroot-4.1.2.tar.gz
pyxis_tgz=$src/pyxis-0.24.0.tar.gz
pkgs=(
	squashfs-tools jq parallel zstd pigz libcap2-bin makeself curl gawk file  # enroot's runtime
	squashfuse fuse-overlayfs                                                # pyxis use_squashfuse=1
	libcap-dev                                                               # enroot's utilities
)
die() { echo "make-root.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (chroot, mounts)"
[ -f "$enroot_tgz" ] && [ -f "$pyxis_tgz" ] || die "enroot/pyxis tarballs not found in $src"
base=$(bash "$top/tests/versions/make-chroot.sh") || die "no Debian 13 root (tests/versions/make-chroot.sh)"
key=$( { basename "$base"; sha256sum "$enroot_tgz" "$pyxis_tgz" | cut -d' ' -f1; printf '%s\n' "${pkgs[@]}"; cat "$0"; } \
	| sha256sum | cut -c1-16)
root=$cache/containers-$key
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi
exec 8>"$cache/.containers.lock"
flock 8
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi
log=$root.log
rm -rf "$root" "$root.partial"
t0=$(date +%s)
cp -a --reflink=auto "$base" "$root.partial"
rm -f "$root.partial/.complete"
cp "$enroot_tgz" "$pyxis_tgz" "$root.partial/usr/src/"
cp -L /etc/resolv.conf "$root.partial/etc/resolv.conf"

# Runs inside the copy (a chroot is enough to build; running containers
# needs pivot_root, see tests/versions/in-root.sh).
cat > "$root.partial/usr/src/build-containers.sh" <<BUILD
set -eux
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends ${pkgs[*]}
cd /usr/src
rm -rf enroot-4.1.2 pyxis-0.24.0
tar xzf enroot-4.1.2.tar.gz
tar xzf pyxis-0.24.0.tar.gz
cd /usr/src/enroot-4.1.2
install -m 755 /usr/bin/makeself deps/makeself/makeself.sh
cp /usr/share/makeself/makeself-header.sh deps/makeself/ 2>/dev/null || :
mkdir -p deps/dist/linux/include
touch deps/linux-headers/.stamp
make -j2 FORCE_GLIBC=1 prefix=/usr/local sysconfdir=/etc
make FORCE_GLIBC=1 install prefix=/usr/local sysconfdir=/etc
make FORCE_GLIBC=1 setcap prefix=/usr/local sysconfdir=/etc || :
cd /usr/src/pyxis-0.24.0
make -j2
make install prefix=/usr/local
apt-get clean
BUILD
if ! unshare -m --propagation private bash -c '
	set -e
	r=$1
	for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
	chroot "$r" bash /usr/src/build-containers.sh' build "$root.partial" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "build failed, log $log"
fi
[ -x "$root.partial/usr/local/bin/enroot" ] || die "enroot not installed (log $log)"
[ -f "$root.partial/usr/local/lib/slurm/spank_pyxis.so" ] || die "pyxis not installed (log $log)"
echo "make-root.sh: built in $(( $(date +%s) - t0 )) s" >>"$log"
touch "$root.partial/.complete"
mv "$root.partial" "$root"
echo "$root"
