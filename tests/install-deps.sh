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
# Debian's node_exporter and promtool (the metrics test, tests/0117):
# unpacked from their packages into a cache, never installed, so that no
# exporter or Prometheus server starts on the machine (admins run the suite
# on real nodes). tests/0117 finds them there.
prom_cache=${RDZV_PROM_CACHE:-/var/cache/spank-rdzv/prometheus}
prom_ok() { [ -x "$prom_cache/usr/bin/prometheus-node-exporter" ] && [ -x "$prom_cache/usr/bin/promtool" ]; }
[ ${#missing[@]} -eq 0 ] && prom_ok && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing ${missing[*]:-} (and $prom_cache); run as root to install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps.sh: installing ${missing[*]}"
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
	# Debian starts the packaged daemons; the tests run their own cluster.
	for s in slurmctld slurmd munge; do
		systemctl stop "$s" >/dev/null 2>&1 || service "$s" stop >/dev/null 2>&1 || true
	done
fi
if ! prom_ok; then
	echo "install-deps.sh: unpacking prometheus-node-exporter and prometheus (promtool) into $prom_cache"
	d=$(mktemp -d)
	if ! (cd "$d" && apt-get download -qq prometheus-node-exporter prometheus >/dev/null 2>&1); then
		apt-get update -qq
		(cd "$d" && apt-get download -qq prometheus-node-exporter prometheus >/dev/null)
	fi
	mkdir -p "$prom_cache"
	for deb in "$d"/*.deb; do dpkg -x "$deb" "$prom_cache"; done
	rm -rf "$d"
	prom_ok || { echo "install-deps.sh: no node_exporter or promtool in $prom_cache" >&2; exit 1; }
fi
exit 0
