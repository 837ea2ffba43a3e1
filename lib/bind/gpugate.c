/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* gpugate.c: the health gate's GPU-fault look; see gpugate.h. */
#include "config.h"
#include "gpugate.h"
#include "gpufault.h"
#include "identity.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int rdzv_gpu_slurm_index(const struct rdzv_topo *topo, const char *root, const char *gres_conf,
                         const char *node, const char *pci)
{
	struct rdzv_identity_req req = { root, gres_conf, node };
	struct rdzv_identity *id = NULL;
	char err[256];
	int k = -1;
	size_t i;

	if (!topo || !gres_conf || rdzv_identity_read(topo, &req, &id, err, sizeof(err)) < 0)
		return -1;
	for (i = 0; i < id->n && !id->positional; i++)
		if (strncasecmp(id->v[i].busid, pci, strlen(pci)) == 0) {
			k = (int)i;
			break;
		}
	rdzv_identity_destroy(id);
	return k;
}

static void note(struct rdzv_gpugate *g, const char *what)
{
	size_t o = strlen(g->notes);

	if (o < sizeof(g->notes) - 1)
		snprintf(g->notes + o, sizeof(g->notes) - o, "%s%.300s", o ? "; " : "", what);
}

int rdzv_gpugate_run(const struct rdzv_gpugate_req *r, struct rdzv_gpugate *out)
{
	const struct rdzv_conf *c = r->conf;
	const char *node = r->node ? r->node : "";
	char kmsg[RDZV_PATH_MAX], state[RDZV_PATH_MAX], cursor_path[RDZV_PATH_MAX + 16],
	     err[512], words[160];
	struct rdzv_xid_table table = { 0 };
	struct rdzv_gpu_cursor cursor;
	struct rdzv_gpufault_req req = { 0 };
	struct rdzv_gpufault f;
	long start = rdzv_now_ms();

	memset(out, 0, sizeof(*out));
	if (rdzv_xid_table_load(&table, c->xid_table[0] ? c->xid_table : RDZV_XID_TABLE_DEFAULT,
	                        err, sizeof(err)) < 0) {
		snprintf(words, sizeof(words), "Xid table: %.140s", err);
		note(out, words);
		snprintf(out->error, sizeof(out->error), "Xid table not used (no Xid drains): %.250s",
		         err);
	}
	if (rdzv_path_node(c->kmsg[0] ? c->kmsg : RDZV_KMSG_DEFAULT, node, kmsg, sizeof(kmsg), err,
	                   sizeof(err)) < 0
	    || rdzv_path_node(c->gpu_state_dir[0] ? c->gpu_state_dir : RDZV_GPU_STATE_DIR_DEFAULT,
	                      node, state, sizeof(state), err, sizeof(err)) < 0) {
		snprintf(words, sizeof(words), "GPU faults not looked at: %.120s", err);
		note(out, words);
		goto out;
	}
	snprintf(cursor_path, sizeof(cursor_path), "%s/gpu-cursor", state);
	if (rdzv_gpu_cursor_load(cursor_path, &cursor, err, sizeof(err)) < 0)
		note(out, err);
	req.root = c->identity_root;
	req.kmsg = kmsg;
	req.table = &table;
	req.cursor = &cursor;
	out->reports = rdzv_gpufault_look(&req, &f);
	if (f.note[0]) {
		note(out, f.note);
		if (!out->error[0])
			snprintf(out->error, sizeof(out->error), "%.290s", f.note);
	}
	if (f.reports && f.worst.node_fault) {
		int k = rdzv_gpu_slurm_index(r->topo, c->identity_root, r->gres_conf, node,
		                             f.worst.pci);
		char gpu[48];

		rdzv_gpu_fault_words(&f.worst, words, sizeof(words));
		if (k >= 0)
			snprintf(gpu, sizeof(gpu), "GPU %d (%s)", k, f.worst.pci);
		else
			snprintf(gpu, sizeof(gpu), "GPU %s", f.worst.pci);
		snprintf(out->fault, sizeof(out->fault), "%s: %.150s", gpu, words);
	} else if (f.reports) {
		char app[260];

		rdzv_gpu_fault_words(&f.worst, words, sizeof(words));
		snprintf(app, sizeof(app), "GPU %s: %s: the application's, not the node's",
		         f.worst.pci, words);
		note(out, app);
	}
	if (r->keep && rdzv_gpu_cursor_save(cursor_path, &cursor, err, sizeof(err)) < 0)
		note(out, err);
out:
	rdzv_xid_table_free(&table);
	out->ms = rdzv_now_ms() - start;
	return out->fault[0] ? 1 : 0;
}
