#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Host list expansion (rdzv_hostlist_count/nth, through tests/unit/hostlist-print)
# matches Slurm's own "scontrol show hostnames" on many generated forms:
# prefixes with digits, several bracket groups, zero padding, ranges and
# singletons, commas, white space, empty items, duplicates. Generated from
# a fixed seed (RDZV_HOSTLIST_SEED overrides, RDZV_HOSTLIST_COUNT sets how
# many), so a failure reproduces.
#
# Where Slurm 22.05 and we knowingly differ (see lib/step/hostlist.h), our side is
# asserted separately:
#   - Slurm 22.05 refuses text after the last bracket group ("n[8-11]x",
#     "a[1-2]b[3-4]c": "Invalid hostlist"); we read it as a suffix, as later
#     Slurm versions do;
#   - Slurm's lenient parser lets some malformed forms through with odd
#     results ("n[1-2" gives "n]", "n1]" is a host, "n[1-]" gives n1,
#     "n[1, 2]" gives n1 n02); we refuse them;
#   - Slurm refuses a single range of more than 65536 hosts; we count it.
. "$top_srcdir/tests/lib/tap.sh"

command -v scontrol >/dev/null 2>&1 || skip_all_missing slurm-client "scontrol not found"
print="$top_builddir/tests/unit/hostlist-print"
if [ ! -x "$print" ]; then
	echo "Bail out! $print is not built (make check builds it)"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdzv-hostlist.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# scontrol needs a configuration to start, never a running slurmctld for
# "show hostnames".
cat >"$tmp/slurm.conf" <<CONF
ClusterName=rdzvtest
SlurmctldHost=localhost
NodeName=n1
PartitionName=p Nodes=n1
CONF
SLURM_CONF="$tmp/slurm.conf"
export SLURM_CONF
probe=$(scontrol show hostnames 'n[1-2]' 2>&1 | tr '\n' ' ')
[ "$probe" = "n1 n2 " ] || skip_all "scontrol cannot expand host lists offline here: $probe"

# slurm_expand EXPR: hosts separated by single spaces, or INVALID. scontrol
# 22.05 exits 0 on a refused list, saying "Invalid hostlist" on stderr.
slurm_expand() {
	if out=$(scontrol show hostnames "$1" 2>"$tmp/stderr") \
	    && ! grep -q 'Invalid hostlist' "$tmp/stderr"; then
		printf '%s\n' "$out" | tr '\n' ' ' | sed 's/ $//'
	else
		printf 'INVALID'
	fi
}

# ours_expand EXPR: the same through hostlist-print.
ours_expand() {
	printf '%s\n' "$1" | "$print" -l | sed 's/^error: .*/INVALID/'
}

# gen SEED COUNT: COUNT expressions Slurm 22.05 accepts, one a line.
# Park-Miller's generator, exact in awk's doubles: the same list everywhere.
gen() {
	awk -v seed="$1" -v count="$2" '
	function rnd(k) { state = (state * 16807) % 2147483647; return state % k }
	function pad(v, w,   s) { s = v ""; while (length(s) < w) s = "0" s; return s }
	# a plain host number, sometimes zero padded
	function num(   v) {
		v = rnd(4) == 0 ? rnd(1000) : rnd(130)
		return pad(v, length(v "") + (rnd(3) == 0 ? 1 + rnd(2) : 0))
	}
	# "lo" or "lo-hi"; the low bound sets the width; span limits the size
	function range(span,   lo, hi, s) {
		lo = rnd(5) == 0 ? rnd(1000) : rnd(120)
		s = pad(lo, length(lo "") + (rnd(3) == 0 ? 1 + rnd(2) : 0))
		if (rnd(3)) {
			hi = lo + rnd(span)
			s = s "-" (rnd(6) == 0 ? pad(hi, length(hi "") + 1) : hi)
		}
		return s
	}
	function group(elems, span,   s, k, i) {
		k = 1 + rnd(elems)
		s = range(span)
		for (i = 1; i < k; i++)
			s = s "," range(span)
		return "[" s "]"
	}
	function item(   t, s, g, i) {
		t = rnd(10)
		if (t < 2)
			return prefix[rnd(np)] num()
		if (t < 6)
			return prefix[rnd(np)] group(3, 13)
		g = 2 + rnd(2)
		s = prefix[rnd(np)] group(2, 3)
		for (i = 1; i < g; i++)
			s = s mid[rnd(nm)] group(2, 3)
		return s
	}
	BEGIN {
		state = seed % 2147483646 + 1
		np = split("n node gpu1- c1n a.b x_y rack-2-n r07n", p, " ")
		for (i = 0; i < np; i++) prefix[i] = p[i + 1]
		prefix[np++] = ""
		nm = split("c - b -s1- .", m, " ")
		for (i = 0; i < nm; i++) mid[i] = m[i + 1]
		mid[nm++] = ""
		ns = split(", ,|,,|, | ,", sepl, "|")
		for (n = 0; n < count; n++) {
			k = 1 + rnd(4)
			e = rnd(12) == 0 ? sepl[1 + rnd(ns)] : ""
			prev = ""
			for (i = 0; i < k; i++) {
				it = (prev != "" && rnd(8) == 0) ? prev : item()
				e = e (i ? sepl[1 + rnd(ns)] : "") it
				prev = it
			}
			if (rnd(12) == 0)
				e = e sepl[1 + rnd(ns)]
			print e
		}
	}'
}

seed=${RDZV_HOSTLIST_SEED:-20261130}
# 500 on the host leg, 200 in the version roots (their scontrol, the same
# seed: the first 200 forms), where three legs share CI's 2 cores.
# (100 in distcheck's and the sanitizer build's runs, which repeat the host's.)
if [ "${RDZV_IN_ROOT:-0}" = 1 ]; then count=${RDZV_HOSTLIST_COUNT:-200}
elif [ "${RDZV_SKIP_E2E:-}" = 1 ] || [ "${RDZV_SANITIZE:-no}" = yes ]; then count=${RDZV_HOSTLIST_COUNT:-100}
else count=${RDZV_HOSTLIST_COUNT:-500}; fi

# Hand-picked forms first, then the generated ones.
cat >"$tmp/exprs" <<'FORMS'
gpu1-[1-3]
a[1-2]b[3-4]
n[0-2]c[00-01]
n[08-11]
n[01-3]
n[1-03]
n[001-3]
n[1,3-4,7]
n[3,1,2]
n1,,n2
n1 n2
 n1 ,  n2 
n1,n1
n[1-3,2-4]
n[1-2],n[1-2]
[1-3]
1[1-2]
n1-3
n1[01-02]
n[09-100]
n[98-102]
n[00]
n[0-0]
n[007]
n001,n1
x[1-2]y[01-02]z[3]
n[1-2][3-4]
n[1-2]-x[3-4]
n[1-2]c[1-2]d[1-2]
a[1,3]b[1-2]c[5,7]
a[1-2]b[1-2]c[1-2]d[1-2]
n[1-2] [3-4]
n[99999999-100000001]
n[0-9]c[0-9]

FORMS
gen "$seed" "$count" >>"$tmp/exprs"
diag "seed $seed: $(wc -l <"$tmp/exprs") expressions"

"$print" -l <"$tmp/exprs" | sed 's/^error: .*/INVALID/' >"$tmp/ours"
while IFS= read -r e; do
	slurm_expand "$e"
	printf '\n'
done <"$tmp/exprs" >"$tmp/slurm"

us=$(printf '\037')
paste -d "$us" "$tmp/exprs" "$tmp/ours" "$tmp/slurm" >"$tmp/all"
while IFS="$us" read -r e o s; do
	if [ "$s" = INVALID ]; then
		ok 1 "'$e' is accepted by scontrol (generator must only write valid forms)"
		continue
	fi
	n=$(printf '%s' "$s" | wc -w)
	if [ "$o" = "$s" ]; then
		ok 0 "'$e' expands to the $n hosts scontrol lists, in its order"
	else
		ok 1 "'$e' expands to the $n hosts scontrol lists, in its order"
		printf '#   ours:     %.300s\n#   scontrol: %.300s\n' "$o" "$s"
	fi
done <"$tmp/all"

# Membership (rdzv_hostlist_has, through hostlist-print -m) agrees with
# scontrol's list: every host it lists is found, and near misses (a digit
# more, a character less, a zero in front of the number) are found exactly
# when scontrol lists them too.
awk -F "$us" -v q="$tmp/mq" -v w="$tmp/mw" '
	$3 == "INVALID" { next }
	{
		n = split($3, hs, " ")
		delete mem
		for (i = 1; i <= n; i++) mem[hs[i]] = 1
		for (i = 1; i <= n && i <= 60; i++) {
			h = hs[i]
			k = split(h "|" h "0|" substr(h, 1, length(h) - 1) "|" h "1", pr, "|")
			p0 = h; sub(/[0-9]+$/, "", p0)
			if (p0 != h && p0 != "") { pr[++k] = p0 "0" substr(h, length(p0) + 1) }
			for (j = 1; j <= k; j++) {
				if (pr[j] == "") continue
				print $1 "\t" pr[j] > q
				print NR "\t" ((pr[j] in mem) ? 1 : 0) > w
			}
		}
	}' "$tmp/all"
"$print" -m <"$tmp/mq" >"$tmp/mo"
paste "$tmp/mw" "$tmp/mo" | awk -F '\t' '
	{ n[$1]++; if ($2 != $3) { bad[$1]++; if (!(($1) in ex)) ex[$1] = "want " $2 " got " $3 } }
	END { for (r in n) print r, n[r], bad[r] + 0, ex[r] }' | sort -n >"$tmp/mres"
while read -r r n bad ex; do
	e=$(sed -n "${r}p" "$tmp/exprs")
	if [ "$bad" = 0 ]; then
		ok 0 "'$e': membership of $n hosts and near misses agrees with scontrol's list"
	else
		ok 1 "'$e': membership of $n hosts and near misses agrees with scontrol's list"
		diag "$bad wrong, first: $ex (queries and answers in $tmp/mq, $tmp/mo)"
	fi
done <"$tmp/mres"
is "$(wc -l <"$tmp/mres")" "$(awk -F "$us" '$3 != "INVALID" && $3 != ""' "$tmp/all" | wc -l)" \
	"every expression scontrol expands to hosts had its membership checked"
# A list of 10^11 names is searched, not walked (a gres.conf NodeName= took
# forever before): the answer comes within seconds, and is right.
is "$(printf 'n[0-99999999999]\tn12345678901\nn[0-99999999999]\tn012\ngpu[0001-9999]\tgpu1\ngpu[0001-9999]\tgpu0001\n' \
	| timeout 10 "$print" -m | tr '\n' ' ')" "1 0 0 1 " \
	"membership in lists of 10^11 and 9999 names, padded and not"
is "$(scontrol show hostnames 'gpu[0001-9999]' | grep -cx -e gpu1 -e gpu0001)" 1 \
	"scontrol agrees: gpu[0001-9999] has gpu0001, not gpu1"

# A tab separates like a space or a comma.
tab=$(printf '\t')
is "$(ours_expand "n1${tab}n[2-3]")" "$(slurm_expand "n1${tab}n[2-3]")" \
	"a tab separates hosts as in scontrol"

# Both refuse.
for e in 'x[5-3]' 'n[]' 'n[a-b]' 'n[1,,2]' 'n[-2]'; do
	is "$(slurm_expand "$e")" INVALID "scontrol refuses '$e'"
	is "$(ours_expand "$e")" INVALID "we refuse '$e' too"
done

# Slurm 22.05 refuses a suffix after the last group; we read it as a suffix.
# A 22.05 scontrol must refuse it (the difference documented above); any
# other must agree with us.
slurm_version=$(scontrol --version 2>/dev/null | cut -d' ' -f2)
for pair in 'n[8-11]x|n8x n9x n10x n11x' \
            'a[1-2]b[3-4]c|a1b3c a1b4c a2b3c a2b4c' \
            'n[1-2].ib,m|n1.ib n2.ib m' \
            'node[01-10]-ib|node01-ib node02-ib node03-ib node04-ib node05-ib node06-ib node07-ib node08-ib node09-ib node10-ib'; do
	e=${pair%%|*}
	want=${pair#*|}
	is "$(ours_expand "$e")" "$want" "we read '$e' with a suffix"
	s=$(slurm_expand "$e")
	case $slurm_version in
	22.05.*) is "$s" INVALID "scontrol $slurm_version refuses '$e' (the documented difference)" ;;
	*) is "$s" "$want" "scontrol $slurm_version reads '$e' with a suffix as we do" ;;
	esac
done

# Slurm's lenient parser lets these through with odd results; we refuse.
# (The last two: 22.05 refuses them, 24.11 and 26.05 give "n[1] n[2]" and
# "n1] n2]"; tests/versions/run-leg.sh runs this file under each.)
for e in 'n[1-2' 'n1]' 'n[1-]' 'n[1, 2]' 'n[+1]' 'n[1 -2]' 'n[[1-2]]' 'n[1-2]]'; do
	is "$(ours_expand "$e")" INVALID "we refuse '$e' (scontrol: '$(slurm_expand "$e")')"
done

# Slurm refuses ranges of more than 65536 hosts; we count them.
is "$(slurm_expand 'n[0-65536]')" INVALID "scontrol refuses a range of 65537 hosts"
is "$(printf 'n[0-65536]\n' | "$print" -l | wc -w)" 65537 "we expand a range of 65537 hosts"
is "$(slurm_expand 'n[0-65535]' | wc -w)" 65536 "scontrol expands a range of 65536 hosts"

done_testing
