#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Slurm 25.05+ reads `int slurm_spank_init_failure_mode` from a plugin
# (spank(8); src/common/spank.c dlsym()s it and returns its value when a
# required plugin's slurm_spank_init fails): ESPANK_JOB_FAILURE fails the job,
# the default drains the node. rdzv.so exports it as ESPANK_JOB_FAILURE
# exactly when the Slurm headers it was built against declare it, and not
# otherwise (older majors would ignore it; a stray symbol hides a wrong
# configure check). Runs in every version leg against that leg's build: on
# 26.05 the symbol is there, on 22.05 and 24.11 it is absent.
. "$top_srcdir/tests/lib/tap.sh"
so="$top_builddir/spank/.libs/rdzv.so"
[ -f "$so" ] || skip_all "rdzv.so not built"
for tool in readelf objdump; do
	command -v $tool >/dev/null || skip_all "$tool not installed (binutils)"
done
mk="$top_builddir/Makefile"
var() { sed -n "s/^$1 = //p" "$mk"; }
cc=$(var CC)
slurm_cppflags=$(var SLURM_CPPFLAGS)
major=$(var SLURM_MAJOR)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Independently of configure: does this Slurm's spank.h declare it, and what
# is ESPANK_JOB_FAILURE (an enum member: only a compiled program can tell)?
cat >"$tmp/decl.c" <<'C'
#include <slurm/spank.h>
int *probe(void);
int *probe(void) { return &slurm_spank_init_failure_mode; }
C
cat >"$tmp/value.c" <<'C'
#include <stdio.h>
#include <slurm/spank.h>
int main(void)
{
	printf("%d %d\n", (int) ESPANK_JOB_FAILURE, (int) ESPANK_NODE_FAILURE);
	return 0;
}
C
if $cc $slurm_cppflags -fsyntax-only "$tmp/decl.c" 2>/dev/null; then declared=yes; else declared=no; fi
diag "Slurm $major headers ($slurm_cppflags): slurm_spank_init_failure_mode declared: $declared"

sym=$(readelf -Ws --dyn-syms "$so" | awk '$8 == "slurm_spank_init_failure_mode" && $7 != "UND" { print $2, $3; exit }')
if [ $declared = no ]; then
	is "$sym" "" "Slurm $major has no init failure mode: rdzv.so exports no slurm_spank_init_failure_mode"
	done_testing
	exit
fi
ok "$([ -n "$sym" ] && echo 0 || echo 1)" "Slurm $major: rdzv.so exports slurm_spank_init_failure_mode ($sym)"
[ -n "$sym" ] || { done_testing; exit; }

# What the plugin holds there: 4 bytes at the symbol's address, read from the
# file (objdump), little-endian as on every machine Slurm runs on here.
$cc $slurm_cppflags -w -o "$tmp/value" "$tmp/value.c"
read -r job node < <("$tmp/value")
addr=$((16#${sym%% *}))
bytes=$(objdump -s --start-address=$addr --stop-address=$((addr + 4)) "$so" \
	| awk '/^ [0-9a-f]+ / { print $2; exit }')
le=${bytes:6:2}${bytes:4:2}${bytes:2:2}${bytes:0:2}
value=$((16#${le:-0}))
ok "$([ "$job" != "$node" ] && echo 0 || echo 1)" "ESPANK_JOB_FAILURE ($job) and ESPANK_NODE_FAILURE ($node) differ"
is "$value" "$job" "its value is ESPANK_JOB_FAILURE: a failing init fails the job, never drains the node"
done_testing
