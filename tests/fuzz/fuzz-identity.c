/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-identity.c: what GPU identity and the node model cache read.
 * The first byte picks the surface, the rest (after the first line) is its
 * text:
 *   'g' a gres.conf -> rdzv_identity_read on a 2-GPU model whose /proc tree
 *       (minors 0 and 1) is written once; then lines of the gres.conf are
 *       also tried as UUIDs (rdzv_identity_uuid)
 *   'c' a cache file -> rdzv_topo_deserialize under key "fuzz"; an accepted
 *       model is then used to compute a table
 *   't' line 2: the step's CUDA_VISIBLE_DEVICES, line 3: a task's own ->
 *       rdzv_bind_compute then rdzv_bind_task_row (both renumbering modes)
 *   'a' a gres.conf on a 2-GPU AMD model whose sysfs DRM tree (renderD128
 *       and card0 -> the second GPU, renderD129 -> the first) is written
 *       once; then line 2 as a task's ROCR_VISIBLE_DEVICES row
 *   'v' lines 2-6: a task's ROCR_, CUDA_, HIP_VISIBLE_DEVICES,
 *       GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK ("-" unset) ->
 *       rdzv_bind_amd_visibility
 * Invariants: only running out of memory fails identity_read; a map holds
 * topology GPUs or -1, and none is -1 unless the map is positional; an
 * accepted model has its counts and terminated names; a task's row is one
 * of the table's rows or single rows, or NULL with a reason. */
#include "config.h"
#include "fuzz.h"
#include "bindmode.h"
#include "envset.h"
#include "identity.h"
#include "topo.h"
#include "topocache.h"

#include <sys/stat.h>
#include <unistd.h>

static const char model_text[] =
	"rdzv-topo-cache 3\nkey fuzz\ncounts 2 1 2 3\n"
	"gpu 0000:03:00.0 10de 20b0 0-1 A100\ngpu 0000:44:00.0 10de 20b0 2-3 A100\n"
	"nic 0000:04:00.0 mlx5_0 1 4 0\nnear 0\nnear 5\ncore 0-1\ncore 2-3\nallowed 0-3\nend\n";

static const char amd_text[] =
	"rdzv-topo-cache 3\nkey fuzz\ncounts 2 1 2 3\n"
	"gpu 0000:c1:00.0 1002 7408 0-1 MI250X\ngpu 0000:c6:00.0 1002 7408 2-3 MI250X\n"
	"nic 0000:04:00.0 mlx5_0 1 4 0\nnear 0\nnear 5\ncore 0-1\ncore 2-3\nallowed 0-3\nend\n";

static char root[] = "/tmp/rdzv-fuzz-identity.XXXXXX";
static int ready;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		return;
}

static void setup(void)
{
	char p[256];

	if (ready || !mkdtemp(root))
		return;
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/proc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:03:00.0", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:03:00.0/information", root);
	write_file(p, "GPU UUID: GPU-aaaa\nBus Location: 0000:03:00.0\nDevice Minor: 0\n");
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:44:00.0", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:44:00.0/information", root);
	write_file(p, "GPU UUID: GPU-bbbb\nBus Location: 0000:44:00.0\nDevice Minor: 1\n");
	{
		static const char *const drm[][2] = {
			{ "renderD128", "0000:c6:00.0" }, { "card0", "0000:c6:00.0" },
			{ "renderD129", "0000:c1:00.0" }, { "card0-DP-1", "0000:c1:00.0" },
		};
		char q[300];
		size_t i;

		snprintf(p, sizeof(p), "%s/sys", root);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/sys/class", root);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/sys/class/drm", root);
		mkdir(p, 0755);
		for (i = 0; i < sizeof(drm) / sizeof(drm[0]); i++) {
			snprintf(p, sizeof(p), "%s/sys/class/drm/%s", root, drm[i][0]);
			mkdir(p, 0755);
			snprintf(p, sizeof(p), "%s/sys/class/drm/%s/device", root, drm[i][0]);
			snprintf(q, sizeof(q), "../../../devices/pci0000:c0/%s", drm[i][1]);
			if (symlink(q, p) < 0)
				return;
		}
	}
	ready = 1;
}

static struct rdzv_topo *model(void)
{
	struct rdzv_topo *t = NULL;
	char err[256];

	FUZZ_ASSERT(rdzv_topo_deserialize(model_text, "fuzz", &t, err, sizeof(err)) == 0);
	return t;
}

/* The identity map of model t under a gres.conf of text (written to the
 * fixture root as file) and that root: identity_read fails only out of
 * memory; every entry is a topology GPU of the 2, or -1 only in a
 * positional map. */
static struct rdzv_identity *read_map(const struct rdzv_topo *t, const char *file,
                                      const char *text)
{
	struct rdzv_identity_req req = { root, NULL, "n1" };
	struct rdzv_identity *id = NULL;
	char conf[300], err[256];
	size_t k;

	setup();
	snprintf(conf, sizeof(conf), "%s/%s", root, file);
	write_file(conf, text);
	req.gres_conf = conf;
	FUZZ_ASSERT(rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0);
	FUZZ_ASSERT(memchr(id->why, '\0', sizeof(id->why)) != NULL);
	for (k = 0; k < id->n; k++) {
		FUZZ_ASSERT(id->v[k].gpu >= -1 && id->v[k].gpu < 2);
		FUZZ_ASSERT(id->positional || id->v[k].gpu >= 0);
	}
	return id;
}

static void fuzz_gres(struct fuzz_pieces *p, const char *text)
{
	struct rdzv_topo *t = model();
	struct rdzv_identity *id = read_map(t, "gres.conf", text);
	int i;

	for (i = 1; i < p->n; i++) {
		int g = rdzv_identity_uuid(id, p->v[i]);

		FUZZ_ASSERT(g >= -1 && g < 2);
	}
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
}

static void fuzz_amd(struct fuzz_pieces *p, const char *text)
{
	struct rdzv_topo *t = NULL;
	struct rdzv_identity *id;
	struct rdzv_bind_req breq = { 0 };
	struct rdzv_bind_table *tab = NULL;
	char err[256], why[512];
	enum rdzv_task_row how;

	FUZZ_ASSERT(rdzv_topo_deserialize(amd_text, "fuzz", &t, err, sizeof(err)) == 0);
	FUZZ_ASSERT(rdzv_topo_gpus_amd(t));
	id = read_map(t, "gres-amd.conf", text);
	FUZZ_ASSERT(id->amd);
	breq.step_gpus = "0,1";
	breq.visible = "0,1";
	breq.ntasks = 2;
	breq.ident = id;
	breq.amd = 1;
	if (rdzv_bind_compute(t, &breq, &tab, err, sizeof(err)) == 0) {
		const struct rdzv_bind_row *r;

		FUZZ_ASSERT(tab->amd);
		r = rdzv_bind_task_row(tab, 1, p->n > 1 ? p->v[1] : NULL, id, 0, &how, why, sizeof(why));
		FUZZ_ASSERT(r || how == RDZV_ROW_SKIP);
	}
	rdzv_bind_table_destroy(tab);
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
}

static void fuzz_visibility(struct fuzz_pieces *p)
{
	struct rdzv_envset *env = rdzv_envset_create();
	struct rdzv_amd_vis v;
	const char *val[5];
	char warn[512], err[256];
	int i;

	FUZZ_ASSERT(env);
	for (i = 0; i < 5; i++)
		val[i] = p->n > i + 1 && strcmp(p->v[i + 1], "-") != 0 ? p->v[i + 1] : NULL;
	v.rocr = val[0];
	v.cuda = val[1];
	v.hip = val[2];
	v.gpu_ordinal = val[3];
	v.ze = val[4];
	if (rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, sizeof(err)) == 0) {
		FUZZ_ASSERT(memchr(warn, '\0', sizeof(warn)) != NULL);
		/* never an entry that sets, only removals of Slurm's copies */
		for (size_t k = 0; k < env->n; k++)
			FUZZ_ASSERT(env->v[k].policy == RDZV_SET_UNSET);
		FUZZ_ASSERT(v.rocr || (env->n == 0 && !warn[0]));
	}
	rdzv_envset_destroy(env);
}

static void fuzz_cache(const char *text)
{
	struct rdzv_topo *t = NULL;
	struct rdzv_bind_req req = { 0 };
	struct rdzv_bind_table *tab = NULL;
	char err[256], line[4096], gpus[64];
	size_t i;
	int rc = rdzv_topo_deserialize(text, "fuzz", &t, err, sizeof(err));

	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc != 0) {
		FUZZ_ASSERT(!t);
		return;
	}
	for (i = 0; i < rdzv_topo_gpu_count(t); i++)
		FUZZ_ASSERT(rdzv_topo_format_gpu(t, i, line, sizeof(line)) == 0
		            || strlen(line) < sizeof(line));
	for (i = 0; i < rdzv_topo_nic_count(t); i++)
		(void)rdzv_topo_format_nic(t, i, line, sizeof(line));
	if (rdzv_topo_gpu_list(t, gpus, sizeof(gpus)) == 0) {
		req.step_gpus = gpus;
		req.ntasks = 3;
		if (rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) == 0)
			FUZZ_ASSERT(tab->nrows == 3);
	}
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

static void fuzz_task(struct fuzz_pieces *p)
{
	struct rdzv_topo *t = model();
	struct rdzv_bind_req req = { 0 };
	struct rdzv_bind_table *tab = NULL;
	char err[256], why[512];
	enum rdzv_task_row how;
	int per;

	req.step_gpus = "0,1";
	req.visible = p->n > 1 ? p->v[1] : "0,1";
	req.ntasks = 2;
	if (rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) == 0) {
		for (per = 0; per < 2; per++) {
			const struct rdzv_bind_row *r = rdzv_bind_task_row(tab, 1, p->n > 2 ? p->v[2] : NULL,
			                                                   NULL, per, &how, why, sizeof(why));

			FUZZ_ASSERT(!r || (r >= tab->rows && r < tab->rows + tab->nrows)
			            || (r >= tab->single && r < tab->single + tab->ngpus));
			FUZZ_ASSERT(r || how == RDZV_ROW_SKIP);
		}
	}
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	char *all;
	const char *rest;

	if (size < 1 || fuzz_split(data, size, &p) < 0)
		return 0;
	if (!(all = fuzz_string(data, size))) {
		fuzz_pieces_free(&p);
		return 0;
	}
	rest = strchr(all, '\n') ? strchr(all, '\n') + 1 : "";
	switch (p.v[0][0]) {
	case 'g':
		fuzz_gres(&p, rest);
		break;
	case 'c':
		fuzz_cache(rest);
		break;
	case 't':
		fuzz_task(&p);
		break;
	case 'a':
		fuzz_amd(&p, rest);
		break;
	case 'v':
		fuzz_visibility(&p);
		break;
	default:
		break;
	}
	free(all);
	fuzz_pieces_free(&p);
	return 0;
}
