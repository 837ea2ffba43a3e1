#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# configure refuses a Slurm below the supported range and names the range:
# the real configure, --with-slurm at bullseye's libslurm-dev (Slurm 20.11,
# which has no slurm_version.h: the version is read from its slurm.h, not
# from another Slurm's slurm_version.h found on the include path), must exit
# non-zero saying "supports Slurm 22.05 to 26.05"; against bookworm's 22.05
# the same configure succeeds and builds for 22.05. A Slurm newer than the
# range is built with a warning, not refused: sid's headers with a
# slurm_version.h this test writes for a 27.05 that does not exist yet.
# Headers: tests/versions/slurm-headers.sh (Debian's packages, cached); a
# mirror that cannot be reached skips, and fails under CI=true.
. "$top_srcdir/tests/lib/tap.sh"
main_build_only "it runs configure against fixed Debian headers, the same from any leg"
headers="$top_srcdir/tests/versions/slurm-headers.sh"
configure="$top_srcdir/configure"
[ -x "$configure" ] || skip_all "no $configure (autoreconf -fi first)"
# configure refuses to run in another directory once the source tree itself
# is configured.
[ -f "$top_srcdir/config.status" ] && skip_all "$top_srcdir is configured in place (configure elsewhere is refused)"
for t in apt-get dpkg-deb; do
	command -v $t >/dev/null || skip_all_missing apt "no $t: the headers are Debian's libslurm-dev, fetched with apt-get download"
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

get() { # get SUITE: print the headers' DIR, or skip (fail under CI) and return 1
	local rc=0 dir
	dir=$(bash "$headers" "$1" 2>"$tmp/herr") || rc=$?
	if [ $rc -eq 0 ]; then echo "$dir"; return 0; fi
	sed 's/^/#   /' "$tmp/herr" | tail -n 8 >&2
	if [ $rc -eq 3 ] && ! tap_ci; then
		echo "mirror unavailable, $1's libslurm-dev: $(tail -n 1 "$tmp/herr")" >"$tmp/why"
	else
		echo "${CI:+CI=$CI: }headers of $1's libslurm-dev: $(tail -n 1 "$tmp/herr") (slurm-headers.sh exit $rc)" >"$tmp/why"
	fi
	return 1
}
unavailable() { # unavailable N: N points skipped (or failed) for $tmp/why
	local i
	for ((i = 0; i < $1; i++)); do
		if grep -q '^mirror unavailable' "$tmp/why"; then skip "$(cat "$tmp/why")"; else ok 1 "$(cat "$tmp/why")"; fi
	done
}
run_configure() { # run_configure NAME PREFIX: configure in $tmp/NAME; output in $tmp/NAME.out, status in rc
	mkdir -p "$tmp/$1"
	rc=0
	(cd "$tmp/$1" && "$configure" -q --with-slurm="$2") >"$tmp/$1.out" 2>&1 || rc=$?
}
range="supports Slurm 22\.05 to 26\.05"

# Below the range: refused, naming it.
if old=$(get bullseye); then
	run_configure old "$old"
	ok $((rc == 0)) "configure --with-slurm=bullseye's libslurm-dev ($(sed 's/ (.*//' "$old/VERSION")) exits non-zero (status $rc)"
	like "$(grep 'error:' "$tmp/old.out")" "Slurm 20\.11 .*is not supported: spank-rdzv $range" \
		"the error names Slurm 20.11 and the supported range 22.05 to 26.05"
else
	unavailable 2
fi

# In the range: configured for that major, no warning.
if cur=$(get bookworm); then
	run_configure cur "$cur"
	ok $rc "configure --with-slurm=bookworm's libslurm-dev ($(sed 's/ (.*//' "$cur/VERSION")) succeeds (status $rc)"
	[ $rc -eq 0 ] || sed 's/^/#   /' "$tmp/cur.out" | tail -n 10
	is "$(sed -n 's/^SLURM_MAJOR = //p' "$tmp/cur/Makefile" 2>/dev/null)|$(grep -c 'tested range' "$tmp/cur.out")" "22.05|0" \
		"the build is for Slurm 22.05, with no out-of-range warning"
else
	unavailable 2
fi

# Above the range: a warning naming the range, and the build goes on.
if new=$(get sid); then
	mkdir -p "$tmp/next/include/slurm"
	for h in "$new"/include/slurm/*.h; do ln -s "$h" "$tmp/next/include/slurm/"; done
	rm -f "$tmp/next/include/slurm/slurm_version.h"
	sed 's/^#define SLURM_VERSION_NUMBER .*/#define SLURM_VERSION_NUMBER 0x1b0500/' \
		"$new/include/slurm/slurm_version.h" >"$tmp/next/include/slurm/slurm_version.h"
	run_configure newer "$tmp/next"
	ok $rc "configure against a Slurm 27.05 (sid's headers, SLURM_VERSION_NUMBER 0x1b0500) succeeds (status $rc)"
	like "$(grep 'WARNING:' "$tmp/newer.out")" "Slurm 27\.05 is newer than the tested range, Slurm 22\.05 to 26\.05: building anyway" \
		"with a warning naming the tested range 22.05 to 26.05"
else
	unavailable 2
fi
done_testing
