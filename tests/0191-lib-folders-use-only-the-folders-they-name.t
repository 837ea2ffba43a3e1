#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lib/ is split by concern, one folder each (README, "The tree, by
# feature"). Every file of a folder says, in the comment under its SPDX
# line, what the folder holds and which folders it uses ("Uses lib/a/,
# lib/b/." or "Uses no other folder."); this test holds the code to it:
# each quoted #include of lib/ names a header of the file's own folder or of
# a folder it says it uses, the folders' uses form a DAG (no circle), header
# names are unique across lib/ (includes are bare names on one -I list), the
# build's -I list names every folder, and no folder holds more than 12 C
# files. A copy of lib/ with one wrong include shows the check catches it.
. "$top_srcdir/tests/lib/tap.sh"
host_leg_only "the tree is the same under every leg"

# folder_comment FILE: the comment under FILE's SPDX line, on one line.
folder_comment() {
	awk 'NR == 1 { next } { sub(/^ *\/?\* ?/, ""); printf "%s ", $0 } /\*\// { exit }' "$1" \
		| sed 's/ *\*\/ *$//; s/  */ /g'
}
# uses_of COMMENT: its "Uses ..." list ("no other folder" when it uses none).
uses_of() { printf '%s\n' "$1" | sed -n 's/.* Uses \(.*\)\.$/\1/p'; }

# check ROOT: prints one line per violation in ROOT/lib; nothing when clean.
check() {
	local root=$1 d f h w uses own line
	declare -A where=() allow=()
	for h in "$root"/lib/*/*.h; do
		w=$(basename "$(dirname "$h")")
		if [ -n "${where[$(basename "$h")]:-}" ]; then
			echo "header name $(basename "$h") is in lib/${where[$(basename "$h")]}/ and lib/$w/"
		fi
		where[$(basename "$h")]=$w
	done
	for d in "$root"/lib/*/; do
		d=$(basename "$d")
		own=
		for f in "$root/lib/$d"/*.[ch]; do
			line=$(folder_comment "$f")
			case $line in
			"lib/$d/: "*) ;;
			*) echo "lib/$d/$(basename "$f"): its first comment does not say what lib/$d/ holds"; continue ;;
			esac
			[ -z "$own" ] && own=$line
			[ "$line" = "$own" ] || echo "lib/$d/$(basename "$f"): its folder comment differs from the folder's other files"
		done
		uses=$(uses_of "$own")
		[ -n "$uses" ] || echo "lib/$d/: the folder comment names no 'Uses ...' (or 'Uses no other folder.')"
		[ "$uses" = "no other folder" ] && uses=
		allow[$d]=" $d $(printf '%s' "$uses" | tr -d ',' | sed 's#lib/\([a-z]*\)/#\1#g') "
		[ "$(ls "$root/lib/$d"/*.c 2>/dev/null | wc -l)" -le 12 ] \
			|| echo "lib/$d/ holds $(ls "$root/lib/$d"/*.c | wc -l) C files (12 at most)"
	done
	for d in "${!allow[@]}"; do
		for f in "$root/lib/$d"/*.[ch]; do
			sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
				w=${where[$h]:-}
				[ -z "$w" ] && continue # config.h, generated
				case ${allow[$d]} in
				*" $w "*) ;;
				*) echo "lib/$d/$(basename "$f") includes $h of lib/$w/, which lib/$d/ does not say it uses" ;;
				esac
			done
		done
	done
	# The uses, as tsort's pairs (a folder before those it uses): a circle
	# is tsort's error.
	for d in "${!allow[@]}"; do
		for w in ${allow[$d]}; do echo "$d $w"; done
	done | tsort >/dev/null 2>"$tmp/tsort.err" || echo "the folders' uses form a circle: $(tr '\n' ' ' <"$tmp/tsort.err")"
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
folders=$(cd "$top_srcdir/lib" && ls -d -- */ | tr -d / | tr '\n' ' ')
ok "$([ "$(printf '%s' "$folders" | wc -w)" -ge 9 ] && echo 0 || echo 1)" "lib/ holds its folders: $folders"
out=$(check "$top_srcdir")
is "$out" "" "every lib/ folder includes only its own headers and those of the folders its files name; no circle, no folder over 12 C files"
for d in $folders; do
	diag "lib/$d/ uses: $(uses_of "$(folder_comment "$(ls "$top_srcdir/lib/$d"/*.c | head -n 1)")")"
done
missing=$(for d in $folders; do grep -q -- "-I\$(top_srcdir)/lib/$d \\\\\|-I\$(top_srcdir)/lib/$d\$" "$top_srcdir/Makefile.am" || echo "$d"; done)
is "$(printf '%s' "$missing" | tr '\n' ' ')" "" "Makefile.am's RDZV_LIB_CPPFLAGS names every folder"
missing=$(for d in $folders; do grep -q "\`lib/$d/\`" "$top_srcdir/README.md" || echo "$d"; done)
is "$(printf '%s' "$missing" | tr '\n' ' ')" "" "README's tree names every folder"

# The check itself catches a wrong include and a circle (a copy of lib/).
cp -r "$top_srcdir/lib" "$tmp/lib"
sed -i '0,/^#include "util.h"/s//#include "util.h"\n#include "record.h"/' "$tmp/lib/step/port.c"
out=$(check "$tmp")
like "$out" "lib/step/port.c includes record.h of lib/admin/, which lib/step/ does not say it uses" \
	"a copy where lib/step/port.c includes lib/admin/'s record.h is refused, naming both"
for f in "$tmp"/lib/step/*.[ch]; do
	perl -0pi -e 's#(Uses\s+(?:\*\s+)?)lib/common/\.#${1}lib/admin/, lib/common/.#' "$f"
done
out=$(check "$tmp")
like "$out" "the folders' uses form a circle" "a copy where lib/step/ says it uses lib/admin/ (which uses it) is refused as a circle"
done_testing
