#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm-headers.sh SUITE: print a directory DIR holding the public Slurm
# headers of that Debian suite's libslurm-dev (DIR/include/slurm/spank.h,
# slurm.h, slurm_errno.h, slurmdb.h, slurm_version.h), the layout configure's
# --with-slurm=DIR expects. DIR/VERSION names the package version.
#
#   bullseye  Slurm 20.11 (below the supported range: configure must refuse it)
#   bookworm  Slurm 22.05    trixie  Slurm 24.11    sid  Slurm 26.05
#
# The package comes from `apt-get download` through a private apt
# configuration (its own sources file, lists, cache and an empty dpkg
# status): the host's apt sources and state are never read or changed. The
# mirror is the one this machine (or this debootstrap'd root) already uses,
# from /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; the
# suite's Release is verified against Debian's archive keyring. Its
# Valid-Until is not checked: the mirror this machine is given serves dated
# snapshots whose Release has expired (the host's apt.conf.d says the same,
# Acquire::Check-Valid-Until "false"; a debootstrap'd root does not).
#
# Cached under $RDZV_VERSIONS_CACHE/headers (default /var/cache/spank-rdzv),
# keyed by suite and package version, under a per-suite flock: a second call
# prints the cached DIR without touching the network. RDZV_HEADERS_REFRESH=1
# asks the mirror again (a new package version gets a new DIR).
#
# Exit status: 0 DIR printed; 2 usage; 3 the mirror could not be reached or
# does not have the package (the tests skip on 3, or fail under CI=true);
# 1 anything else.
set -eu
me=slurm-headers.sh
case ${1:-} in
bullseye | bookworm | trixie | forky | sid) suite=$1 ;;
*) echo "usage: $me bullseye|bookworm|trixie|forky|sid" >&2; exit 2 ;;
esac
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}/headers
link=$cache/$suite

cached() { # print the cached DIR of this suite, if complete
	local d
	[ "${RDZV_HEADERS_REFRESH:-0}" = 1 ] && return 1
	d=$(readlink "$link" 2>/dev/null) || return 1
	[ -f "$cache/$d/.complete" ] || return 1
	echo "$cache/$d"
}
cached && exit 0

mkdir -p "$cache"
exec 9>"$cache/.$suite.lock"
flock 9
cached && exit 0

for t in apt-get apt-cache dpkg-deb; do
	command -v $t >/dev/null || { echo "$me: no $t (Debian's apt, dpkg)" >&2; exit 1; }
done

# The mirror: the first non-security URI of the host's (or root's) sources.
mirror=${RDZV_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		mirror=$(sed -n 's/^URIs:[[:space:]]*//p' "$f" | tr ' ' '\n' | grep -v -- '-security' | grep -m1 .) || true
		[ -n "$mirror" ] && break
	done
fi
if [ -z "$mirror" ]; then
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		mirror=$(awk '$1 == "deb" { u = ($2 ~ /^\[/) ? "" : $2; if (u == "") for (i = 3; i <= NF; i++) if ($(i - 1) ~ /\]$/) { u = $i; break }
			if (u != "" && u !~ /-security/) { print u; exit } }' "$f")
		[ -n "$mirror" ] && break
	done
fi
[ -n "$mirror" ] || { echo "$me: no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list" >&2; exit 3; }
keyring=${RDZV_DEBIAN_KEYRING:-}
if [ -z "$keyring" ]; then
	for k in /usr/share/keyrings/debian-archive-keyring.gpg /usr/share/keyrings/debian-archive-keyring.pgp; do
		[ -f "$k" ] && { keyring=$k; break; }
	done
fi
[ -n "$keyring" ] || { echo "$me: no Debian archive keyring (debian-archive-keyring)" >&2; exit 1; }

work=$(mktemp -d "$cache/.work-$suite.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
: >"$work/status"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$work/sources.list"
apt=(-q -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" -o Dir::State::status="$work/status"
	-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
	-o Dir::Etc::Trusted=/dev/null -o Dir::Etc::TrustedParts=/dev/null
	-o Acquire::Languages=none -o APT::Sandbox::User=root
	-o Acquire::Check-Valid-Until=false)
if ! apt-get "${apt[@]}" update >"$work/update.log" 2>&1 || grep -q '^[WE]:' "$work/update.log"; then
	sed 's/^/  /' "$work/update.log" >&2
	echo "$me: apt-get update of $suite from $mirror failed" >&2
	# Unreachable is 3; anything else (a bad signature) is an error.
	grep -Eqi 'Could not resolve|Temporary failure|Failed to fetch|Could not connect|Unable to connect|Connection (failed|timed out|refused)|Network is unreachable' "$work/update.log" && exit 3
	exit 1
fi
ver=$(apt-cache "${apt[@]}" show --no-all-versions libslurm-dev 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
[ -n "$ver" ] || { echo "$me: $suite on $mirror has no libslurm-dev" >&2; exit 3; }
dir=$suite-$(printf '%s' "$ver" | tr -c 'A-Za-z0-9.+-' '_')
if [ ! -f "$cache/$dir/.complete" ]; then
	if ! (cd "$work/deb" && apt-get "${apt[@]}" download "libslurm-dev=$ver") >"$work/download.log" 2>&1; then
		sed 's/^/  /' "$work/download.log" >&2
		echo "$me: apt-get download libslurm-dev=$ver ($suite) failed" >&2
		exit 3
	fi
	deb=$(ls "$work"/deb/libslurm-dev_*.deb)
	dpkg-deb -x "$deb" "$work/x"
	[ -f "$work/x/usr/include/slurm/spank.h" ] || { echo "$me: ${deb##*/} has no usr/include/slurm/spank.h" >&2; exit 1; }
	rm -rf "$cache/$dir"
	mkdir "$work/out"
	mv "$work/x/usr/include" "$work/out/include"
	printf 'libslurm-dev %s (%s, %s)\n' "$ver" "$suite" "$mirror" >"$work/out/VERSION"
	touch "$work/out/.complete"
	mv "$work/out" "$cache/$dir"
fi
ln -sfn "$dir" "$cache/.$suite.new"
mv -T "$cache/.$suite.new" "$link"
echo "$cache/$dir"
