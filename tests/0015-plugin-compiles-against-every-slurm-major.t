#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The compile matrix: every source of rdzv.so that includes a Slurm header
# (spank/*.c; lib/ includes none, checked first) compiles with the build's
# warnings and -Werror against the public headers of every Slurm major
# Debian packages: bookworm's 22.05, trixie's 24.11 and sid's 26.05, each
# suite's own libslurm-dev (tests/versions/slurm-headers.sh: apt-get download
# through a private apt configuration, dpkg-deb -x, cached), each with the
# HAVE_DECL_* answers configure would give for that major. No suite packages
# 23.x or 25.x: those majors are untested. This proves the plugin builds for
# each major; loading into that major's slurmstepd is the version legs' job
# (tests/versions/run-versions.sh). A mirror that cannot be reached skips a
# major, and fails it under CI=true.
. "$top_srcdir/tests/lib/tap.sh"
main_build_only "it compiles against every major's headers from any leg; each leg's own build compiles the plugin against its Slurm"
headers="$top_srcdir/tests/versions/slurm-headers.sh"
suites="bookworm trixie sid"
for t in apt-get dpkg-deb; do
	command -v $t >/dev/null || skip_all_missing apt "no $t: each major's headers are Debian's libslurm-dev, fetched with apt-get download"
done
mk="$top_builddir/Makefile"
[ -f "$mk" ] || skip_all "no $mk"
var() { sed -n "s/^$1 = //p" "$mk"; }
cc=$(var CC)
cflags="$(var WARN_CFLAGS) -Werror -Wno-write-strings $(var HARDEN_CFLAGS) $(var CFLAGS)"
libincs=; for d in "$top_srcdir"/lib/*/; do libincs="$libincs -I${d%/}"; done
cppflags="$(var DEFS)$libincs $(var HWLOC_CFLAGS) $(var CPPFLAGS)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The premise: only spank/ sees Slurm's headers.
leaks=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"]slurm/' "$top_srcdir/lib" "$top_srcdir/helpers" 2>/dev/null)
is "$leaks" "" "lib/ and helpers/ include no Slurm header (only spank/ depends on the Slurm major)"

sources=("$top_srcdir"/spank/*.c)
for suite in $suites; do
	rc=0
	dir=$(bash "$headers" "$suite" 2>"$tmp/herr") || rc=$?
	if [ $rc -ne 0 ]; then
		why="$suite's libslurm-dev: $(tail -n 1 "$tmp/herr")"
		sed 's/^/#   /' "$tmp/herr" | tail -n 8
		if [ $rc -eq 3 ] && ! tap_ci; then
			skip "mirror unavailable, $why"
		else
			ok 1 "${CI:+CI=$CI: }headers of $why (slurm-headers.sh exit $rc)"
		fi
		continue
	fi
	inc=$dir/include
	major=$suite
	# config.h as configure would write it for this major: each HAVE_DECL_*
	# from whether the header declares the name (AC_CHECK_DECLS' own probe).
	mkdir -p "$tmp/$major"
	cp "$top_builddir/config.h" "$tmp/$major/config.h"
	for name in spank_prepend_task_argv slurm_spank_init_failure_mode; do
		macro=HAVE_DECL_$(echo "$name" | tr a-z A-Z)
		printf '#include <slurm/spank.h>\nint main(void) {\n#ifndef %s\n(void) %s;\n#endif\nreturn 0; }\n' "$name" "$name" >"$tmp/probe.c"
		if $cc -I"$inc" -c -o /dev/null "$tmp/probe.c" 2>/dev/null; then v=1; else v=0; fi
		sed -i "s/^#define $macro .*/#define $macro $v/" "$tmp/$major/config.h"
	done
	fails=""
	for src in "${sources[@]}"; do
		# -I the major's headers first: they win over any installed Slurm's.
		if ! $cc -I"$tmp/$major" -I"$inc" $cppflags $cflags -c -o "$tmp/obj.o" "$src" >"$tmp/err" 2>&1; then
			fails="$fails ${src##*/}"
			sed 's/^/#   /' "$tmp/err" | head -n 20
		fi
	done
	vnum=$(printf '#include <slurm/slurm_version.h>\nSLURM_VERSION_NUMBER\n' | $cc -I"$inc" -E -P - | tail -n 1)
	mm=$(printf '%d.%02d' $((vnum >> 16)) $(((vnum >> 8) & 255)))
	is "$fails" "" "spank/*.c compile with -Werror against Slurm $mm headers ($vnum, $(sed 's/ (.*//' "$dir/VERSION") from $suite; failure_mode $(sed -n 's/^#define HAVE_DECL_SLURM_SPANK_INIT_FAILURE_MODE //p' "$tmp/$major/config.h"))"
done
done_testing
