#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Metrics without a daemon: with plugstack metrics_dir=DIR, each node adds
# every step it ran to DIR/rdzv.prom (node_exporter's textfile collector),
# rewritten under a lock and renamed into place: steps by mode, failures by
# the node's first cause, binding fallbacks, record errors, the last step's
# NCCL profile. Checked on real steps (the test cluster's nodes share one
# directory, so the counts are the nodes' sums), then scraped by Debian's
# real node_exporter (unpacked by tests/install-deps.sh, listening on
# loopback only, stopped at the end) and checked by Debian's promtool.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
prom=${RDZV_PROM_CACHE:-/var/cache/spank-rdzv/prometheus}/usr/bin
work=$(mktemp -d /tmp/rdzv-0117.XXXXXX) || exit 1
chmod 755 "$work"
md=$work/metrics
mkdir -m 0755 "$md"
e2e_start RDZV_PLUGSTACK_ARGS="metrics_dir=$md"
exporter=
trap '[ -n "$exporter" ] && kill "$exporter" 2>/dev/null; e2e_stop; rm -rf "$work"' EXIT
cd "$work" || exit 1
value() { sed -n "s/^$1 //p" "$md/rdzv.prom" 2>/dev/null; }

run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=torch true
is "$rc" 0 "a torch step on 2 nodes"
run_to 60 srun -N2 --ntasks-per-node=1 --rdzv=torchrun true
is "$rc" 0 "a torchrun step on 2 nodes"
is "$(value 'rdzv_steps_total{mode="torch"}')" 2 "rdzv.prom: rdzv_steps_total{mode=\"torch\"} counts the 2 nodes of the torch step"
is "$(value 'rdzv_steps_total{mode="torchrun"}')" 2 "... and {mode=\"torchrun\"} the torchrun step's"
run_to 60 srun -N2 --ntasks-per-node=2 --rdzv=torch sh -c '[ "$SLURM_PROCID" = 3 ] && exit 3; sleep 30'
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "a step whose rank 3 exits 3 fails (exit $rc)"
is "$(value 'rdzv_step_failures_total{cause="exit"}')" 1 "... rdzv_step_failures_total{cause=\"exit\"}: the node of rank 3"
is "$(value 'rdzv_step_failures_total{cause="signal"}')" 1 "... {cause=\"signal\"}: the other node, whose ranks were stopped"
run_to 90 salloc -N2 --ntasks-per-node=2 srun --rdzv=torchrun true
is "$(value 'rdzv_step_failures_total{cause="refused_by_srun"}')" 2 "a step srun refused: {cause=\"refused_by_srun\"} on its 2 nodes"
is "$(value rdzv_binding_fallbacks_total)" 0 "no binding fallback"
like "$(cat "$md/rdzv.prom")" 'rdzv_profile_info\{profile="none",hash="0000000000000000"\} 1' "the last step's profile: none"
ok "$([ "$(value rdzv_last_step_end_seconds)" -ge "$(( $(date +%s) - 600 ))" ] 2>/dev/null && echo 0 || echo 1)" "rdzv_last_step_end_seconds is recent"
is "$(stat -c '%a %U' "$md/rdzv.prom")" "644 root" "rdzv.prom is root's, 0644 (node_exporter reads it)"
ls -a "$md" | grep -q '^\.rdzv\.prom\.[0-9]' && ok 1 "no temporary file is left" || ok 0 "no temporary file is left"

if [ "${RDZV_IN_ROOT:-0}" = 1 ]; then
	skip "node_exporter and promtool scrape on the host leg (the file is written the same on every leg)"
elif [ -x "$prom/promtool" ] && [ -x "$prom/prometheus-node-exporter" ]; then
	out=$("$prom/promtool" check metrics <"$md/rdzv.prom" 2>&1)
	rc=$?
	is "$rc" 0 "promtool check metrics accepts rdzv.prom"
	is "$out" "" "... with no lint message"
	[ -z "$out" ] || diag "$out"
	# A free loopback port for the exporter: the test's own range.
	port=$((E2E_RESV_HI - 7))
	"$prom/prometheus-node-exporter" --web.listen-address="127.0.0.1:$port" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$md" >"$work/exporter.log" 2>&1 &
	exporter=$!
	scraped=
	for _ in $(seq 100); do
		scraped=$($PY -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=2).read().decode())" 2>/dev/null) && break
		kill -0 "$exporter" 2>/dev/null || break
		sleep 0.1
	done
	like "$scraped" 'rdzv_steps_total\{mode="torch"\} 4' "node_exporter scrapes rdzv_steps_total{mode=\"torch\"} 4 (2 steps on 2 nodes)"
	like "$scraped" 'rdzv_step_failures_total\{cause="refused_by_srun"\} 2' "... and the failures by cause"
	like "$scraped" 'node_textfile_scrape_error 0' "... with node_textfile_scrape_error 0"
	[ -n "$scraped" ] || diag "$(tail -n 5 "$work/exporter.log")"
	kill "$exporter" 2>/dev/null
	wait "$exporter" 2>/dev/null
	exporter=
else
	skip_missing "prometheus-node-exporter prometheus" "Debian's node_exporter and promtool not unpacked in $prom (tests/install-deps.sh)"
fi

# A metrics_dir open to others gets nothing; the step runs.
chmod 0777 "$md"
before=$(value 'rdzv_steps_total{mode="torch"}')
run_to 60 srun -N1 -n1 --rdzv=torch true
is "$rc" 0 "metrics_dir open to others: the step still runs"
is "$(value 'rdzv_steps_total{mode="torch"}')" "$before" "... and rdzv.prom is not touched"
done_testing
