/* fuzz-plan.c: the step plan srun hands to the nodes (RDZV_STEP_PLAN, read
 * in slurmstepd from the job's environment, which a user can set) and srun's
 * own command line scanned for -w/--nodelist/-F. Input: the first line is a
 * plan; every following line is one word of an srun command line.
 * Invariants: an accepted plan has a port in range and a host (maybe empty)
 * that fits, and formats back (into a buffer sized as spank/local.c sizes
 * it; one byte less is refused) to a string that parses to the same plan,
 * node order included; the
 * command-line scan returns a value that fits its buffer and never reads
 * past argc; the first line read as an exported JAX_COORDINATOR_ADDRESS
 * (rdzv_hostport_split) gives a non-empty host that fits and a port in
 * range. */
#include "config.h"
#include "fuzz.h"
#include "master.h"
#include "port.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_plan plan, again;
	char err[256], *text, out[64];
	size_t textlen;
	int is_file = 0, rc;

	if (fuzz_split(data, size, &p) < 0)
		return 0;
	if (rdzv_plan_parse(p.v[0], &plan, err, sizeof(err)) == 0) {
		FUZZ_ASSERT(plan.port >= RDZV_PORT_MIN);
		FUZZ_ASSERT(strlen(plan.host) < sizeof(plan.host));
		/* As spank/local.c sizes it: the host, the node order and the rest. */
		textlen = sizeof(plan.host) + (plan.order ? strlen(plan.order) : 0) + 64;
		FUZZ_ASSERT((text = malloc(textlen)) != NULL);
		FUZZ_ASSERT(rdzv_plan_format(&plan, text, textlen) == 0);
		FUZZ_ASSERT(rdzv_plan_parse(text, &again, err, sizeof(err)) == 0);
		FUZZ_ASSERT(again.job_id == plan.job_id && again.step_id == plan.step_id
		            && again.port == plan.port
		            && again.port_from_option == plan.port_from_option
		            && strcmp(again.host, plan.host) == 0
		            && again.order_known == plan.order_known
		            && strcmp(again.order ? again.order : "", plan.order ? plan.order : "") == 0);
		/* One byte short of what it needs: refused, never cut. */
		FUZZ_ASSERT(rdzv_plan_format(&plan, text, strlen(text)) < 0);
		free(text);
	}
	{
		char host[64];
		uint16_t port = 0;

		if (rdzv_hostport_split(p.v[0], host, sizeof(host), &port, err, sizeof(err)) == 0)
			FUZZ_ASSERT(host[0] != '\0' && strlen(host) < sizeof(host)
			            && port >= RDZV_PORT_MIN);
	}
	/* p.v[0] stands for argv[0] ("srun"). */
	rc = rdzv_srun_arg_nodelist(p.n, p.v, out, sizeof(out), &is_file, err, sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc == 1)
		FUZZ_ASSERT(strlen(out) < sizeof(out) && (is_file == 0 || is_file == 1));
	fuzz_pieces_free(&p);
	return 0;
}
