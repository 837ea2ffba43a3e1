#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every fuzz target's seed corpus and every recorded crash (tests/fuzz/
# regressions/TARGET/) replays clean in this build, with this build's
# compiler and flags (so under ASan+UBSan in the sanitizer build): a fixed
# bug stays fixed without clang or libFuzzer. Targets are picked up from
# tests/fuzz/fuzz-*.c; each is linked with tests/fuzz/replay-main.c.
. "$top_srcdir/tests/lib/tap.sh"
host_leg_only "the replay is of the parsers alone, and the host's sanitizer build replays them under ASan and UBSan"

mk=$top_builddir/Makefile
lib=$top_builddir/lib/.libs/librdzv.a
pflib=$top_builddir/helpers/preflight/.libs/libpreflight.a
incs="-I$top_srcdir/helpers/preflight"
for d in "$top_srcdir"/lib/*/; do incs="$incs -I${d%/}"; done
[ -f "$mk" ] || skip_all "no configured build in $top_builddir"
[ -f "$lib" ] || skip_all "lib/librdzv.la not built"
# configure's substitutions, as written into the Makefile
var() { sed -n "s/^$1 = //p" "$mk" | head -1; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cc=$(var CC)
cflags="$(var CFLAGS) $(var WARN_CFLAGS) $(var SAN_CFLAGS)"
ldflags="$(var SAN_LDFLAGS)"
libs=$(var HWLOC_LIBS)
fuzz=$top_srcdir/tests/fuzz

for src in "$fuzz"/fuzz-*.c; do
	[ -f "$src" ] || continue
	t=$(basename "$src" .c)
	name=${t#fuzz-}
	# shellcheck disable=SC2086
	if ! $cc $cflags -I"$top_builddir" $incs -I"$fuzz" "$fuzz/replay-main.c" "$src" \
		"$pflib" "$lib" $ldflags $libs -o "$work/$t" >"$work/$t.build" 2>&1; then
		ok 1 "$t builds warning-free with the project's flags"
		sed 's/^/# /' "$work/$t.build" | head -20
		continue
	fi
	ok 0 "$t builds warning-free with the project's flags"
	dirs=
	for d in "$fuzz/corpus/$name" "$fuzz/regressions/$name"; do
		[ -d "$d" ] && dirs="$dirs $d"
	done
	if [ -z "$dirs" ]; then
		ok 1 "$t has a seed corpus in tests/fuzz/corpus/$name"
		continue
	fi
	# shellcheck disable=SC2086
	n=$("$work/$t" $dirs 2>"$work/$t.err")
	rc=$?
	ok "$rc" "$t: ${n:-0} corpus and regression inputs replay clean"
	[ "$rc" -eq 0 ] || tail -n 20 "$work/$t.err" | sed 's/^/# /'
done
done_testing
