# tap.sh: TAP for shell tests. Source it; then use ok/is/like/skip_all/done_testing.
tap_n=0
tap_failed=0
ok() { # ok STATUS NAME
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_failed=$((tap_failed + 1)); fi
}
is() { # is GOT WANT NAME
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; printf '#   got:  %s\n#   want: %s\n' "$1" "$2"; fi
}
like() { # like TEXT REGEX NAME
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; printf '#   text: %s\n#   no match for: %s\n' "$(printf '%s' "$1" | head -c 600)" "$2"; fi
}
unlike() { # unlike TEXT REGEX NAME
	if printf '%s' "$1" | grep -Eq -- "$2"; then ok 1 "$3"; printf '#   unexpected match for: %s\n' "$2"; else ok 0 "$3"; fi
}
diag() { printf '# %s\n' "$*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
