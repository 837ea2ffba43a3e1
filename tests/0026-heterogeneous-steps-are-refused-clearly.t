#!/bin/bash
# A step spanning components of a heterogeneous job cannot be numbered from
# one node's view: it is refused with a message, not given wrong ranks.
# A step of one component works as any other step.
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
e2e_start
cd "$(mktemp -d)" || exit 1
cat > het.sh <<'SH'
srun --het-group=0,1 --rdzv=torch printenv RANK > both.out 2>&1; echo "BOTH_RC=$?"
srun --het-group=0 --rdzv=torch printenv RANK > one.out 2>&1; echo "ONE_RC=$?"
SH
run_to 90 salloc -N1 : -N1 bash het.sh
diag "$(printf '%s\n' "$out" | tail -n 3)"
like "$out" "BOTH_RC=[1-9]" "a step across two het components fails"
like "$(cat both.out)" "heterogeneous steps .* are not supported" "the message says heterogeneous steps are not supported"
unlike "$(cat both.out)" "^[0-9]+$" "no task of the het step ran with a RANK"
like "$out" "ONE_RC=0" "a step in one component of a het job runs"
is "$(cat one.out)" "0" "and gets RANK 0"
done_testing
