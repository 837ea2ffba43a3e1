#!/bin/bash
# in-root.sh ROOT CMD [ARG...]: run CMD inside ROOT (tests/containers/make-root.sh)
# with this checkout and ../shared mounted at the same paths.
#
# pivot_root in a private mount namespace, not chroot: the kernel refuses user
# namespaces (enroot's) to a process inside a chroot (../shared/containers/
# README.md). /proc, /sys, /dev are the host's (same PID and network
# namespaces): a cluster started inside needs its own ports and state
# directory. Mounts vanish with the namespace; the root's own files (its
# /tmp, /etc/hosts, /etc/enroot) persist. The same entering as
# tests/versions/in-root.sh (issue 13), kept here so that the container
# tests do not depend on that leg's runner.
#
# CMD runs in the checkout, as root, with a clean environment plus the
# variables named in RDZV_PASS_ENV (space separated).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 ROOT CMD [ARG...]" >&2; exit 2; }
root=$(cd "$1" && pwd)
shift
[ -f "$root/.complete" ] || { echo "in-root.sh: $root is not a complete root" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "in-root.sh: must run as root (mount namespace)" >&2; exit 1; }
top=$(cd "$(dirname "$0")/../.." && pwd)
shared=$(cd "$top/../shared" 2>/dev/null && pwd) || shared=
pass=()
for v in ${RDZV_PASS_ENV:-}; do
	[ -n "${!v+x}" ] && pass+=("$v=${!v}")
done
enter='
set -eu
root=$1 top=$2 shared=$3
shift 3
mount --rbind "$root" "$root"
for d in proc sys dev; do mount --rbind "/$d" "$root/$d"; done
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
exec unshare -m --propagation private bash -c "$enter" in-root "$root" "$top" "$shared" \
	env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/root \
	LANG=C.UTF-8 TERM="${TERM:-dumb}" "${pass[@]}" "$@"
