/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/common/: what every folder uses: strings, numbers and errors, a
 * variable's precedence (envset), JSON. Uses no other folder. */
/* util.h: small shared helpers of the logic library. */
#ifndef RDZV_UTIL_H
#define RDZV_UTIL_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#if defined(__GNUC__)
#define RDZV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RDZV_PRINTF(a, b)
#endif

/* snprintf into err[errlen] when err is not NULL. Always returns -1 so that
 * callers can write "return rdzv_err(err, errlen, ...)". */
int rdzv_err(char *err, size_t errlen, const char *fmt, ...) RDZV_PRINTF(3, 4);

/* A helper's --version, GNU style, on stdout: "PROG (spank-rdzv) VERSION"
 * (configure.ac's, the one place a release is named), then the licence. */
void rdzv_print_version(const char *prog);

/* FNV-1a 64 of s[0..n), continuing from h (start with RDZV_FNV1A64_INIT). */
#define RDZV_FNV1A64_INIT 14695981039346656037ULL
uint64_t rdzv_fnv1a64(uint64_t h, const void *s, size_t n);

/* Parse a whole decimal string into [min, max]. Returns 0 or -1 (no digits,
 * trailing text, sign, overflow, out of range). */
int rdzv_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Like rdzv_parse_u64 for the first n bytes of s. */
int rdzv_parse_u64n(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *out);

/* The decimal number at *p (1 to 20 digits, leading zeros allowed) when it
 * is at most max; *p moves past it. Returns 0, or -1 with *p unmoved. */
int rdzv_read_u32(const char **p, uint32_t max, uint32_t *v);

/* One item of a range list ("2-3,0-1") at *p: "N", or "A-B" with A < B,
 * each number as rdzv_read_u32 reads it; *a and *b are its ends (equal for
 * "N") and *p moves past it. The caller reads the ',' between items.
 * Returns 0 or -1. */
int rdzv_read_range(const char **p, uint32_t max, uint32_t *a, uint32_t *b);

/* tmpl with %n replaced by node and %% by '%' into out[len] (the admin's
 * per-node paths: topology=, nvml_library=). Refused, with the reason in
 * err: a '%' before anything else (a stray '%' at the end too), %n without
 * a node name, a node name that could leave the directory ('/', "..",
 * "."), a path that does not fit. Returns 0 or -1. */
int rdzv_path_node(const char *tmpl, const char *node, char *out, size_t len, char *err,
                   size_t errlen);

/* Whether rdzv_path_node would put a node name into tmpl (a %n that is not
 * the second half of a %%): a caller looks the name up only then. */
int rdzv_path_wants_node(const char *tmpl);

/* Copy src into dst[dstlen]; returns 0, or -1 when it does not fit. */
int rdzv_strlcpy(char *dst, const char *src, size_t dstlen);

/* The first max bytes of the file at path, NUL-terminated, in a malloc()ed
 * buffer (to free). NULL when it cannot be opened or memory runs out. */
char *rdzv_read_head(const char *path, size_t max);

/* Value of NAME in a NULL-terminated "NAME=value" array, or NULL. */
const char *rdzv_envp_get(char *const *envp, const char *name);

/* Whether the n bytes at s are a non-empty node name of ASCII letters,
 * digits, '-', '_' and '.' (what the nodes' reports and the step plan
 * carry). */
int rdzv_host_name_ok(const char *s, size_t n);

/* This node's name as slurmd knows itself (slurmd -N included), from
 * slurmstepd's own environment, which slurmstepd sets before loading any
 * plugin; never from the job's. 0, or -1 (buf "") when slurmstepd has none
 * or it is not a node name. Root's names (records, metrics, DCGM claims,
 * %n) come from this alone. */
int rdzv_stepd_node(char *buf, size_t len);

/* src into dst (at most len - 1 bytes, always terminated; dst may be src)
 * with every control byte (below 0x20, and 0x7f) written as '?': a user's text in
 * slurmd's log or syslog can then neither start a line of its own nor carry
 * terminal escapes. Returns dst. */
char *rdzv_text_printable(char *dst, size_t len, const char *src);

/* Milliseconds on the monotonic clock. */
long rdzv_now_ms(void);

/* *ts = CLOCK_REALTIME's now + ms (ms >= 0): pthread_cond_timedwait's
 * deadline. */
struct timespec;
void rdzv_realtime_in(struct timespec *ts, long ms);

/* At most cap - 1 bytes of a small file (a /proc file), NUL-terminated
 * after them; binary-safe (an environ block). Never follows a final
 * symbolic link. Returns the length, or -1. */
ssize_t rdzv_read_small(const char *path, char *buf, size_t cap);

/* A pidfd for pid (pidfd_open(2), Linux 5.3+), close-on-exec: it names
 * that process for as long as it is held, however the pid is reused later.
 * -1 with errno ENOSYS where the kernel or the headers have none. */
int rdzv_pidfd_open(pid_t pid);
/* sig to the process of pidfd (pidfd_send_signal(2)): 0, or -1 with errno
 * (ESRCH: it has ended and been reaped; sig 0 asks only that). */
int rdzv_pidfd_signal(int pidfd, int sig);

/* v in decimal into out (at most 10 bytes, no NUL); returns the digits
 * written. For texts built without printf (node orders of 65,536 nodes). */
size_t rdzv_put_u32(char *out, uint32_t v);

/* Make path a directory private to the caller (mkdir 0700), or check the
 * one there: refused (-1, reason in err) when it is a symbolic link, not a
 * directory, owned by another user, or open to group or others. Never
 * follows a link. */
int rdzv_private_dir(const char *path, char *err, size_t errlen);

#endif
