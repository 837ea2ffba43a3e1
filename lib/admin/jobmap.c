/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* jobmap.c: DCGM-exporter's job-mapping files; see jobmap.h. */
#define _GNU_SOURCE 1 /* O_CLOEXEC, O_NOFOLLOW, *at() */
#include "config.h"
#include "failure.h" /* rdzv_proc_stat_parse */
#include "jobmap.h"
#include "record.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLAIM_MAX 4096   /* bytes of one claim file */
#define CLAIMS_MAX 65536 /* claims read in one pass; more are left for later */

struct claim {
	char name[48];
	uint32_t job, step;
	pid_t pid;
	unsigned long long start;
	unsigned char gpu[RDZV_JOBMAP_GPUS_MAX];
	int drop;
};

unsigned long long rdzv_proc_starttime(const char *root, pid_t pid)
{
	char path[4096], *text, state;
	unsigned long long v = 0;
	int code;

	if (pid <= 0 || snprintf(path, sizeof(path), "%s/proc/%ld/stat", root && root[0] ? root : "",
	                         (long)pid) >= (int)sizeof(path)
	    || !(text = rdzv_read_head(path, 4096)))
		return 0;
	/* The watcher's fuzzed parser (failure.h): field 22, after the last ')'. */
	if (rdzv_proc_stat_parse(text, strlen(text), &state, NULL, &code, &v) < 0)
		v = 0;
	free(text);
	return v;
}

/* "JOB.STEP", both numbers. */
static int claim_name(const char *s, uint32_t *job, uint32_t *step)
{
	unsigned long j, st;
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return -1;
	j = strtoul(s, &end, 10);
	if (*end != '.' || !(end[1] >= '0' && end[1] <= '9'))
		return -1;
	st = strtoul(end + 1, &end, 10);
	if (*end || j > UINT32_MAX || st > UINT32_MAX)
		return -1;
	*job = (uint32_t)j;
	*step = (uint32_t)st;
	return 0;
}

static ssize_t read_at(int dfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n, got = 0;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

int rdzv_jobmap_claim_parse(const char *text, pid_t *pid, unsigned long long *start,
                            unsigned char gpus[RDZV_JOBMAP_GPUS_MAX])
{
	const char *p = text;
	char *end;
	long v;
	unsigned long g;

	if (!(*p >= '0' && *p <= '9'))
		return -1;
	v = strtol(p, &end, 10);
	if (end == p || *end != ' ' || v <= 0 || v > INT32_MAX)
		return -1;
	p = end + 1;
	if (!(*p >= '0' && *p <= '9'))
		return -1;
	*start = strtoull(p, &end, 10);
	if (end == p || *end != '\n')
		return -1;
	*pid = (pid_t)v;
	memset(gpus, 0, RDZV_JOBMAP_GPUS_MAX);
	for (p = end + 1; *p && *p != '\n';) {
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		g = strtoul(p, &end, 10);
		if (g >= RDZV_JOBMAP_GPUS_MAX || (*end != ' ' && *end != '\n'))
			return -1;
		gpus[g] = 1;
		p = *end == ' ' ? end + 1 : end;
	}
	return *p == '\n' && p[1] == '\0' ? 0 : -1;
}

long rdzv_jobmap_claim_format(pid_t pid, unsigned long long start,
                              const unsigned char gpus[RDZV_JOBMAP_GPUS_MAX], char *buf, size_t len)
{
	size_t off, first;
	int g, n;

	n = snprintf(buf, len, "%ld %llu\n", (long)pid, start);
	if (n < 0 || (size_t)n >= len)
		return -1;
	off = first = (size_t)n;
	for (g = 0; g < RDZV_JOBMAP_GPUS_MAX; g++) {
		if (!gpus[g])
			continue;
		n = snprintf(buf + off, len - off, "%s%d", off == first ? "" : " ", g);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += (size_t)n;
	}
	if (off + 2 > len)
		return -1;
	buf[off++] = '\n';
	buf[off] = '\0';
	return (long)off;
}

/* Every claim in the claims directory (cfd). */
static size_t claims_load(int cfd, struct claim **out)
{
	struct claim *v = NULL, *p;
	size_t n = 0, cap = 0;
	char text[CLAIM_MAX];
	struct dirent *e;
	DIR *d;
	int fd = dup(cfd);

	*out = NULL;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	while ((e = readdir(d)) && n < CLAIMS_MAX) {
		uint32_t job, step;

		if (claim_name(e->d_name, &job, &step) < 0 || strlen(e->d_name) >= sizeof(v->name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if (!(p = realloc(v, cap * sizeof(*v))))
				break;
			v = p;
		}
		memset(&v[n], 0, sizeof(v[n]));
		snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
		v[n].job = job;
		v[n].step = step;
		/* Unreadable or malformed: not a claim this plugin wrote; it
		 * names no GPU and is dropped. */
		if (read_at(cfd, e->d_name, text, sizeof(text)) < 0
		    || rdzv_jobmap_claim_parse(text, &v[n].pid, &v[n].start, v[n].gpu) < 0)
			v[n].drop = 1;
		n++;
	}
	closedir(d);
	*out = v;
	return n;
}

/* Write text as name in dfd: a temporary file renamed into place. */
static int write_at(int dfd, const char *name, const char *text, size_t len, mode_t mode)
{
	char tmp[96];
	ssize_t w;
	size_t done = 0;
	int fd;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	(void)unlinkat(dfd, tmp, 0); /* left by a slurmstepd killed here */
	if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)) < 0)
		return -1;
	while (done < len) {
		if ((w = write(fd, text + done, len - done)) < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			(void)unlinkat(dfd, tmp, 0);
			return -1;
		}
		done += (size_t)w;
	}
	/* The mode as asked, whatever the umask. */
	if (fchmod(fd, mode) < 0 || close(fd) < 0 || renameat(dfd, tmp, dfd, name) < 0) {
		(void)unlinkat(dfd, tmp, 0);
		return -1;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* GPU g's file from the live claims: their jobs, one per line, sorted and
 * once each; removed when none is left. */
static int rebuild_gpu(int dfd, const struct claim *c, size_t n, int g, char *err,
                       size_t errlen)
{
	uint32_t *jobs = malloc((n ? n : 1) * sizeof(*jobs));
	char name[16], *text = NULL;
	size_t i, nj = 0, off = 0;
	int rv = -1;

	if (!jobs)
		return rdzv_err(err, errlen, "out of memory");
	for (i = 0; i < n; i++)
		if (!c[i].drop && c[i].gpu[g])
			jobs[nj++] = c[i].job;
	snprintf(name, sizeof(name), "%d", g);
	if (nj == 0) {
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
			rdzv_err(err, errlen, "cannot remove %s: %s", name, strerror(errno));
			goto out;
		}
		rv = 0;
		goto out;
	}
	qsort(jobs, nj, sizeof(*jobs), cmp_u32);
	if (!(text = malloc(nj * 11 + 1))) {
		rdzv_err(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < nj; i++)
		if (i == 0 || jobs[i] != jobs[i - 1])
			off += (size_t)sprintf(text + off, "%u\n", jobs[i]);
	if (write_at(dfd, name, text, off, 0644) < 0) {
		rdzv_err(err, errlen, "cannot write %s: %s", name, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	free(text);
	free(jobs);
	return rv;
}

enum op { OP_CLAIM, OP_RELEASE, OP_SWEEP };

struct req {
	enum op op;
	uint32_t job, step;
	const int *gpus;
	size_t n;
	pid_t pid;
	unsigned long long start;
};

/* The admin's directory and its claims directory (made here, root's,
 * 0700), both opened without following a link; the lock held on return. */
static int open_dirs(const char *dir, int *dfd, int *cfd, int *lfd, char *err, size_t errlen)
{
	struct stat st;

	*dfd = *cfd = *lfd = -1;
	if (!dir || dir[0] != '/')
		return rdzv_err(err, errlen, "dcgm_job_map_dir=%s: not an absolute path",
		                dir ? dir : "");
	if ((*dfd = rdzv_admin_dir_open("dcgm_job_map_dir", dir, err, errlen)) < 0)
		return -1;
	if (mkdirat(*dfd, RDZV_JOBMAP_CLAIMS, 0700) < 0 && errno != EEXIST)
		return rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS ": %s", dir, strerror(errno));
	if ((*cfd = openat(*dfd, RDZV_JOBMAP_CLAIMS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
	                   | O_CLOEXEC)) < 0)
		return rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS ": %s", dir, strerror(errno));
	if (fstat(*cfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))
		return rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS ": not this user's own "
		                "directory, or writable by others", dir);
	if ((*lfd = openat(*cfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS "/lock: %s", dir,
		                strerror(errno));
	while (flock(*lfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS "/lock: %s", dir,
			                strerror(errno));
	return 0;
}

static int update(const char *dir, const char *proc_root, const struct req *r, char *err,
                  size_t errlen)
{
	unsigned char touch[RDZV_JOBMAP_GPUS_MAX];
	struct claim *c = NULL, *p, own;
	size_t n, i;
	int dfd, cfd, lfd, rv = -1, g, swept = 0;

	memset(touch, 0, sizeof(touch));
	if (open_dirs(dir, &dfd, &cfd, &lfd, err, errlen) < 0)
		goto out;
	n = claims_load(cfd, &c);
	for (i = 0; i < n; i++) {
		int mine = r->op != OP_SWEEP && c[i].job == r->job && c[i].step == r->step;

		if (!c[i].drop && !mine && !(r->op == OP_SWEEP && r->job && c[i].job == r->job)
		    && rdzv_proc_starttime(proc_root, c[i].pid) == c[i].start)
			continue; /* a live claim of another step */
		c[i].drop = 1;
		if (unlinkat(cfd, c[i].name, 0) == 0 && !mine)
			swept++;
		for (g = 0; g < RDZV_JOBMAP_GPUS_MAX; g++)
			touch[g] |= c[i].gpu[g];
	}
	if (r->op == OP_CLAIM) {
		char text[CLAIM_MAX];
		long len;

		memset(&own, 0, sizeof(own));
		snprintf(own.name, sizeof(own.name), "%u.%u", r->job, r->step);
		own.job = r->job;
		own.step = r->step;
		for (i = 0; i < r->n; i++)
			if (r->gpus[i] >= 0 && r->gpus[i] < RDZV_JOBMAP_GPUS_MAX)
				own.gpu[r->gpus[i]] = touch[r->gpus[i]] = 1;
		if ((len = rdzv_jobmap_claim_format(r->pid, r->start, own.gpu, text, sizeof(text))) < 0) {
			rdzv_err(err, errlen, "claim of step %u.%u too long", r->job, r->step);
			goto out;
		}
		if (write_at(cfd, own.name, text, (size_t)len, 0600) < 0) {
			rdzv_err(err, errlen, "%s/" RDZV_JOBMAP_CLAIMS "/%s: %s", dir, own.name,
			         strerror(errno));
			goto out;
		}
		if (!(p = realloc(c, (n + 1) * sizeof(*c)))) {
			rdzv_err(err, errlen, "out of memory");
			goto out;
		}
		c = p;
		c[n++] = own;
	}
	for (g = 0; g < RDZV_JOBMAP_GPUS_MAX; g++)
		if (touch[g] && rebuild_gpu(dfd, c, n, g, err, errlen) < 0)
			goto out;
	rv = swept;
out:
	free(c);
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	if (cfd >= 0)
		close(cfd);
	if (dfd >= 0)
		close(dfd);
	return rv;
}

int rdzv_jobmap_claim(const char *dir, const char *proc_root, uint32_t job, uint32_t step,
                      const int *gpus, size_t n, pid_t pid, unsigned long long start,
                      char *err, size_t errlen)
{
	struct req r = { OP_CLAIM, job, step, gpus, n, pid, start };

	return update(dir, proc_root, &r, err, errlen) < 0 ? -1 : 0;
}

int rdzv_jobmap_release(const char *dir, const char *proc_root, uint32_t job, uint32_t step,
                        char *err, size_t errlen)
{
	struct req r = { OP_RELEASE, job, step, NULL, 0, 0, 0 };

	return update(dir, proc_root, &r, err, errlen) < 0 ? -1 : 0;
}

int rdzv_jobmap_sweep(const char *dir, const char *proc_root, uint32_t job, char *err,
                      size_t errlen)
{
	struct req r = { OP_SWEEP, job, 0, NULL, 0, 0, 0 };

	return update(dir, proc_root, &r, err, errlen);
}

int rdzv_jobmap_dir(const char *tmpl, const char *node, char *out, size_t len, char *err,
                    size_t errlen)
{
	if (rdzv_path_node(tmpl, node ? node : "", out, len, err, errlen) < 0
	    || rdzv_admin_dir_check("dcgm_job_map_dir", out, err, errlen) < 0)
		return -1;
	return 0;
}
