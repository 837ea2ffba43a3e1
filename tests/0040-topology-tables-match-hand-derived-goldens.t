#!/bin/bash
# Every real topology in shared/topologies gives, for whole-node and partial
# steps, the binding table written by hand in tests/topo/NAME.out (derived
# from the XML trees with lstopo-no-graphics -p --whole-io and hwloc-calc;
# each golden's '#' header says how). tests/topo/cases lists the cases:
#   NAME FILE [rdzv-topo ARGS...]
# RDZV_REGEN=1 rewrites the tables below each golden's header (then read
# the diff: a golden is an answer, not a recording).
. "$top_srcdir/tests/lib/tap.sh"

dir=${RDZV_TOPOLOGIES:-$top_srcdir/../shared/topologies}
[ -d "$dir" ] || skip_all "no topology fixtures at $dir (set RDZV_TOPOLOGIES)"
ls "$dir"/*.xml >/dev/null 2>&1 || skip_all "no *.xml in $dir"
helper=$top_builddir/helpers/rdzv-topo
cases=$top_srcdir/tests/topo/cases

while read -r name file args; do
	case $name in ''|'#'*) continue ;; esac
	golden=$top_srcdir/tests/topo/$name.out
	# shellcheck disable=SC2086
	got=$("$helper" --input "$dir/$file" $args 2>&1; echo "exit $?")
	if [ "${RDZV_REGEN:-0}" = 1 ]; then
		{ grep '^#' "$golden" 2>/dev/null; printf '%s\n' "$got"; } > "$golden.new" \
			&& mv "$golden.new" "$golden"
	fi
	if [ ! -f "$golden" ]; then
		ok 1 "$name: golden tests/topo/$name.out exists"
		continue
	fi
	want=$(grep -v '^#' "$golden")
	is "$got" "$want" "$name: table for $file${args:+ ($args)} matches the golden"
done < "$cases"

# Every fixture is covered by at least one case.
for f in "$dir"/*.xml; do
	b=$(basename "$f")
	grep -q "^[^#][^ ]* $b" "$cases"; ok $? "topology $b has a golden case"
done
done_testing
