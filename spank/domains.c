/* SPDX-License-Identifier: GPL-2.0-or-later */
/* domains.c: nvlink_domain=nvml across nodes. srun cannot see
 * the GPUs of other nodes, and a node sees only its own: so for a step
 * whose Megatron groups may cross nodes, srun listens (one datagram socket,
 * one thread, from local_user_init), each node tells it the NVLink domain
 * its GPUs report (NVML's cluster UUID and clique) before its tasks start,
 * and waits; once every node has told, srun checks the groups by domain,
 * as it does with Slurm's blocks under nvlink_domain=block, and answers
 * every node: OK, or REFUSE with the message, which srun prints once. The
 * messages are lib/domains/domain.h's; the channel under them is channel.h's. Steps that need no answer (another mode,
 * every group size 1, one node) pay nothing: nothing is started. */
#include "config.h"
#include "handover.h"
#include "plugin.h"
#include "channel.h"
#include "hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "domain_verdict.h"
#include "megatron.h"
#include "util.h"

#define NODE_WAIT_MS 60000  /* a node's wait for srun's verdict */
#define NODE_RESEND_MS 500

/* ---- srun ---- */

static struct {
	struct rdzv_listener l;
	uint32_t nnodes, ntasks, told;
	int decided;
	char answer[RDZV_DOMAIN_DGRAM_MAX];
	struct rdzv_megatron_layout layout;
	uint32_t *rank_node;        /* owned: [ntasks] */
	char **node_names;          /* owned: [nnodes] */
	char (*names)[RDZV_DOMAIN_NAME_MAX]; /* [nnodes]: what each node said */
	unsigned char *told_by;     /* [nnodes] */
	struct sockaddr_storage *from; /* [nnodes] */
	socklen_t *fromlen;
} ns = { .l = { .sock = -1, .stop = { -1, -1 } } };

/* The verdict on the step's groups, once every node has told: into buf. */
static int verdict(char *buf, size_t len)
{
	char msg[RDZV_ERRLEN];
	int ok = rdzv_domains_verdict(&ns.layout, ns.nnodes, ns.ntasks,
	                              (const char(*)[RDZV_DOMAIN_NAME_MAX])ns.names, ns.rank_node,
	                              ns.node_names, msg, sizeof(msg));

	if (!ok) {
		fprintf(stderr, RDZV_TAG ": error: --rdzv=megatron layout check: %s\n", msg);
		fflush(stderr);
	}
	return rdzv_domain_verdict_format(ns.l.addr.job, ns.l.addr.step, ns.l.addr.nonce, ok, msg, buf,
	                                  len);
}

/* One node's domain; once every node has told, the verdict to all. */
static void on_report(struct rdzv_listener *l, const char *buf, size_t n,
                      const struct sockaddr *from, socklen_t flen, void *ctx)
{
	struct rdzv_domain_report r;
	uint32_t i;

	(void)ctx;
	if (rdzv_domain_report_parse(buf, n, &r) < 0 || r.job_id != l->addr.job
	    || r.step_id != l->addr.step || r.nonce != l->addr.nonce || r.node_id >= ns.nnodes)
		return;
	if (ns.decided) { /* a node that missed the answer asks again */
		rdzv_listener_reply(l, ns.answer, strlen(ns.answer), from, flen);
		return;
	}
	if (!ns.told_by[r.node_id]) {
		ns.told_by[r.node_id] = 1;
		ns.told++;
	}
	snprintf(ns.names[r.node_id], RDZV_DOMAIN_NAME_MAX, "%s", r.name);
	memcpy(&ns.from[r.node_id], from, flen);
	ns.fromlen[r.node_id] = flen;
	if (ns.told < ns.nnodes)
		return;
	if (verdict(ns.answer, sizeof(ns.answer)) < 0)
		snprintf(ns.answer, sizeof(ns.answer), "RDZVD1 REFUSE %u.%u %016llx\n%s", l->addr.job,
		         l->addr.step, (unsigned long long)l->addr.nonce, "srun's answer did not fit");
	ns.decided = 1;
	for (i = 0; i < ns.nnodes; i++)
		rdzv_listener_reply(l, ns.answer, strlen(ns.answer), (struct sockaddr *)&ns.from[i],
		                    ns.fromlen[i]);
}

static const struct rdzv_listener_ops domain_ops = { RDZV_DOMAIN_DGRAM_MAX, on_report, NULL };

static void state_free(void)
{
	uint32_t i;

	if (ns.node_names)
		for (i = 0; i < ns.nnodes; i++)
			free(ns.node_names[i]);
	free(ns.node_names);
	free(ns.rank_node);
	free(ns.names);
	free(ns.told_by);
	free(ns.from);
	free(ns.fromlen);
	ns.node_names = NULL;
	ns.rank_node = NULL;
	ns.names = NULL;
	ns.told_by = NULL;
	ns.from = NULL;
	ns.fromlen = NULL;
	ns.told = 0;
	ns.decided = 0;
}

int rdzv_domains_srun_start(uint32_t job, uint32_t step, uint32_t nnodes, uint32_t ntasks,
                            const struct rdzv_megatron_layout *l, uint32_t **rank_node,
                            char ***node_names, char *err, size_t errlen)
{
	char text[RDZV_CHANNEL_VAR_MAX];

	ns.nnodes = nnodes;
	ns.ntasks = ntasks;
	ns.layout = *l;
	ns.rank_node = *rank_node; /* taken over */
	ns.node_names = *node_names;
	*rank_node = NULL;
	*node_names = NULL;
	if (!(ns.names = calloc(nnodes, sizeof(*ns.names))) || !(ns.told_by = calloc(nnodes, 1))
	    || !(ns.from = calloc(nnodes, sizeof(*ns.from)))
	    || !(ns.fromlen = calloc(nnodes, sizeof(*ns.fromlen)))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if (rdzv_listener_open(&ns.l, job, step) < 0
	    || rdzv_channel_var_format(&ns.l.addr, text, sizeof(text)) < 0) {
		rdzv_err(err, errlen, "cannot listen for the nodes' NVLink domains: %s",
		         strerror(errno));
		goto fail;
	}
	if (rdzv_listener_start(&ns.l, &domain_ops, NULL) < 0) {
		rdzv_err(err, errlen, "cannot start srun's NVLink domain listener");
		goto fail;
	}
	/* srun merges its environment into the step's after this hook. */
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_DOMAIN_ASK, text, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rdzv_domains_srun_stop();
	return -1;
}

void rdzv_domains_srun_stop(void)
{
	rdzv_listener_close(&ns.l);
	state_free();
}

/* ---- the nodes ---- */

struct ask_ctx {
	const struct rdzv_channel_addr *a;
	char why[96];
};

/* srun's verdict: 1 OK, 0 REFUSE (why), -1 not this ask's. */
static int take_verdict(const char *buf, size_t n, void *ctx)
{
	struct ask_ctx *c = ctx;

	return rdzv_domain_verdict_parse(buf, n, c->a->job, c->a->step, c->a->nonce, c->why,
	                                 sizeof(c->why));
}

int rdzv_domains_node_ask(spank_t sp, const struct rdzv_step *st, const char *node, char *err,
                          size_t errlen)
{
	struct rdzv_domain_report r;
	struct rdzv_channel_addr a;
	struct rdzv_channel_peer peer;
	struct ask_ctx c = { &a, "" };
	char *text = NULL, host[RDZV_HOST_MAX], msg[RDZV_DOMAIN_DGRAM_MAX + 1];
	char buf[RDZV_DOMAIN_DGRAM_MAX + 1];
	int rc;

	rc = rdzv_step_take(sp, RDZV_HO_DOMAIN_ASK, RDZV_DOMAIN_ASK_VAR, &text, NULL, 0);
	if (rc == 0)
		return 0; /* srun asked for nothing: no check across nodes */
	rc = rc < 0 || rdzv_channel_var_parse(text, &a, NULL) < 0 || a.port == 0 ? -1 : 0;
	free(text);
	if (rc < 0)
		return rdzv_err(err, errlen, "%s is malformed", RDZV_HO_DOMAIN_ASK);
	if (a.job != st->job_id || a.step != st->step_id)
		return 0; /* another step's */
	if (rdzv_job_getenv(sp, "SLURM_SRUN_COMM_HOST", host, sizeof(host)) <= 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: no SLURM_SRUN_COMM_HOST to tell "
		                "srun this node's NVLink domain");
	r.job_id = a.job;
	r.step_id = a.step;
	r.nonce = a.nonce;
	r.node_id = st->node_id;
	snprintf(r.name, sizeof(r.name), "%s", st->domain);
	if (rdzv_domain_report_format(&r, buf, sizeof(buf)) < 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: domain name %.64s", st->domain);
	if (rdzv_channel_peer_resolve(host, a.port, &peer) < 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: srun's host %s does not resolve",
		                host);
	rc = rdzv_channel_ask(&peer, buf, NODE_WAIT_MS, NODE_RESEND_MS, msg, RDZV_DOMAIN_DGRAM_MAX,
	                      take_verdict, &c);
	if (rc == -1)
		return rdzv_err(err, errlen, "socket: %s", strerror(errno));
	if (rc == -2)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: node %s: srun did not answer the "
		                "NVLink domain check in %d s", node, NODE_WAIT_MS / 1000);
	if (rc == 0)
		return rdzv_err(err, errlen, "srun refused the step's Megatron layout by "
		                "NVLink domain (its message above: %s...)", c.why);
	return 0;
}
