#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The one file a user names that the plugin may open, SLURM_HOSTFILE (for
# --distribution=arbitrary), is never opened with root's rights
# (doc/privilege.md): with srun's layout from slurmctld no node opens it at
# all; a readable file and a root-only one both give the MASTER_ADDR of the
# node where Slurm put rank 0. Run as root, submitting with --uid.
. "$top_srcdir/tests/lib/tap.sh"
[ -f "$top_srcdir/tests/cluster/cluster.sh" ] || skip_all "tests/cluster/cluster.sh not there yet"
[ -f "$top_srcdir/tests/lib/e2e.sh" ] || skip_all "tests/lib/e2e.sh not there yet"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
id nobody >/dev/null 2>&1 || skip_all "no user nobody"
work=$(mktemp -d) || exit 1
chmod 755 "$work"
cd "$work" || exit 1
mkdir private open
chmod 700 private
chmod 755 open
printf 'n2\nn1\n' >private/hosts
chmod 600 private/hosts
cp private/hosts open/hosts
chmod 644 open/hosts

e2e_start
run_to 60 env SLURM_HOSTFILE="$work/open/hosts" srun --uid=nobody -m arbitrary -n2 --rdzv=torch printenv MASTER_ADDR
if printf '%s' "$out" | grep -qi 'uid.*not\|invalid user\|--uid'; then
	skip_all "this srun cannot run a job as another user: $(printf '%s' "$out" | head -c 200)"
fi
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "n2 " "a readable hostfile: nobody's tasks get MASTER_ADDR from its first line"

# A root-only hostfile: srun (root here, running the job as nobody) lays the
# step from it, as Slurm does; the plugin takes rank 0's node from
# slurmctld's answer and opens no file on the nodes, so it cannot
# have read the file with root's rights there. The file's path reaches the
# tasks; MASTER_ADDR is where Slurm really put rank 0.
run_to 60 env SLURM_HOSTFILE="$work/private/hosts" srun --uid=nobody -m arbitrary -n2 --rdzv=torch --rdzv-verbose printenv MASTER_ADDR
is "$rc" 0 "a root-only hostfile, job of nobody: the step runs (exit $rc)"
like "$out" "order from the step layout, asked of slurmctld by srun" \
	"rank 0's node came from slurmctld's layout, not from the file"
unlike "$out" "cannot read SLURM_HOSTFILE|SLURM_HOSTFILE cannot be read" "no node tried to open the file"
run_to 60 env SLURM_HOSTFILE="$work/private/hosts" srun -m arbitrary -n2 --rdzv=torch printenv MASTER_ADDR
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "n2 " "the same file works for a job of root, who can read it"
# Drained, down or failed, whatever else a node is doing (a node may still be
# completing the last step on a loaded machine: that is not drained).
is "$(sinfo -h -o '%N %T' | grep -iE 'drain|down|fail' | tr '\n' ' ')" "" "no node drained"
done_testing
