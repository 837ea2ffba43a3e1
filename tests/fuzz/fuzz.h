/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz.h: shared by the libFuzzer targets tests/fuzz/fuzz-*.c.
 *
 * Every target defines LLVMFuzzerTestOneInput(); run-fuzzers.sh links it
 * with libFuzzer (clang -fsanitize=fuzzer), and the replay test links it
 * with replay-main.c so that corpora and regressions run in every build.
 * Targets never print: a broken invariant is FUZZ_ASSERT, which aborts so
 * that libFuzzer (or the replay driver) reports the input. */
#ifndef RDZV_FUZZ_H
#define RDZV_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                        \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, \
			        __LINE__, #cond);                                \
			abort();                                                 \
		}                                                                \
	} while (0)

#define FUZZ_PIECES_MAX 32

/* The input cut at '\n' into at most FUZZ_PIECES_MAX NUL-terminated strings
 * (the last piece takes the rest). Inputs are text the plugin receives
 * (arguments, environment values, files), so a newline is the natural cut
 * and keeps seed files readable. */
struct fuzz_pieces {
	char *buf;
	char *v[FUZZ_PIECES_MAX + 1];
	int n;
};

static inline int fuzz_split(const uint8_t *data, size_t size, struct fuzz_pieces *p)
{
	size_t i;
	char *s;

	p->n = 0;
	if (!(p->buf = malloc(size + 1)))
		return -1;
	memcpy(p->buf, data, size);
	p->buf[size] = '\0';
	s = p->buf;
	p->v[p->n++] = s;
	for (i = 0; i < size && p->n < FUZZ_PIECES_MAX; i++) {
		if (p->buf[i] == '\n') {
			p->buf[i] = '\0';
			p->v[p->n++] = p->buf + i + 1;
		}
	}
	p->v[p->n] = NULL;
	return 0;
}

static inline void fuzz_pieces_free(struct fuzz_pieces *p)
{
	free(p->buf);
	p->buf = NULL;
}

/* The whole input as one NUL-terminated string (embedded NULs cut it). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/* A small number taken from a piece, for indices and lengths. */
static inline uint32_t fuzz_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

#endif
