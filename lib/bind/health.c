/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* health.c: a node's quick check; see health.h. */
#define _GNU_SOURCE 1
#include "config.h"
#include "health.h"
#include "identity.h"
#include "gpulib.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NVIDIA_MAJOR 195
#define MINORS_MAX 256

static const char *root_of(const struct rdzv_health_req *r)
{
	return r->root && r->root[0] && strcmp(r->root, "/") != 0 ? r->root : "";
}

/* "WHAT: WHY" added to the notes. */
static void note(struct rdzv_health *h, const char *what, const char *why)
{
	size_t o = strlen(h->notes);

	if (o < sizeof(h->notes) - 1)
		snprintf(h->notes + o, sizeof(h->notes) - o, "%s%s: %.300s", o ? "; " : "", what, why);
}

/* The driver's GPUs by minor (ROOT/proc/driver/nvidia/gpus/BUSID/information,
 * "Device Minor: N"). Returns how many, -1 when the driver's list is absent. */
static int driver_minors(const char *root, unsigned char minors[MINORS_MAX])
{
	char path[4096];
	struct dirent *e;
	int n = 0;
	DIR *d;

	memset(minors, 0, MINORS_MAX);
	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus", root);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char info[4096], *text, *m;
		long minor;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(info, sizeof(info), "%s/%s/information", path, e->d_name)
		    >= (int)sizeof(info) || !(text = rdzv_read_head(info, 8192)))
			continue;
		if ((m = strstr(text, "Device Minor:")) && (minor = strtol(m + 13, NULL, 10)) >= 0
		    && minor < MINORS_MAX) {
			minors[minor] = 1;
			n++;
		}
		free(text);
	}
	closedir(d);
	return n;
}

static int check_gpus(const struct rdzv_health_req *r, struct rdzv_health *h, long *nfiles)
{
	char (*files)[RDZV_DEVPATH_MAX] = NULL, why[512];
	unsigned char minors[MINORS_MAX];
	int nvml = 0, have_driver;
	long n, i;

	*nfiles = -1;
	if (!r->gres_conf)
		return 0;
	n = rdzv_gres_gpu_files(r->gres_conf, r->node, 0, &files, &nvml, why, sizeof(why));
	if (n <= 0) {
		/* A node without GPU lines has no GPU to check; AutoDetect
		 * finds the GPUs that are there, so only NVML can count them. */
		note(h, "GPU files not checked", why);
		return 0;
	}
	*nfiles = n;
	have_driver = driver_minors(root_of(r), minors) >= 0;
	for (i = 0; i < n; i++) {
		struct stat st;

		h->gpus++;
		if (stat(files[i], &st) < 0) {
			snprintf(h->fault, sizeof(h->fault), "GPU %ld %s: %.120s", i,
			         errno == ENOENT ? "missing" : strerror(errno), files[i]);
			break;
		}
		if (!S_ISCHR(st.st_mode)) {
			snprintf(h->fault, sizeof(h->fault), "GPU %ld not a device: %.120s", i, files[i]);
			break;
		}
		if (have_driver && major(st.st_rdev) == NVIDIA_MAJOR && minor(st.st_rdev) < MINORS_MAX
		    && !minors[minor(st.st_rdev)]) {
			snprintf(h->fault, sizeof(h->fault), "GPU %ld off the bus: %.100s (minor %u) is "
			         "not among the driver's GPUs", i, files[i], minor(st.st_rdev));
			break;
		}
	}
	free(files);
	return h->fault[0] != 0;
}

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_count_fn)(unsigned *);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_retired_fn)(void *, int *);
typedef int (*nvml_remap_fn)(void *, unsigned *, unsigned *, unsigned *, unsigned *);

/* nvml.h's nvmlFieldValue_t, and the field of the GPU's recovery action
 * (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, R565+: nvmlDeviceGpuRecoveryAction_t,
 * 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset). */
#define NVML_FI_RECOVERY_ACTION 230u
struct nvml_field_value {
	unsigned field_id;
	unsigned char pad_[24];      /* scopeId, timestamp, latencyUsec, valueType */
	int nvml_return;
	unsigned char value[8];      /* nvmlValue_t: the field's unsigned int first */
};
_Static_assert(sizeof(struct nvml_field_value) == 40, "nvmlFieldValue_t is 40 bytes");
typedef int (*nvml_fields_fn)(void *, int, struct nvml_field_value *);

/* The GPU's recovery action, or 0 when none or NVML cannot say. */
static unsigned recovery_action(nvml_fields_fn fields, void *dev)
{
	struct nvml_field_value v;
	unsigned a;

	memset(&v, 0, sizeof(v));
	v.field_id = NVML_FI_RECOVERY_ACTION;
	if (!fields || fields(dev, 1, &v) != 0 || v.nvml_return != 0)
		return 0;
	memcpy(&a, v.value, sizeof(a));
	return a;
}

static const char *recovery_name(unsigned a)
{
	static const char *const names[] = { "none", "GPU reset", "node reboot", "drain P2P",
		                             "drain and reset" };

	return a < sizeof(names) / sizeof(names[0]) ? names[a] : "unknown";
}

static int check_nvml(const struct rdzv_health_req *r, struct rdzv_health *h, long nfiles)
{
	const char *path = r->nvml_library && *r->nvml_library ? r->nvml_library : RDZV_NVML_SONAME;
	nvml_void_fn init = NULL, shutdown = NULL;
	nvml_count_fn count = NULL;
	nvml_handle_fn handle = NULL;
	nvml_retired_fn retired = NULL;
	nvml_remap_fn remap = NULL;
	nvml_fields_fn fields = NULL;
	const struct rdzv_gpulib_sym syms[] = {
		{ "nvmlInit_v2", &init, 1 },
		{ "nvmlShutdown", &shutdown, 1 },
		{ "nvmlDeviceGetCount_v2", &count, 1 },
		{ "nvmlDeviceGetHandleByIndex_v2", &handle, 1 },
		{ "nvmlDeviceGetRetiredPagesPendingStatus", &retired, 0 },
		{ "nvmlDeviceGetRemappedRows", &remap, 0 },
		{ "nvmlDeviceGetFieldValues", &fields, 0 },
	};
	char why[512], err[512];
	unsigned n = 0, i;
	void *lib;
	int rc;

	h->nvml_gpus = -1;
	if (!(lib = rdzv_gpulib_open(path, why, sizeof(why)))) {
		note(h, "NVML not checked", why);
		return 0;
	}
	if (rdzv_gpulib_syms(&lib, path, syms, sizeof(syms) / sizeof(syms[0]), "not NVML", err,
	                     sizeof(err)) < 0) {
		note(h, "NVML not checked", err);
		return 0;
	}
	if ((rc = init()) != 0) {
		snprintf(h->fault, sizeof(h->fault), "NVML does not start: %s (error %d)",
		         rdzv_nvml_error_name(rc), rc);
		goto out;
	}
	if ((rc = count(&n)) != 0) {
		snprintf(h->fault, sizeof(h->fault), "NVML cannot count the GPUs: %s",
		         rdzv_nvml_error_name(rc));
		goto shut;
	}
	h->nvml_gpus = (int)n;
	if (nfiles > 0 && (long)n != nfiles) {
		snprintf(h->fault, sizeof(h->fault), "NVML sees %u GPUs, gres.conf names %ld", n,
		         nfiles);
		goto shut;
	}
	for (i = 0; i < n && !h->fault[0]; i++) {
		unsigned corr = 0, unc = 0, pending = 0, failed = 0, act;
		int retire = 0;
		void *dev = NULL;

		if ((rc = handle(i, &dev)) != 0) {
			snprintf(h->fault, sizeof(h->fault), "GPU %u no NVML handle: %s", i,
			         rdzv_nvml_error_name(rc));
			break;
		}
		if (retired && retired(dev, &retire) == 0 && retire)
			snprintf(h->fault, sizeof(h->fault), "GPU %u retired pages pending (reset "
			         "the GPU)", i);
		else if (remap && remap(dev, &corr, &unc, &pending, &failed) == 0 && failed)
			snprintf(h->fault, sizeof(h->fault), "GPU %u row remapping failed (%u "
			         "uncorrectable rows)", i, unc);
		else if (remap && pending)
			snprintf(h->fault, sizeof(h->fault), "GPU %u row remapping pending (reset "
			         "the GPU)", i);
		else if ((act = recovery_action(fields, dev)) != 0)
			snprintf(h->fault, sizeof(h->fault), "GPU %u NVML recovery action: %s (%u)", i,
			         recovery_name(act), act);
	}
shut:
	shutdown();
out:
	/* NVML stays loaded: unloading it under its own threads is unsafe,
	 * and this process (the prolog's, the helper's) ends soon. */
	return h->fault[0] != 0;
}

static int check_nics(const struct rdzv_health_req *r, struct rdzv_health *h)
{
	size_t i, n = r->topo ? rdzv_topo_nic_count(r->topo) : 0;

	for (i = 0; i < n; i++) {
		char path[4096], *text;
		const char *name;
		int port, fabric, usable;
		struct stat st;

		if (rdzv_topo_nic_info(r->topo, i, &name, &port, &fabric, &usable) < 0 || !usable
		    || fabric == RDZV_FABRIC_SLINGSHOT)
			continue;
		h->nics++;
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s", root_of(r), name);
		if (stat(path, &st) < 0) {
			snprintf(h->fault, sizeof(h->fault), "NIC %.60s absent: %.100s", name, path);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d/state", root_of(r),
		         name, port);
		if (!(text = rdzv_read_head(path, 256))) {
			snprintf(h->fault, sizeof(h->fault), "NIC %.60s:%d no state: %.100s",
			         name, port, path);
			return 1;
		}
		text[strcspn(text, "\n")] = '\0';
		if (!strstr(text, "ACTIVE")) {
			snprintf(h->fault, sizeof(h->fault), "NIC %.60s:%d %.40s", name, port, text);
			free(text);
			return 1;
		}
		free(text);
	}
	return 0;
}

int rdzv_health_check(const struct rdzv_health_req *r, struct rdzv_health *h)
{
	long start = rdzv_now_ms(), nfiles = -1;

	memset(h, 0, sizeof(*h));
	h->nvml_gpus = -1;
	if (!check_gpus(r, h, &nfiles) && !check_nics(r, h))
		(void)check_nvml(r, h, nfiles);
	h->ms = rdzv_now_ms() - start;
	return h->fault[0] != 0;
}

/* The bound as the site wrote it: whole seconds as health_timeout= takes
 * them ("60 s", "60s"), else milliseconds (a test's). */
static void say_bound(long ms, char *said, size_t saidlen, char *setting, size_t setlen)
{
	if (ms % 1000 == 0) {
		snprintf(said, saidlen, "%ld s", ms / 1000);
		snprintf(setting, setlen, "%lds", ms / 1000);
	} else {
		snprintf(said, saidlen, "%ld ms", ms);
		snprintf(setting, setlen, "%ldms", ms);
	}
}

static enum rdzv_health_outcome not_run(struct rdzv_health *h, const char *what, int err,
                                        long start)
{
	snprintf(h->fault, sizeof(h->fault), "node check not run: cannot %s: %s", what,
	         strerror(err));
	h->ms = rdzv_now_ms() - start;
	return RDZV_HEALTH_NOT_RUN;
}

enum rdzv_health_outcome rdzv_health_run(const struct rdzv_health_req *r, long timeout_ms,
                                         struct rdzv_health *h)
{
	long start = rdzv_now_ms();
	int fd[2], status, e, eof = 0;
	size_t got = 0;
	pid_t pid;

	memset(h, 0, sizeof(*h));
	h->nvml_gpus = -1;
	/* Without a child nothing bounds the check (a driver call that never
	 * returns would hold the prolog): it is not run here instead. */
	if (pipe2(fd, O_CLOEXEC) < 0)
		return not_run(h, "open a pipe", errno, start);
	if ((pid = fork()) < 0) {
		e = errno;
		close(fd[0]);
		close(fd[1]);
		return not_run(h, "fork", e, start);
	}
	if (pid == 0) {
		struct rdzv_health mine;
		const char *p = (const char *)&mine;
		size_t done = 0;
		ssize_t w;

		close(fd[0]);
		(void)rdzv_health_check(r, &mine);
		while (done < sizeof(mine) && (w = write(fd[1], p + done, sizeof(mine) - done)) != 0) {
			if (w < 0 && errno != EINTR)
				break;
			if (w > 0)
				done += (size_t)w;
		}
		_exit(0);
	}
	close(fd[1]);
	while (got < sizeof(*h) && !eof) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		long left = timeout_ms - (rdzv_now_ms() - start);
		ssize_t k;
		int pr;

		if (left <= 0 || (pr = poll(&p, 1, (int)left)) == 0)
			break;
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((k = read(fd[0], (char *)h + got, sizeof(*h) - got)) < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			eof = k == 0;
			break;
		}
		got += (size_t)k;
	}
	close(fd[0]);
	if (got < sizeof(*h) && eof) {
		/* The child ended without its answer (a library it loaded
		 * crashed): the check failed, in time. */
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		memset(h, 0, sizeof(*h));
		h->nvml_gpus = -1;
		if (WIFSIGNALED(status))
			snprintf(h->fault, sizeof(h->fault), "node check died of signal %d",
			         WTERMSIG(status));
		else
			snprintf(h->fault, sizeof(h->fault), "node check ended without an answer");
		h->ms = rdzv_now_ms() - start;
		return RDZV_HEALTH_FAULT;
	}
	if (got < sizeof(*h)) {
		char said[32], setting[32];

		/* Our own child, not yet waited for: its pid is still its. */
		(void)kill(pid, SIGKILL);
		memset(h, 0, sizeof(*h));
		h->nvml_gpus = -1;
		say_bound(timeout_ms, said, sizeof(said), setting, sizeof(setting));
		snprintf(h->fault, sizeof(h->fault),
		         "node check unfinished after %s (health_timeout=%s)", said, setting);
		/* A child stuck in the kernel (D state) would hold a waitpid
		 * forever: it is left to init when this process ends. */
		(void)waitpid(pid, &status, WNOHANG);
		h->ms = rdzv_now_ms() - start;
		return RDZV_HEALTH_UNFINISHED;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	h->ms = rdzv_now_ms() - start;
	h->fault[sizeof(h->fault) - 1] = '\0';
	h->notes[sizeof(h->notes) - 1] = '\0';
	return h->fault[0] ? RDZV_HEALTH_FAULT : RDZV_HEALTH_OK;
}
