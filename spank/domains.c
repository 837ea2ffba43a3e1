/* domains.c: nvlink_domain=nvml across nodes. srun cannot see
 * the GPUs of other nodes, and a node sees only its own: so for a step
 * whose Megatron groups may cross nodes, srun listens (one datagram socket,
 * one thread, from local_user_init), each node tells it the NVLink domain
 * its GPUs report (NVML's cluster UUID and clique) before its tasks start,
 * and waits; once every node has told, srun checks the groups by domain,
 * as it does with Slurm's blocks under nvlink_domain=block, and answers
 * every node: OK, or REFUSE with the message, which srun prints once. The
 * protocol is lib/rdzv/domain.h's. Steps that need no answer (another mode,
 * every group size 1, one node) pay nothing: nothing is started. */
#define _GNU_SOURCE 1 /* pipe2 */
#include "config.h"
#include "handover.h"
#include "plugin.h"
#include "channel.h"
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "domain.h"
#include "domain_verdict.h"
#include "megatron.h"
#include "util.h"

#define NODE_WAIT_MS 60000  /* a node's wait for srun's verdict */
#define NODE_RESEND_MS 500

/* ---- srun ---- */

static struct {
	int sock, stop[2], started;
	pthread_t th;
	uint32_t job, step, nnodes, ntasks;
	uint64_t nonce;
	struct rdzv_megatron_layout layout;
	uint32_t *rank_node;        /* owned: [ntasks] */
	char **node_names;          /* owned: [nnodes] */
	char (*names)[RDZV_DOMAIN_NAME_MAX]; /* [nnodes]: what each node said */
	unsigned char *told;        /* [nnodes] */
	struct sockaddr_storage *from; /* [nnodes] */
	socklen_t *fromlen;
} ns = { .sock = -1, .stop = { -1, -1 } };

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
	return rdzv_domain_verdict_format(ns.job, ns.step, ns.nonce, ok, msg, buf, len);
}

static void *listen_thread(void *arg)
{
	char buf[RDZV_DOMAIN_DGRAM_MAX + 1], answer[RDZV_DOMAIN_DGRAM_MAX];
	struct rdzv_domain_report r;
	uint32_t told = 0, i;
	int decided = 0;

	(void)arg;
	for (;;) {
		struct pollfd pf[2] = { { ns.sock, POLLIN, 0 }, { ns.stop[0], POLLIN, 0 } };
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		while (flen = sizeof(from),
		       (n = recvfrom(ns.sock, buf, RDZV_DOMAIN_DGRAM_MAX, 0, (struct sockaddr *)&from,
		                     &flen)) >= 0) {
			if (rdzv_domain_report_parse(buf, (size_t)n, &r) < 0 || r.job_id != ns.job
			    || r.step_id != ns.step || r.nonce != ns.nonce || r.node_id >= ns.nnodes)
				continue;
			if (decided) { /* a node that missed the answer asks again */
				(void)sendto(ns.sock, answer, strlen(answer), 0, (struct sockaddr *)&from,
				             flen);
				continue;
			}
			if (!ns.told[r.node_id]) {
				ns.told[r.node_id] = 1;
				told++;
			}
			snprintf(ns.names[r.node_id], RDZV_DOMAIN_NAME_MAX, "%s", r.name);
			memcpy(&ns.from[r.node_id], &from, flen);
			ns.fromlen[r.node_id] = flen;
			if (told < ns.nnodes)
				continue;
			if (verdict(answer, sizeof(answer)) < 0)
				snprintf(answer, sizeof(answer), "RDZVD1 REFUSE %u.%u %016llx\n%s", ns.job,
				         ns.step, (unsigned long long)ns.nonce, "srun's answer did not fit");
			decided = 1;
			for (i = 0; i < ns.nnodes; i++)
				(void)sendto(ns.sock, answer, strlen(answer), 0,
				             (struct sockaddr *)&ns.from[i], ns.fromlen[i]);
		}
	}
	return NULL;
}

static void state_free(void)
{
	uint32_t i;

	if (ns.node_names)
		for (i = 0; i < ns.nnodes; i++)
			free(ns.node_names[i]);
	free(ns.node_names);
	free(ns.rank_node);
	free(ns.names);
	free(ns.told);
	free(ns.from);
	free(ns.fromlen);
	ns.node_names = NULL;
	ns.rank_node = NULL;
	ns.names = NULL;
	ns.told = NULL;
	ns.from = NULL;
	ns.fromlen = NULL;
}

int rdzv_domains_local_start(uint32_t job, uint32_t step, uint32_t nnodes, uint32_t ntasks,
                             const struct rdzv_megatron_layout *l, uint32_t **rank_node,
                             char ***node_names, char *err, size_t errlen)
{
	char text[96];
	uint16_t port = 0;

	ns.job = job;
	ns.step = step;
	ns.nnodes = nnodes;
	ns.ntasks = ntasks;
	ns.layout = *l;
	ns.rank_node = *rank_node; /* taken over */
	ns.node_names = *node_names;
	*rank_node = NULL;
	*node_names = NULL;
	ns.nonce = rdzv_make_nonce();
	if (!(ns.names = calloc(nnodes, sizeof(*ns.names))) || !(ns.told = calloc(nnodes, 1))
	    || !(ns.from = calloc(nnodes, sizeof(*ns.from)))
	    || !(ns.fromlen = calloc(nnodes, sizeof(*ns.fromlen)))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if ((ns.sock = rdzv_dgram_listen(&port)) < 0 || pipe2(ns.stop, O_CLOEXEC) < 0
	    || rdzv_domain_ask_var_format(job, step, port, ns.nonce, text, sizeof(text)) < 0) {
		rdzv_err(err, errlen, "cannot listen for the nodes' NVLink domains: %s",
		         strerror(errno));
		goto fail;
	}
	if (pthread_create(&ns.th, NULL, listen_thread, NULL) != 0) {
		rdzv_err(err, errlen, "cannot start srun's NVLink domain listener");
		goto fail;
	}
	ns.started = 1;
	/* srun merges its environment into the step's after this hook. */
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_DOMAIN_ASK, text, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rdzv_domains_local_exit();
	return -1;
}

void rdzv_domains_local_exit(void)
{
	if (ns.started) {
		if (write(ns.stop[1], "x", 1) < 0) {
			/* our own pipe: cannot fail but for EINTR */
		}
		pthread_join(ns.th, NULL);
		ns.started = 0;
	}
	if (ns.sock >= 0)
		close(ns.sock);
	if (ns.stop[0] >= 0)
		close(ns.stop[0]);
	if (ns.stop[1] >= 0)
		close(ns.stop[1]);
	ns.sock = ns.stop[0] = ns.stop[1] = -1;
	state_free();
}

/* ---- the nodes ---- */

int rdzv_domains_node_ask(spank_t sp, const struct rdzv_step *st, const char *node, char *err,
                          size_t errlen)
{
	struct rdzv_domain_report r;
	struct addrinfo hints, *res = NULL;
	char *text = NULL, why[96], host[RDZV_HOST_MAX], port[8], msg[RDZV_DOMAIN_DGRAM_MAX + 1];
	char buf[RDZV_DOMAIN_DGRAM_MAX + 1];
	uint32_t job, step;
	uint16_t p;
	long deadline;
	int s, rc = -1;

	rc = rdzv_step_take(sp, RDZV_HO_DOMAIN_ASK, RDZV_DOMAIN_ASK_VAR, &text, NULL, 0);
	if (rc == 0)
		return 0; /* srun asked for nothing: no check across nodes */
	rc = rc < 0 || rdzv_domain_ask_var_parse(text, &job, &step, &p, &r.nonce) < 0 ? -1 : 0;
	free(text);
	if (rc < 0)
		return rdzv_err(err, errlen, "%s is malformed", RDZV_HO_DOMAIN_ASK);
	if (job != st->job_id || step != st->step_id)
		return 0; /* another step's */
	if (rdzv_job_getenv(sp, "SLURM_SRUN_COMM_HOST", host, sizeof(host)) <= 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: no SLURM_SRUN_COMM_HOST to tell "
		                "srun this node's NVLink domain");
	r.job_id = job;
	r.step_id = step;
	r.node_id = st->node_id;
	snprintf(r.name, sizeof(r.name), "%s", st->domain);
	if (rdzv_domain_report_format(&r, buf, sizeof(buf)) < 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: domain name %.64s", st->domain);
	snprintf(port, sizeof(port), "%u", p);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: srun's host %s does not resolve",
		                host);
	s = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		freeaddrinfo(res);
		return rdzv_err(err, errlen, "socket: %s", strerror(errno));
	}
	rc = -2;
	deadline = rdzv_now_ms() + NODE_WAIT_MS;
	while (rc == -2) {
		long left = deadline - rdzv_now_ms(), until;
		struct pollfd pf = { s, POLLIN, 0 };

		if (left <= 0)
			break;
		(void)sendto(s, buf, strlen(buf), 0, res->ai_addr, res->ai_addrlen);
		until = rdzv_now_ms() + (left < NODE_RESEND_MS ? left : NODE_RESEND_MS);
		for (;;) {
			long w = until - rdzv_now_ms();
			ssize_t n;
			int v;

			if (w <= 0 || poll(&pf, 1, (int)w) <= 0)
				break;
			n = recv(s, msg, RDZV_DOMAIN_DGRAM_MAX, 0);
			if (n <= 0)
				continue;
			v = rdzv_domain_verdict_parse(msg, (size_t)n, job, step, r.nonce, why,
			                              sizeof(why));
			if (v == 1) {
				rc = 0;
				break;
			}
			if (v == 0) {
				rc = rdzv_err(err, errlen, "srun refused the step's Megatron layout by "
				              "NVLink domain (its message above: %s...)", why);
				break;
			}
		}
	}
	close(s);
	freeaddrinfo(res);
	if (rc == -2)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: node %s: srun did not answer the "
		                "NVLink domain check in %d s", node, NODE_WAIT_MS / 1000);
	return rc;
}
