#!/bin/bash
# The compile matrix: every source of rdzv.so that includes a Slurm header
# (spank/*.c; lib/ includes none, checked first) compiles with the build's
# warnings and -Werror against the public headers of every Slurm major in
# ../shared/slurm/include/ (22.05 ... 26.05), each with the HAVE_DECL_*
# answers configure would give for that major. This proves the plugin builds
# for each major; loading into that major's slurmstepd is the version legs'
# job (tests/versions/run-versions.sh).
. "$top_srcdir/tests/lib/tap.sh"
majors_dir=$(cd "$top_srcdir/../shared/slurm/include" 2>/dev/null && pwd) \
	|| skip_all "no ../shared/slurm/include (headers of every Slurm major; absent in make distcheck)"
ls "$majors_dir"/*/slurm/spank.h >/dev/null 2>&1 || skip_all "no major's headers under $majors_dir"
mk="$top_builddir/Makefile"
[ -f "$mk" ] || skip_all "no $mk"
var() { sed -n "s/^$1 = //p" "$mk"; }
cc=$(var CC)
cflags="$(var WARN_CFLAGS) -Werror -Wno-write-strings $(var HARDEN_CFLAGS) $(var CFLAGS)"
cppflags="$(var DEFS) -I$top_srcdir/lib/common -I$top_srcdir/lib/rdzv -I$top_srcdir/lib/bind -I$top_srcdir/lib/profile $(var HWLOC_CFLAGS) $(var CPPFLAGS)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The premise: only spank/ sees Slurm's headers.
leaks=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"]slurm/' "$top_srcdir/lib" "$top_srcdir/helpers" 2>/dev/null)
is "$leaks" "" "lib/ and helpers/ include no Slurm header (only spank/ depends on the Slurm major)"

sources=("$top_srcdir"/spank/*.c)
for inc in "$majors_dir"/*/; do
	inc=${inc%/}
	major=${inc##*/}
	[ -f "$inc/slurm/spank.h" ] || continue
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
	is "$fails" "" "spank/*.c compile with -Werror against Slurm $major headers ($vnum; failure_mode $(sed -n 's/^#define HAVE_DECL_SLURM_SPANK_INIT_FAILURE_MODE //p' "$tmp/$major/config.h"))"
done
done_testing
