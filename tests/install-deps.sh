#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# install-deps.sh: install what a fresh Debian 12 machine lacks to build
# spank-rdzv and run every test (as root, through apt-get). Idempotent: does
# nothing when everything is there. Used by the README's two commands.
set -eu
pkgs=(
	build-essential autoconf automake libtool pkg-config   # build
	libslurm-dev libhwloc-dev hwloc                        # plugin dependencies
	slurmctld slurmd slurm-client                          # the local test cluster
	python3-torch                                          # real PyTorch ranks (gloo)
	clang libclang-rt-14-dev valgrind cppcheck             # fuzzing, sanitizers, analysis
	procps util-linux iproute2 python3                     # pgrep, flock, ip
	debhelper dpkg-dev fakeroot rpm                        # packages (deb and rpm)
	debootstrap                                            # version legs: Debian trixie and sid roots
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
# Debian starts the packaged daemons; the tests run their own cluster.
for s in slurmctld slurmd munge; do
	systemctl stop "$s" >/dev/null 2>&1 || service "$s" stop >/dev/null 2>&1 || true
done
exit 0
