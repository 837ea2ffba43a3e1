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
 * Invariants: only running out of memory fails identity_read; a map holds
 * topology GPUs or -1, and none is -1 unless the map is positional; an
 * accepted model has its counts and terminated names; a task's row is one
 * of the table's rows or single rows, or NULL with a reason. */
#include "config.h"
#include "fuzz.h"
#include "identity.h"
#include "topo.h"
#include "topocache.h"

#include <sys/stat.h>
#include <unistd.h>

static const char model_text[] =
	"rdzv-topo-cache 3\nkey fuzz\ncounts 2 1 2 3\n"
	"gpu 0000:03:00.0 10de 20b0 0-1 A100\ngpu 0000:44:00.0 10de 20b0 2-3 A100\n"
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
	ready = 1;
}

static struct rdzv_topo *model(void)
{
	struct rdzv_topo *t = NULL;
	char err[256];

	FUZZ_ASSERT(rdzv_topo_deserialize(model_text, "fuzz", &t, err, sizeof(err)) == 0);
	return t;
}

static void fuzz_gres(struct fuzz_pieces *p, const char *text)
{
	struct rdzv_topo *t = model();
	struct rdzv_identity *id = NULL;
	struct rdzv_identity_req req;
	char conf[300], err[256];
	size_t k;
	int i;

	setup();
	snprintf(conf, sizeof(conf), "%s/gres.conf", root);
	write_file(conf, text);
	req.root = root;
	req.gres_conf = conf;
	req.node = "n1";
	FUZZ_ASSERT(rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0);
	FUZZ_ASSERT(memchr(id->why, '\0', sizeof(id->why)) != NULL);
	for (k = 0; k < id->n; k++) {
		FUZZ_ASSERT(id->v[k].gpu >= -1 && id->v[k].gpu < 2);
		FUZZ_ASSERT(id->positional || id->v[k].gpu >= 0);
	}
	for (i = 1; i < p->n; i++) {
		int g = rdzv_identity_uuid(id, p->v[i]);

		FUZZ_ASSERT(g >= -1 && g < 2);
	}
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
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
	default:
		break;
	}
	free(all);
	fuzz_pieces_free(&p);
	return 0;
}
