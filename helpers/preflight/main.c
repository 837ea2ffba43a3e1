/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-preflight: prove a step's rendezvous, GPUs and network before the
 * real job runs. Run it as a step with the training step's options:
 *
 *     srun --rdzv=torch rdzv-preflight [--cpu] [--json] [--timeout=SEC]
 *
 * Every rank reads the variables a training script would, meets the others
 * through a TCP bootstrap hosted by rank 0 at MASTER_ADDR:MASTER_PORT, and
 * the ranks check together; rank 0 prints one summary. Exit status: 0 when
 * every check passed, 1 when one failed, 2 for a usage or environment
 * error found before meeting the others. doc/preflight.md has the details. */
#include "config.h"
#include "preflight.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busbw.h"

#define EXIT_CHECKS 1
#define EXIT_USAGE 2

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rdzv-preflight [OPTIONS]\n"
	        "Check the rendezvous, binding, network and GPUs of a step before the real job.\n"
	        "Run as a step: srun --rdzv=torch rdzv-preflight (one task per rank).\n"
	        "Reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.\n"
	        "  --cpu              CPU path only: bootstrap and TCP ring, no CUDA/NCCL\n"
	        "  --gpu              require the GPU path (fail when no rank has a GPU)\n"
	        "  --timeout=SEC      bound on each wait: joining, ring links, NCCL init (60)\n"
	        "  --json             machine-readable summary on stdout (rank 0)\n"
	        "  -v, --verbose      every rank's details, even when all passed\n"
	        "  --ring-bytes=SIZE  TCP ring all-reduce size (4M)\n"
	        "  --min-bytes=SIZE   NCCL sweep start (8)\n"
	        "  --max-bytes=SIZE   NCCL sweep end (256M); sizes grow by 4\n"
	        "  --iters=N          timed iterations per size (20)\n"
	        "  --outlier=FRAC     a rank or node below FRAC x median is an outlier (0.7)\n"
	        "  --fabric           print this node's NVLink fabric as NVML reports it (one\n"
	        "                     line per GPU) and exit; no rendezvous (NVML from\n"
	        "                     $RDZV_NVML_LIBRARY, else libnvidia-ml.so.1)\n"
	        "  --xgmi             print this node's AMD GPUs as ROCm SMI reports them (GPU,\n"
	        "                     bus id, xGMI hive, xGMI health) and exit; no rendezvous\n"
	        "                     (ROCm SMI from $RDZV_RSMI_LIBRARY, else\n"
	        "                     librocm_smi64.so.1)\n"
	        "  --node             check this node as the plugin's job prolog does\n"
	        "                     (health_check=): GPU files of gres.conf, NVML's health,\n"
	        "                     the topology's NIC ports; one line, exit 0 healthy, 1 not\n"
	        "                     (for NHC); no rendezvous\n"
	        "  --plugstack=FILE   --node: the rdzv.so line's settings (default: next to\n"
	        "                     $SLURM_CONF, else /etc/slurm/plugstack.conf)\n"
	        "  --name=NODE        --node: Slurm's name of the node ($SLURMD_NODENAME, else\n"
	        "                     the short host name)\n"
	        "  -h, --help         this text\n"
	        "  --version          the release (spank-rdzv's) and the GPU build, then exit\n"
	        "Exit status: 0 every check passed, 1 a check failed, 2 usage or environment.\n");
}

static int node_mode;
static const char *node_plugstack, *node_name;

static int parse_opts(int argc, char **argv, struct pf_opts *o)
{
	static const struct option longopts[] = {
		{ "cpu", no_argument, NULL, 'c' },
		{ "gpu", no_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "ring-bytes", required_argument, NULL, 'r' },
		{ "min-bytes", required_argument, NULL, 'b' },
		{ "max-bytes", required_argument, NULL, 'e' },
		{ "iters", required_argument, NULL, 'n' },
		{ "outlier", required_argument, NULL, 'o' },
		{ "fabric", no_argument, NULL, 'F' },
		{ "xgmi", no_argument, NULL, 'X' },
		{ "node", no_argument, NULL, 'N' },
		{ "plugstack", required_argument, NULL, 'P' },
		{ "name", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	uint64_t x;
	int c;

	memset(o, 0, sizeof(*o));
	o->timeout_s = 60;
	o->min_bytes = 8;
	o->max_bytes = 256u << 20;
	o->iters = 20;
	o->ring_bytes = 4u << 20;
	o->outlier = 0.7;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->cpu_only = 1; break;
		case 'g': o->gpu_required = 1; break;
		case 'j': o->json = 1; break;
		case 'v': o->verbose = 1; break;
		case 't':
			if (rdzv_parse_u64(optarg, 1, 86400, &x) < 0) {
				fprintf(stderr, PF_TAG ": --timeout=%s: give seconds, 1..86400\n", optarg);
				return -1;
			}
			o->timeout_s = (unsigned)x;
			break;
		case 'n':
			if (rdzv_parse_u64(optarg, 1, 100000, &x) < 0) {
				fprintf(stderr, PF_TAG ": --iters=%s: give 1..100000\n", optarg);
				return -1;
			}
			o->iters = (unsigned)x;
			break;
		case 'r':
		case 'b':
		case 'e':
			if (rdzv_bw_parse_size(optarg, &x, err, sizeof(err)) < 0) {
				fprintf(stderr, PF_TAG ": --%s=%s: %s\n", c == 'r' ? "ring-bytes"
				        : c == 'b' ? "min-bytes" : "max-bytes", optarg, err);
				return -1;
			}
			*(c == 'r' ? &o->ring_bytes : c == 'b' ? &o->min_bytes : &o->max_bytes) = x;
			break;
		case 'o': {
			char *end;

			o->outlier = strtod(optarg, &end);
			if (*end || !(o->outlier > 0 && o->outlier <= 1)) {
				fprintf(stderr, PF_TAG ": --outlier=%s: give a fraction in (0, 1]\n", optarg);
				return -1;
			}
			break;
		}
		case 'F':
			exit(pf_fabric_print(stdout));
		case 'X':
			exit(pf_xgmi_print(stdout, NULL));
		case 'N': node_mode = 1; break;
		case 'P': node_plugstack = optarg; break;
		case 'M': node_name = optarg; break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			rdzv_print_version(PF_TAG);
			printf("Built with: %s\n", pf_gpu_build());
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PF_TAG ": unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->cpu_only && o->gpu_required) {
		fprintf(stderr, PF_TAG ": --cpu and --gpu contradict each other\n");
		return -1;
	}
	if (o->min_bytes > o->max_bytes) {
		fprintf(stderr, PF_TAG ": --min-bytes is above --max-bytes\n");
		return -1;
	}
	return 0;
}

/* Rank 0: run the NCCL path or not, and why. Every rank learns it from the
 * plan, so they all take the same path. */
static void decide_gpu(const struct pf_opts *o, const struct pf_report *reps, uint32_t world,
                       struct pf_plan *plan)
{
	uint32_t r, have = 0, first_without = world;
	char err[256];

	if (o->cpu_only) {
		snprintf(plan->gpu_why, sizeof(plan->gpu_why), "not checked: --cpu given");
		return;
	}
	for (r = 0; r < world; r++) {
		if (reps[r].gpu_index >= 0)
			have++;
		else if (first_without == world)
			first_without = r;
	}
	if (have == 0) {
		plan->gpu_fail = o->gpu_required;
		snprintf(plan->gpu_why, sizeof(plan->gpu_why), "%s: no rank has a usable GPU (rank 0: %s)",
		         o->gpu_required ? "--gpu given" : "not checked, CPU path only",
		         reps[0].gpu_note[0] ? reps[0].gpu_note : "no GPU");
		return;
	}
	if (have < world) {
		/* Some ranks have GPUs, some do not: a broken node or binding. */
		plan->gpu_fail = 1;
		snprintf(plan->gpu_why, sizeof(plan->gpu_why), "%u of %u ranks have no usable GPU; "
		         "first: rank %u on %s: %s", world - have, world, first_without,
		         reps[first_without].host, reps[first_without].gpu_note[0]
		             ? reps[first_without].gpu_note : "see binding");
		return;
	}
	if (pf_gpu_unique_id(plan->nccl_id, sizeof(plan->nccl_id), err, sizeof(err)) < 0) {
		plan->gpu_fail = 1;
		snprintf(plan->gpu_why, sizeof(plan->gpu_why), "rank 0 on %s: %s", reps[0].host, err);
		return;
	}
	plan->gpu = 1;
	snprintf(plan->gpu_why, sizeof(plan->gpu_why), "every rank has a GPU");
}

static int unpack_all(const unsigned char *all, size_t len, uint32_t world,
                      const unsigned char ***ptr, uint32_t **lens, char *err, size_t errlen)
{
	*ptr = calloc(world, sizeof(**ptr));
	*lens = calloc(world, sizeof(**lens));
	if (!*ptr || !*lens)
		return rdzv_err(err, errlen, "out of memory");
	return rdzv_boot_all_unpack(all, len, world, *ptr, *lens, err, errlen);
}

/* The transport both roles share: rank 0 serves, the others are clients. */
struct link {
	struct rdzv_boot_server *srv;
	struct rdzv_boot_client *cli;
	int aborted;
};

static int allgather(struct link *l, uint32_t seq, const char *mine, size_t len, int64_t deadline,
                     unsigned char **all, size_t *alllen, char *err, size_t errlen)
{
	if (l->srv)
		return rdzv_boot_server_allgather(l->srv, seq, mine, (uint32_t)len, deadline, all, alllen,
		                                  err, errlen);
	return rdzv_boot_client_allgather(l->cli, seq, mine, (uint32_t)len, deadline, all, alllen,
	                                  &l->aborted, err, errlen);
}

/* rank 0's message for a failed join: the reason, then one line per rank
 * that never arrived with the node Slurm placed it on. */
static void describe_missing(const struct rdzv_boot_server *srv, uint32_t world, const char *why,
                             char *out, size_t outlen)
{
	size_t off;
	uint32_t r, shown = 0;

	snprintf(out, outlen, "%s", why);
	off = strlen(out);
	for (r = 1; r < world && shown < 12; r++) {
		char host[PF_HOST];
		int w;

		if (rdzv_boot_server_hello(srv, r))
			continue;
		pf_expected_host(r, host, sizeof(host));
		w = snprintf(out + off, outlen - off, "\nrank %u never connected%s%s%s", r,
		             host[0] ? " (Slurm placed it on " : "", host, host[0] ? ")" : "");
		if (w < 0 || (size_t)w >= outlen - off)
			break;
		off += (size_t)w;
		shown++;
	}
}

static void finish(const struct pf_run *run, const struct pf_verdict *v)
{
	if (run->env->rank != 0) {
		if (run->opts->verbose && run->reports)
			fprintf(stderr, PF_TAG ": rank %u on %s: %s\n", run->env->rank,
			        run->reports[run->env->rank].host, v->failed ? "FAIL (see rank 0)" : "PASS");
		return;
	}
	if (run->opts->json)
		pf_json_print(stdout, run, v);
	else
		pf_summary_print(stdout, run, v);
}

int main(int argc, char **argv)
{
	struct pf_opts opts;
	struct pf_env env;
	struct pf_report mine;
	struct pf_plan plan;
	struct pf_result res;
	struct pf_run run;
	struct pf_verdict *v = NULL;
	struct rdzv_boot_hello hello;
	struct link l = { NULL, NULL, 0 };
	char err[1024] = "", *blob = NULL;
	size_t blen = 0, alllen = 0;
	unsigned char *all = NULL;
	const unsigned char **ptr = NULL;
	uint32_t *lens = NULL, r;
	int64_t t0, deadline, wait;
	uint16_t link_port = 0;
	int lfd = -1, status = EXIT_CHECKS;
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	if (parse_opts(argc, argv, &opts) < 0)
		return EXIT_USAGE;
	if (node_mode)
		return pf_node_check(node_plugstack, node_name, stdout);
	if (pf_env_read(&env, err, sizeof(err)) < 0) {
		fprintf(stderr, PF_TAG ": %s (run it as a step of srun --rdzv=torch, or set them)\n", err);
		return EXIT_USAGE;
	}
	memset(&run, 0, sizeof(run));
	memset(&plan, 0, sizeof(plan));
	run.opts = &opts;
	run.env = &env;
	run.world = env.world;
	run.plan = &plan;
	v = calloc(1, sizeof(*v));
	if (!v) {
		fprintf(stderr, PF_TAG ": out of memory\n");
		return EXIT_CHECKS;
	}
	t0 = rdzv_boot_now_ms();
	deadline = t0 + (int64_t)opts.timeout_s * 1000;
	/* Other ranks wait longer than rank 0 for each answer: rank 0 always
	 * answers or aborts by its own deadline, and may have started late. */
	wait = (int64_t)opts.timeout_s * 1000 + 5000;

	pf_report_collect(&env, &mine);
	if (opts.cpu_only)
		snprintf(mine.gpu_note, sizeof(mine.gpu_note), "not probed: --cpu");
	else
		pf_gpu_probe(&env, &mine);
	/* Once per node: the fabric is the node's, not the rank's. */
	if (!opts.cpu_only && env.local_rank == 0) {
		pf_fabric_collect(&mine);
		pf_xgmi_collect(&mine, NULL);
	}
	lfd = rdzv_boot_listen(0, &link_port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, PF_TAG ": rank %u on %s: ring listener: %s\n", env.rank, mine.host, err);
		goto out;
	}
	mine.link_port = link_port;
	memset(&hello, 0, sizeof(hello));
	hello.world = env.world;
	hello.link_port = link_port;
	snprintf(hello.host, sizeof(hello.host), "%s", mine.host);
	for (i = 0; hello.host[i]; i++) /* the wire takes printable names only */
		if ((unsigned char)hello.host[i] <= 0x20 || (unsigned char)hello.host[i] > 0x7e)
			hello.host[i] = '_';
	snprintf(hello.session, sizeof(hello.session), "%s", env.session);

	/* Phase 1: meet, and gather every rank's report. */
	if (env.rank == 0) {
		pf_master_is_local(env.master_addr, run.master_note, sizeof(run.master_note));
		l.srv = rdzv_boot_server_create(env.master_port, env.world, env.session, hello.host,
		                                link_port, err, sizeof(err));
		if (!l.srv) {
			snprintf(run.fatal, sizeof(run.fatal), "rank 0 on %s cannot host the rendezvous: %s",
			         mine.host, err);
			goto verdict;
		}
	} else {
		l.cli = rdzv_boot_client_connect(env.master_addr, env.master_port, env.rank, &hello,
		                                 deadline, err, sizeof(err));
		if (!l.cli) {
			fprintf(stderr, PF_TAG ": FAIL: rank %u on %s: MASTER_ADDR=%s MASTER_PORT=%u: %s "
			        "(gave up after %u s)\n", env.rank, mine.host, env.master_addr,
			        env.master_port, err, opts.timeout_s);
			goto out;
		}
	}
	if (pf_report_encode(&mine, &blob, &blen) < 0) {
		fprintf(stderr, PF_TAG ": out of memory\n");
		goto out;
	}
	if (allgather(&l, 1, blob, blen, env.rank ? deadline + wait : deadline, &all, &alllen, err,
	              sizeof(err)) < 0) {
		if (l.srv)
			describe_missing(l.srv, env.world, err, run.fatal, sizeof(run.fatal));
		goto failed;
	}
	run.join_seconds = (double)(rdzv_boot_now_ms() - t0) / 1000.0;
	if (l.srv)
		run.strangers = rdzv_boot_server_rejected(l.srv);
	run.reports = calloc(env.world, sizeof(*run.reports));
	if (!run.reports || unpack_all(all, alllen, env.world, &ptr, &lens, err, sizeof(err)) < 0)
		goto failed_local;
	for (r = 0; r < env.world; r++)
		if (pf_report_decode((const char *)ptr[r], lens[r], &run.reports[r], err,
		                     sizeof(err)) < 0) {
			snprintf(run.fatal, sizeof(run.fatal), "rank %u's report does not parse: %s", r, err);
			goto failed;
		}

	/* Phase 2: rank 0's plan. */
	free(blob);
	blob = NULL;
	blen = 0;
	plan.world = env.world;
	if (l.srv) {
		plan.addr = calloc(env.world, sizeof(*plan.addr));
		plan.port = calloc(env.world, sizeof(*plan.port));
		if (!plan.addr || !plan.port)
			goto failed_local;
		decide_gpu(&opts, run.reports, env.world, &plan);
		snprintf(plan.addr[0], RDZV_BOOT_ADDR_MAX, "%s", env.master_addr);
		plan.port[0] = link_port;
		for (r = 1; r < env.world; r++) {
			snprintf(plan.addr[r], RDZV_BOOT_ADDR_MAX, "%s", rdzv_boot_server_peer_addr(l.srv, r));
			plan.port[r] = rdzv_boot_server_hello(l.srv, r)->link_port;
		}
		if (pf_plan_encode(&plan, &blob, &blen) < 0)
			goto failed_local;
	}
	free(all);
	all = NULL;
	if (allgather(&l, 2, blob ? blob : "", blen, env.rank ? rdzv_boot_now_ms() + 2 * wait
	              : rdzv_boot_now_ms() + wait, &all, &alllen, err, sizeof(err)) < 0 ||
	    rdzv_boot_all_unpack(all, alllen, env.world, ptr, lens, err, sizeof(err)) < 0) {
		snprintf(run.fatal, sizeof(run.fatal), "sharing the plan: %s", err);
		goto failed;
	}
	if (!l.srv && pf_plan_decode((const char *)ptr[0], lens[0], &plan, err, sizeof(err)) < 0) {
		snprintf(run.fatal, sizeof(run.fatal), "rank 0's plan does not parse: %s", err);
		goto failed;
	}

	/* The tests. */
	pf_result_init(&res);
	{
		int64_t start = rdzv_boot_now_ms(), tests_end;

		pf_ring_run(lfd, &env, run.reports, &plan, opts.ring_bytes,
		            start + (int64_t)opts.timeout_s * 1000, &res);
		/* The sweep gets four more timeouts: large sizes on a slow network
		 * take a while, and NCCL's init alone can take seconds. */
		tests_end = start + 5 * (int64_t)opts.timeout_s * 1000;
		if (plan.gpu)
			pf_gpu_run(&env, &opts, run.reports, &plan, tests_end, &res);

		/* Phase 3: every rank's results. */
		free(blob);
		blob = NULL;
		if (pf_result_encode(&res, &blob, &blen) < 0)
			goto failed_local;
		free(all);
		all = NULL;
		if (allgather(&l, 3, blob, blen, tests_end + (env.rank ? 2 * wait : wait), &all, &alllen,
		              err, sizeof(err)) < 0 ||
		    rdzv_boot_all_unpack(all, alllen, env.world, ptr, lens, err, sizeof(err)) < 0) {
			snprintf(run.fatal, sizeof(run.fatal), "gathering results: %s", err);
			goto failed;
		}
	}
	run.results = calloc(env.world, sizeof(*run.results));
	if (!run.results)
		goto failed_local;
	for (r = 0; r < env.world; r++)
		if (pf_result_decode((const char *)ptr[r], lens[r], &run.results[r], err,
		                     sizeof(err)) < 0) {
			snprintf(run.fatal, sizeof(run.fatal), "rank %u's results do not parse: %s", r, err);
			free(run.results);
			run.results = NULL;
			goto failed;
		}
	goto verdict;

failed_local:
	snprintf(run.fatal, sizeof(run.fatal), "rank %u on %s: %s", env.rank, mine.host,
	         err[0] ? err : "out of memory");
failed:
	if (!run.fatal[0])
		snprintf(run.fatal, sizeof(run.fatal), "%s", err);
	if (l.srv) {
		/* Until the join timeout, late ranks can still arrive: rank 0
		 * answers them with the reason instead of leaving them to retry. */
		rdzv_boot_server_abort(l.srv, run.fatal, run.reports ? 0 : deadline);
	} else {
		/* Rank 0 prints the reason once; the others only when told to,
		 * or when rank 0 could not hear about it. */
		if (!l.aborted || opts.verbose)
			fprintf(stderr, PF_TAG ": FAIL: rank %u on %s: %s\n", env.rank, mine.host,
			        run.fatal);
		goto out;
	}
verdict:
	pf_verdict_compute(&run, v);
	finish(&run, v);
	status = v->failed ? EXIT_CHECKS : 0;
out:
	if (lfd >= 0)
		close(lfd);
	rdzv_boot_server_destroy(l.srv);
	rdzv_boot_client_destroy(l.cli);
	pf_plan_free(&plan);
	free(run.reports);
	free(run.results);
	free(ptr);
	free(lens);
	free(all);
	free(blob);
	free(v);
	return status;
}
