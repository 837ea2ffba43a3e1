#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# in-root.sh ROOT CMD [ARG...]: run CMD inside a Debian root made by
# make-chroot.sh (trixie: Slurm 24.11; sid: Slurm 26.05), with this checkout,
# and the versions cache (RDZV_VERSIONS_CACHE, default
# /var/cache/spank-rdzv: the Slurm headers of tests/versions/slurm-headers.sh)
# mounted at the same paths, so the same commands (make check, tests/*.t) run
# there unchanged.
#
# The root is entered with pivot_root in a private mount namespace rather
# than chroot: the kernel refuses user namespaces to a process inside a
# chroot, and containers (enroot) need them (as
# measured on the Debian test roots). /proc, /sys and /dev (with /dev/pts and
# /dev/shm) are the host's: same PID and network namespaces, so a cluster
# started inside needs its own ports and state directory (tests/lib/e2e.sh
# picks them from RDZV_SLURM). /etc/hosts is the host's too, so names
# (the machine's own, the test nodes') resolve alike inside and out. Mounts
# vanish with the namespace; the root's other files (its /tmp) persist.
#
# CMD runs in the checkout, as root, with a clean environment plus the
# variables named in RDZV_PASS_ENV (space separated) and RDZV_SLURM (the
# root's Slurm: 24.11 unless the caller's RDZV_SLURM says 26.05).
#
# in-root.sh --plain ROOT CMD [ARG...]: only enter the root: no host
# /etc/hosts, no cluster lock, no RDZV_SLURM; the root keeps its own
# /etc/hosts.
set -eu
plain=0
[ "${1:-}" = --plain ] && { plain=1; shift; }
[ $# -ge 2 ] || { echo "usage: $0 [--plain] ROOT CMD [ARG...]" >&2; exit 2; }
root=$(cd "$1" && pwd)
shift
[ -f "$root/.complete" ] || { echo "in-root.sh: $root is not a complete root (tests/versions/make-chroot.sh)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "in-root.sh: must run as root (mount namespace)" >&2; exit 1; }
top=$(cd "$(dirname "$0")/../.." && pwd)
shared= # the suite reads nothing outside the repository
pass=()
slurm=24.11
[ "${RDZV_SLURM:-}" = 26.05 ] && slurm=26.05
[ $plain = 1 ] || pass+=(RDZV_SLURM=$slurm)
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
pass+=(RDZV_VERSIONS_CACHE=$cache)
for v in ${RDZV_PASS_ENV:-}; do
	[ -n "${!v+x}" ] && pass+=("$v=${!v}")
done

# Runs in the new mount namespace: arguments are root top shared plain slurm
# cache, then CMD.
enter='
set -eu
root=$1 top=$2 shared=$3 plain=$4 slurm=$5 cache=$6
shift 6
mount --rbind "$root" "$root"
for d in proc sys dev; do mount --rbind "/$d" "$root/$d"; done
if [ "$plain" = 0 ]; then
	mount --bind /etc/hosts "$root/etc/hosts"
	# One cluster of a version at a time on this machine, whichever root
	# starts it: they share ports and the PID namespace, so the cluster
	# lock of tests/lib/e2e.sh is the same host file in every root.
	touch "/tmp/rdzv-cluster-$slurm.lock" "$root/tmp/rdzv-cluster-$slurm.lock"
	mount --bind "/tmp/rdzv-cluster-$slurm.lock" "$root/tmp/rdzv-cluster-$slurm.lock"
fi
mkdir -p "$root$cache" && mount --bind "$cache" "$root$cache"
mkdir -p "$root$top" && mount --bind "$top" "$root$top"
if [ -n "$shared" ]; then mkdir -p "$root$shared" && mount --bind "$shared" "$root$shared"; fi
mkdir -p "$root/.oldroot"
cd "$root"
pivot_root . .oldroot
cd /
umount -l /.oldroot
cd "$top"
exec "$@"
'
exec unshare -m --propagation private bash -c "$enter" in-root "$root" "$top" "$shared" "$plain" "$slurm" "$cache" \
	env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/root \
	LANG=C.UTF-8 TERM="${TERM:-dumb}" "${pass[@]}" "$@"
