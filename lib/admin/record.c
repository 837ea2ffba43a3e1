/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* record.c: see record.h. */
#include "config.h"
#include "record.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *policy_name(enum rdzv_policy p)
{
	switch (p) {
	case RDZV_SET_ENFORCE:
		return "enforce";
	case RDZV_SET_UNSET:
		return "unset";
	default:
		return "default";
	}
}

static void task_vars(struct rdzv_jw *w, const struct rdzv_envset *env)
{
	size_t i;

	for (i = 0; env && i < env->n; i++) {
		const struct rdzv_env_entry *e = &env->v[i];

		rdzv_jw_open(w, '{');
		rdzv_jw_key(w, "name");
		rdzv_jw_str(w, e->name);
		rdzv_jw_key(w, "value");
		rdzv_jw_str(w, e->outcome == RDZV_OUT_USER_KEPT ? e->user_value : e->value);
		rdzv_jw_key(w, "source");
		rdzv_jw_str(w, e->outcome == RDZV_OUT_USER_KEPT ? "user" : e->origin);
		rdzv_jw_key(w, "policy");
		rdzv_jw_str(w, policy_name(e->policy));
		rdzv_jw_key(w, "outcome");
		rdzv_jw_str(w, rdzv_outcome_name(e->outcome));
		if (e->outcome == RDZV_OUT_USER_KEPT || e->outcome == RDZV_OUT_ENFORCED) {
			rdzv_jw_key(w, e->outcome == RDZV_OUT_USER_KEPT ? "plugin_value" : "user_value");
			rdzv_jw_str(w, e->outcome == RDZV_OUT_USER_KEPT ? e->value : e->user_value);
		}
		rdzv_jw_close(w, '}');
	}
}

void rdzv_record_task_json(struct rdzv_jw *w, uint32_t rank, uint32_t local_rank,
                           const char *cpus, const struct rdzv_envset *env,
                           const struct rdzv_envset *late)
{
	rdzv_jw_open(w, '{');
	rdzv_jw_key(w, "rank");
	rdzv_jw_u64(w, rank);
	rdzv_jw_key(w, "local_rank");
	rdzv_jw_u64(w, local_rank);
	rdzv_jw_key(w, "cpus");
	rdzv_jw_str(w, cpus);
	rdzv_jw_key(w, "variables");
	rdzv_jw_open(w, '[');
	task_vars(w, env);
	task_vars(w, late);
	rdzv_jw_close(w, ']');
	rdzv_jw_close(w, '}');
}

uint64_t rdzv_record_env_hash(const struct rdzv_envset *env)
{
	uint64_t h = RDZV_FNV1A64_INIT;
	size_t i;

	for (i = 0; env && i < env->n; i++) {
		const struct rdzv_env_entry *e = &env->v[i];
		const char *p = policy_name(e->policy);

		h = rdzv_fnv1a64(h, e->name, strlen(e->name) + 1);
		h = rdzv_fnv1a64(h, e->value ? e->value : "", (e->value ? strlen(e->value) : 0) + 1);
		h = rdzv_fnv1a64(h, p, strlen(p) + 1);
	}
	return h;
}

static void iso_time(struct rdzv_jw *w, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char b[32];

	if (!gmtime_r(&tt, &tm) || !strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm))
		rdzv_jw_str(w, NULL);
	else
		rdzv_jw_str(w, b);
}

static void exits(struct rdzv_jw *w, const struct rdzv_record_node *n)
{
	size_t i;

	rdzv_jw_open(w, '[');
	for (i = 0; i < n->nexits; i++) {
		const struct rdzv_record_exit *x = &n->exits[i];

		rdzv_jw_open(w, '{');
		rdzv_jw_key(w, "rank");
		rdzv_jw_u64(w, x->rank);
		rdzv_jw_key(w, "status");
		rdzv_jw_i64(w, x->status);
		if (WIFEXITED(x->status)) {
			rdzv_jw_key(w, "exit_code");
			rdzv_jw_i64(w, WEXITSTATUS(x->status));
		} else if (WIFSIGNALED(x->status)) {
			rdzv_jw_key(w, "signal");
			rdzv_jw_i64(w, WTERMSIG(x->status));
		}
		rdzv_jw_key(w, "time_ms");
		rdzv_jw_i64(w, x->ms);
		rdzv_jw_close(w, '}');
	}
	rdzv_jw_close(w, ']');
}

static void facts(struct rdzv_jw *w, const struct rdzv_record_node *n)
{
	rdzv_jw_key(w, "rdzv_record");
	rdzv_jw_u64(w, RDZV_RECORD_FORMAT);
	rdzv_jw_key(w, "job");
	rdzv_jw_u64(w, n->job);
	rdzv_jw_key(w, "step");
	rdzv_jw_u64(w, n->step);
	rdzv_jw_key(w, "het");
	rdzv_jw_bool(w, n->het);
	rdzv_jw_key(w, "task_offset");
	rdzv_jw_u64(w, n->task_offset);
	rdzv_jw_key(w, "node");
	rdzv_jw_str(w, n->node);
	rdzv_jw_key(w, "node_id");
	rdzv_jw_u64(w, n->node_id);
	rdzv_jw_key(w, "node_rank");
	rdzv_jw_u64(w, n->node_rank);
	rdzv_jw_key(w, "nnodes");
	rdzv_jw_u64(w, n->nnodes);
	rdzv_jw_key(w, "world_size");
	rdzv_jw_u64(w, n->ntasks);
	rdzv_jw_key(w, "local_tasks");
	rdzv_jw_u64(w, n->local_ntasks);
	rdzv_jw_key(w, "mode");
	rdzv_jw_str(w, n->mode);
	rdzv_jw_key(w, "rank0_host");
	rdzv_jw_str(w, n->rank0_host);
	rdzv_jw_key(w, "master_addr");
	rdzv_jw_str(w, n->master_addr);
	rdzv_jw_key(w, "port");
	rdzv_jw_u64(w, n->port);
	rdzv_jw_key(w, "port_source");
	rdzv_jw_str(w, n->port_source);
	rdzv_jw_key(w, "plugin_version");
	rdzv_jw_str(w, n->plugin_version);
	rdzv_jw_key(w, "srun_plugin_version");
	rdzv_jw_str(w, n->srun_version);
	rdzv_jw_key(w, "slurm_version");
	rdzv_jw_str(w, n->slurm_version);
	rdzv_jw_key(w, "bind");
	rdzv_jw_str(w, n->bind_mode);
	rdzv_jw_key(w, "profile");
	rdzv_jw_open(w, '{');
	rdzv_jw_key(w, "name");
	rdzv_jw_str(w, n->profile);
	rdzv_jw_key(w, "default");
	rdzv_jw_str(w, n->profile_default);
	rdzv_jw_key(w, "hash");
	if (n->profile || n->profile_default) {
		char h[24];

		snprintf(h, sizeof(h), "%016llx", (unsigned long long)n->profile_hash);
		rdzv_jw_str(w, h);
	} else {
		rdzv_jw_str(w, NULL);
	}
	rdzv_jw_close(w, '}');
	rdzv_jw_key(w, "refused_by_srun");
	rdzv_jw_bool(w, n->refused);
	rdzv_jw_key(w, "error");
	rdzv_jw_str(w, n->error);
	if (n->gpu_fault) {
		rdzv_jw_key(w, "gpu_fault");
		rdzv_jw_open(w, '{');
		rdzv_jw_key(w, "kind");
		rdzv_jw_str(w, n->gpu_fault_kind);
		rdzv_jw_key(w, "text");
		rdzv_jw_str(w, n->gpu_fault);
		rdzv_jw_close(w, '}');
	}
	rdzv_jw_key(w, "start");
	iso_time(w, n->start);
	rdzv_jw_key(w, "end");
	iso_time(w, n->end);
	rdzv_jw_key(w, "exits");
	exits(w, n);
}

int rdzv_record_node_json(const struct rdzv_record_node *n, struct rdzv_jw *w)
{
	size_t i, room, lost = n->tasks_lost;
	int cut = 0;

	rdzv_jw_open(w, '{');
	facts(w, n);
	/* The facts first; then as many tasks' parts as fit, room kept for the
	 * count of those left out and the closing brackets. */
	rdzv_jw_key(w, "tasks");
	rdzv_jw_open(w, '[');
	for (i = 0; i < n->ntasks_parts; i++) {
		size_t len = strlen(n->tasks[i]);

		room = w->max > w->len ? w->max - w->len : 0;
		if (len + 64 > room) {
			lost++;
			cut = 1;
			continue;
		}
		rdzv_jw_raw(w, n->tasks[i], len);
	}
	rdzv_jw_close(w, ']');
	rdzv_jw_key(w, "tasks_left_out");
	rdzv_jw_u64(w, lost);
	rdzv_jw_close(w, '}');
	if (w->oom)
		return -1;
	return cut || w->full ? 1 : 0;
}

int rdzv_record_name(uint32_t job, uint32_t step, const char *node, char *buf, size_t len)
{
	int n;

	if (!node || !*node || strchr(node, '/') || strcmp(node, ".") == 0
	    || strcmp(node, "..") == 0)
		return -1;
	n = snprintf(buf, len, "%u.%u.%s.json", job, step, node);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Whether a directory's owner and mode make it the admin's: root's (or
 * the caller's own, for tests run as a user), written by nobody else; an
 * ancestor may be open to others only with the sticky bit (/tmp), since its
 * next part, owned by root, is checked in turn. */
static int dir_owned(const struct stat *st, int last)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return 0;
	return !(st->st_mode & 022) || (!last && (st->st_mode & S_ISVTX));
}

int rdzv_admin_dir_open(const char *key, const char *dir, char *err, size_t errlen)
{
	char *real = NULL, *p, *part, *save = NULL;
	struct stat st;
	int fd = -1, next, last;

	if (!dir || dir[0] != '/')
		return rdzv_err(err, errlen, "%s=%s: not an absolute path", key, dir ? dir : "");
	/* Its last part is never a link; links above it (/var/run) are the
	 * system's, resolved once, and every part of what they resolve to is
	 * then opened and checked in turn, never looked up again by path. */
	if (lstat(dir, &st) < 0)
		return rdzv_err(err, errlen, "%s=%s: %s", key, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return rdzv_err(err, errlen, "%s=%s: not a directory (a symbolic link is not "
		                "followed)", key, dir);
	if (!(real = realpath(dir, NULL)))
		return rdzv_err(err, errlen, "%s=%s: %s", key, dir, strerror(errno));
	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0
	    || !dir_owned(&st, real[1] == '\0')) {
		rdzv_err(err, errlen, "%s=%s: / is not root's, or open to others", key, dir);
		goto fail;
	}
	for (p = real + 1; (part = strtok_r(p, "/", &save)); p = NULL) {
		last = save == NULL || *save == '\0';
		if ((next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rdzv_err(err, errlen, "%s=%s: %s: %s", key, dir, part,
			         errno == ELOOP || errno == ENOTDIR ? "changed while it was opened"
			                                            : strerror(errno));
			goto fail;
		}
		close(fd);
		fd = next;
		if (fstat(fd, &st) < 0) {
			rdzv_err(err, errlen, "%s=%s: %s", key, dir, strerror(errno));
			goto fail;
		}
		if (st.st_uid != 0 && st.st_uid != geteuid()) {
			rdzv_err(err, errlen, "%s=%s: %s%s owned by uid %u, not root", key, dir,
			         last ? "" : part, last ? "" : " (a parent)", (unsigned)st.st_uid);
			goto fail;
		}
		if (!dir_owned(&st, last)) {
			rdzv_err(err, errlen, "%s=%s: %s%swritable by group or others (mode %o)", key,
			         dir, last ? "" : part, last ? "" : " (a parent) ",
			         (unsigned)(st.st_mode & 07777));
			goto fail;
		}
	}
	free(real);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	free(real);
	return -1;
}

int rdzv_admin_dir_check(const char *key, const char *dir, char *err, size_t errlen)
{
	int fd = rdzv_admin_dir_open(key, dir, err, errlen);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int rdzv_record_dir_check(const char *dir, char *err, size_t errlen)
{
	return rdzv_admin_dir_check("record_dir", dir, err, errlen);
}

int rdzv_record_write(const char *dir, const char *name, const char *text, size_t n,
                      char *err, size_t errlen)
{
	char tmp[300];
	int dfd = -1, fd = -1, rv = -1;
	size_t off = 0;

	if (snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid()) >= (int)sizeof(tmp)
	    || strchr(name, '/'))
		return rdzv_err(err, errlen, "record name %.64s: too long or not a file name", name);
	if ((dfd = rdzv_admin_dir_open("record_dir", dir, err, errlen)) < 0)
		return -1;
	unlinkat(dfd, tmp, 0); /* a leftover of this pid's: never followed */
	if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640)) < 0) {
		rdzv_err(err, errlen, "record_dir=%s: cannot create %s: %s", dir, tmp, strerror(errno));
		goto out;
	}
	while (off < n) {
		ssize_t k = write(fd, text + off, n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rdzv_err(err, errlen, "record_dir=%s: writing %s: %s", dir, tmp,
			         k < 0 ? strerror(errno) : "no progress");
			goto out;
		}
		off += (size_t)k;
	}
	if (write(fd, "\n", 1) != 1 || close(fd) < 0) {
		fd = -1;
		rdzv_err(err, errlen, "record_dir=%s: writing %s: %s", dir, tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) < 0) {
		rdzv_err(err, errlen, "record_dir=%s: cannot rename %s to %s: %s", dir, tmp, name,
		         strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rv < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return rv;
}
