#!/bin/bash
# The one file a user names that slurmstepd opens, SLURM_HOSTFILE (for
# --distribution=arbitrary), is opened in user_init with the job user's
# credentials (doc/privilege.md): a hostfile only root can read yields
# "cannot be read" for a job of user nobody, while the same content in a
# readable file gives MASTER_ADDR. Run as root, submitting with --uid.
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

run_to 60 env SLURM_HOSTFILE="$work/private/hosts" srun --uid=nobody -m arbitrary -n2 --rdzv=torch printenv MASTER_ADDR
ok "$([ "$rc" != 0 ] && echo 0 || echo 1)" "a root-only hostfile: nobody's step fails (exit $rc)"
# srun (which dropped to nobody for --uid) reads the hostfile itself since
# it decides rank 0's node (issue 14); a node's slurmstepd reads it as the
# user in user_init. Either way the refusal names the file.
like "$out" "cannot read SLURM_HOSTFILE|SLURM_HOSTFILE cannot be read" "the plugin could not read it: it opened it as nobody, not as root"
unlike "$out" "^n2$" "no task started with a MASTER_ADDR read with root's rights"
run_to 60 env SLURM_HOSTFILE="$work/private/hosts" srun -m arbitrary -n2 --rdzv=torch printenv MASTER_ADDR
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "n2 " "the same file works for a job of root, who can read it"
is "$(sinfo -h -o %T | sort -u | tr '\n' ' ')" "idle " "no node drained"
done_testing
