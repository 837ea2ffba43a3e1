#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make-chroot.sh [SUITE]: a Debian root with that suite's Slurm, PyTorch,
# hwloc and a compiler, made with debootstrap and cached on this machine,
# keyed by its package list, so a second run costs nothing. Prints the root.
#
#   trixie (default)  Debian 13: Slurm 24.11, PyTorch 2.6, gcc 14
#   sid               Debian unstable: Slurm 26.05, PyTorch 2.14, gcc 16,
#                     plus Apptainer, crun and squashfs-tools (the
#                     container tests, tests/containers/)
#
#   RDZV_VERSIONS_CACHE  cache root (default /var/cache/spank-rdzv)
set -eu
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
suite=${1:-trixie}
pkgs=(
	slurmctld slurmd slurm-client libslurm-dev     # the suite's Slurm
	libhwloc-dev hwloc                             # binding
	python3-torch python3                          # the suite's PyTorch, real torchrun
	gcc make autoconf automake libtool pkg-config  # the plugin, built inside
	procps util-linux iproute2 ca-certificates     # pgrep, flock, ip
	valgrind                                       # 0071-0073: the hooks under valgrind
	debhelper dpkg-dev fakeroot build-essential    # the Debian package (dpkg-buildpackage checks build-essential)
	rpm                                            # 0093: the RPM spec against this suite's headers
)
case $suite in
trixie) ;;
sid) pkgs+=(apptainer crun squashfs-tools) ;;    # Apptainer 1.4.5 (tests/containers/), Slurm's OCI runtime
*) echo "make-chroot.sh: unknown suite $suite (trixie or sid)" >&2; exit 2 ;;
esac
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
