#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SlurmdParameters=contain_spank (Slurm 24.05+) with a job container
# (job_container/tmpfs; namespace/tmpfs from 25.11): slurmstepd runs the
# plugin's user_init inside the job's mount namespace, where the container's
# directories (here /dev/shm; sites often add /tmp) are the job's own. What
# that changes for the plugin:
#   - ranks and rendezvous are unchanged (user_init still sets them);
#   - the topology is loaded (and cached) by root in init_post_opt, before
#     slurmstepd enters the job's namespace: a topology= file
#     under a container directory of the node (/dev/shm here) is still read,
#     and binds exactly as the same XML at a visible path does;
#   - SLURM_HOSTFILE: srun reads it where it runs and hands rank 0's
#     node to every node in the step's plan, so a hostfile the batch script
#     wrote to its private /dev/shm gives every node the right ranks, although
#     the other nodes' containers cannot see the file.
# Runs where the cluster's Slurm has it (tests/versions: 24.11, 26.05).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_slurm_at_least 24.05 || skip_all "Slurm $SLURM_VERSION has no contain_spank (24.05+)"
# Measured 2026-12: inside the Debian 13 root (tests/versions/in-root.sh, its
# own mount namespace) 24.11's job_container/tmpfs intermittently fails to
# hold a job's namespace ("_create_ns: ns base mount failed: Invalid
# argument" binding /proc/PID/ns/mnt), and the job then fails on that node:
# a fault of the test root, not of the plugin. 26.05 runs it on the host.
# The Debian sid root (26.05) does the same: in CI run 2 of 2026-12-01, 6 of
# its steps gave no output at all (run 1 and a run by hand passed). Both
# legs now run in such roots, so contain_spank is not exercised end to end.
case ${RDZV_SLURM:-host} in 24.11 | 26.05)
	skip_all "job_container/tmpfs cannot hold job namespaces reliably inside the Debian test roots (24.11: ns base mount EINVAL; 26.05: steps with no output in CI); contain_spank is not exercised end to end here" ;;
esac
fixtures=${RDZV_TOPOLOGIES:-$top_srcdir/tests/topo/fixtures}
xml=$fixtures/psmgmt__tests__hwloc__topo.jwb0004.xml
[ -f "$xml" ] || { echo "Bail out! no topology fixtures at $xml: they belong to the repository (tests/topo/fixtures)"; exit 1; }
hidden=$(mktemp -d /dev/shm/rdzv-0096.XXXXXX) || exit 1
work=$(mktemp -d /tmp/rdzv-0096.XXXXXX) || exit 1
chmod 755 "$hidden"
cp "$xml" "$hidden/topo.xml" && chmod 644 "$hidden/topo.xml"
touch "$hidden/node-marker"
e2e_start RDZV_CONTAIN_SPANK=1 RDZV_NODE_GPUS="4 4 4"
trap 'e2e_stop; rm -rf "$hidden" "$work"' EXIT
cd "$work" || exit 1

# The container is really there: the node's /dev/shm is not the job's.
run_to 60 srun -N1 -n1 sh -c "test -e $hidden/node-marker && echo SEEN || echo UNSEEN"
is "$out" UNSEEN "the job's /dev/shm is its own (the node's $hidden is not visible in the job)"

# A step that printed nothing at all, not even the plugin's words, is the
# test root's job_container/tmpfs failing to make the job's namespace (as on
# 24.11, above; seen once on the sid root): shown, then tried again, twice
# at most. Any task line or plugin message is judged as it is.
for try in 1 2 3; do
	run_to 60 srun -N2 -n4 --rdzv=torch sh -c 'echo R $RANK $WORLD_SIZE $MASTER_ADDR $SLURMD_NODENAME'
	case $out in *"R "* | *rdzv:*) break ;; esac
	diag "try $try: the step gave no task output (exit $rc): $(printf '%s' "$out" | tail -n 5 | tr '\n' ' ')"
done
is "$(printf '%s\n' "$out" | awk '$1 == "R" { print $2, $3 }' | sort | tr '\n' ' ')" "0 4 1 4 2 4 3 4 " \
	"contain_spank: user_init in the job namespace still gives every task its rank"
rank0=$(printf '%s\n' "$out" | awk '$1 == "R" && $2 == 0 { print $5 }')
is "$(printf '%s\n' "$out" | awk '$1 == "R" { print $4 }' | sort -u)" "${rank0:-none}" \
	"... and every task's MASTER_ADDR is rank 0's node ($rank0)"

e2e_plugstack "topology=$xml"
run_to 60 srun -N1 -n2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto sh -c 'echo task $RANK cuda=$CUDA_VISIBLE_DEVICES'
is "$rc" 0 "contain_spank: topology outside the container directories loads (srun exits 0)"
unlike "$out" "warning|error" "... without a warning ($(printf '%s' "$out" | head -c 200 | tr '\n' '|'))"
visible=$(printf '%s\n' "$out" | grep '^task ' | sort)

e2e_plugstack "topology=$hidden/topo.xml"
run_to 60 srun -N1 -n2 --gres=gpu:2 --rdzv=torch --rdzv-bind=auto sh -c 'echo task $RANK cuda=$CUDA_VISIBLE_DEVICES'
diag "topology under the node's /dev/shm: rc $rc: $(printf '%s' "$out" | head -c 400 | tr '\n' '|')"
is "$rc" 0 "contain_spank: a topology under the node's /dev/shm (hidden in the job) does not fail the step"
unlike "$out" "warning|error" "... root reads it in init_post_opt, outside the job's namespace: no warning"
is "$(printf '%s\n' "$out" | grep '^task ' | sort)" "$visible" "... and the tasks bind exactly as with the same XML at a visible path"
e2e_plugstack

# An arbitrary distribution's hostfile written by the batch script into its
# own /dev/shm: srun reads it in the batch step, as the job sees it.
cat >job.sh <<'JOB'
#!/bin/bash
printf 'n2\nn1\nn1\n' > /dev/shm/hosts
SLURM_HOSTFILE=/dev/shm/hosts srun -n3 --distribution=arbitrary --rdzv=torch sh -c 'echo $SLURMD_NODENAME $RANK'
JOB
run_to 120 sbatch --wait -N2 --ntasks-per-node=2 -o "$work/job.out" job.sh
got=$(sort "$work/job.out" 2>/dev/null | tr '\n' ' ')
diag "batch job (exit $rc): $(head -c 400 "$work/job.out" 2>/dev/null | tr '\n' '|')"
like "$got" "n1 1 n1 2" "contain_spank: on the batch node, SLURM_HOSTFILE in the job's private /dev/shm is read (its tasks are ranks 1 and 2)"
like "$got" "n2 0 " "... and on the other node, whose container cannot see the file, rank 0 runs: srun read the hostfile and handed rank 0's node to every node"
is "$(grep -c . "$work/job.out" 2>/dev/null)" 3 "... three tasks, one line each (no task failed)"
done_testing
