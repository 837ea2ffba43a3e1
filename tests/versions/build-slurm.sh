#!/bin/bash
# build-slurm.sh: build Slurm from ../shared/slurm/src/slurm-*.tar.gz into a
# prefix cached on this machine, keyed by the tarball's checksum, so a second
# run costs nothing. Prints the prefix on stdout.
#
#   RDZV_VERSIONS_CACHE  cache root (default /var/cache/spank-rdzv)
#   RDZV_SLURM_TARBALL   tarball (default the newest in ../shared/slurm/src)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
tarball=${RDZV_SLURM_TARBALL:-$(ls "$top"/../shared/slurm/src/slurm-*.tar.gz 2>/dev/null | sort -V | tail -n 1)}
[ -f "$tarball" ] || { echo "build-slurm.sh: no Slurm source tarball (../shared/slurm/src)" >&2; exit 1; }
sum=$(sha256sum "$tarball" | cut -c1-16)
prefix=$cache/slurm-$sum
if [ -x "$prefix/sbin/slurmctld" ] && [ -f "$prefix/.complete" ]; then
	echo "$prefix"
	exit 0
fi
# configure stops without munge even when auth/none is used.
for p in libmunge-dev build-essential; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' \
		|| { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }; }
done
mkdir -p "$cache"
exec 8>"$cache/.slurm-build.lock"
flock 8
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
src=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$src"' EXIT
tar -xzf "$tarball" -C "$src"
cd "$src"/slurm-*
log=$cache/slurm-$sum.build.log
{
	./configure --prefix="$prefix" --sysconfdir="$prefix/etc" --disable-debug \
		--without-rpath --disable-x11 --without-pmix --without-ucx --without-nvml \
		--without-rsmi --without-hdf5 --without-lua --without-yaml --without-jwt \
		--without-http-parser --without-libcurl --without-freeipmi --without-rdkafka
	make -j"$(nproc)"
	make install
} >"$log" 2>&1 || { tail -n 40 "$log" >&2; echo "build-slurm.sh: build failed, log $log" >&2; exit 1; }
touch "$prefix/.complete"
echo "$prefix"
