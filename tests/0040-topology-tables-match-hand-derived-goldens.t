#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every real topology in tests/topo/fixtures gives, for whole-node and partial
# steps, the binding table of tests/topo/NAME.out. The goldens are derived
# independently of the code under test: tests/topo/derive.py reads the XML
# with Python's xml.etree (no hwloc, no plugin code) and applies the rules of
# doc/binding.md, and each golden's '#' header says how its answer reads
# from the tree by hand. tests/topo/cases lists the cases:
#   NAME FILE [rdzv-topo ARGS...]
# Two checks per case: rdzv-topo (the plugin's code) gives the golden, and
# the golden is what derive.py derives (so a golden is never a recording of
# the program). RDZV_REGEN=1 rewrites the tables below each golden's header
# from derive.py, never from rdzv-topo (then read the diff).
. "$top_srcdir/tests/lib/tap.sh"

dir=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
[ -d "$dir" ] || { echo "Bail out! no topology fixtures at $dir: they belong to the repository (tests/topo/fixtures)"; exit 1; }
ls "$dir"/*.xml >/dev/null 2>&1 || skip_all "no *.xml in $dir"
command -v python3 >/dev/null 2>&1 || skip_all_missing python3 "python3 not installed (tests/topo/derive.py)"
helper=$top_builddir/helpers/rdzv-topo
derive=$top_srcdir/tests/topo/derive.py
cases=$top_srcdir/tests/topo/cases

while read -r name file args; do
	case $name in ''|'#'*) continue ;; esac
	golden=$top_srcdir/tests/topo/$name.out
	# shellcheck disable=SC2086
	derived=$(python3 "$derive" "$dir/$file" $args 2>&1)
	if [ "${RDZV_REGEN:-0}" = 1 ]; then
		{ grep '^#' "$golden" 2>/dev/null; printf '%s\n' "$derived"; } > "$golden.new" \
			&& mv "$golden.new" "$golden"
	fi
	if [ ! -f "$golden" ]; then
		ok 1 "$name: golden tests/topo/$name.out exists"
		continue
	fi
	want=$(grep -v '^#' "$golden")
	grep -q '^# Derived by tests/topo/derive.py' "$golden"
	ok $? "$name: the golden's header says how it was derived"
	is "$derived" "$want" "$name: the golden is what derive.py reads from $file${args:+ ($args)}"
	# shellcheck disable=SC2086
	got=$("$helper" --input "$dir/$file" $args 2>&1; echo "exit $?")
	is "$got" "$want" "$name: rdzv-topo's table for $file${args:+ ($args)} matches the golden"
done < "$cases"

# Every fixture is covered by at least one case (gb200/ holds the p6e-gb200
# export; nccl-topo/ is NCCL's own format, not hwloc's).
for f in "$dir"/*.xml "$dir"/gb200/*.xml; do
	[ -f "$f" ] || continue
	b=${f#"$dir"/}
	grep -q "^[^#][^ ]* $b" "$cases"; ok $? "topology $b has a golden case"
done
done_testing
