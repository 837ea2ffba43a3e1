#!/bin/bash
# make-chroot.sh: a Debian 13 (trixie) root with Slurm 24.11, PyTorch 2.6,
# hwloc and a compiler, made with debootstrap and cached on this machine,
# keyed by its package list, so a second run costs nothing. Prints the root.
#
#   RDZV_VERSIONS_CACHE  cache root (default /var/cache/spank-rdzv)
set -eu
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
suite=trixie
pkgs=(
	slurmctld slurmd slurm-client libslurm-dev     # Slurm 24.11
	libhwloc-dev hwloc                             # binding
	python3-torch python3                          # PyTorch 2.6, real torchrun
	gcc make autoconf automake libtool pkg-config  # the plugin, built inside
	procps util-linux iproute2 ca-certificates     # pgrep, flock, ip
	valgrind                                       # 0071-0073: the hooks under valgrind on 24.11 too
	debhelper dpkg-dev fakeroot build-essential    # the Debian package (dpkg-buildpackage checks build-essential)
)
key=$(printf '%s\n' "$suite" "${pkgs[@]}" | sha256sum | cut -c1-16)
root=$cache/$suite-$key
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi
command -v debootstrap >/dev/null || {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
		|| { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
}
mkdir -p "$cache"
exec 8>"$cache/.$suite.lock"
flock 8
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi
rm -rf "$root"
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || { echo "make-chroot.sh: no Debian mirror configured" >&2; exit 1; }
log=$cache/$suite-$key.log
list=$(IFS=,; echo "${pkgs[*]}")
# Packages' maintainer scripts must not start daemons inside the root.
if ! debootstrap --variant=minbase --include="$list" "$suite" "$root" "$mirror" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "make-chroot.sh: debootstrap failed, log $log" >&2
	exit 1
fi
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
touch "$root/.complete"
echo "$root"
