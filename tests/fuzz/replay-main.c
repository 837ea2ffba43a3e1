/* SPDX-License-Identifier: GPL-2.0-or-later */
/* replay-main.c: a main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput on each file named (or each file in each directory
 * named), so corpora and found crashes replay in every build, including the
 * sanitizer one, with the project's compiler. Prints one line per file run
 * count; a broken invariant aborts with the file named on stderr. */
#include "config.h"
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *d = realloc(data, cap = cap ? cap * 2 : 4096);

			if (!d) {
				free(data);
				fclose(f);
				return -1;
			}
			data = d;
		}
		got = fread(data + n, 1, cap - n, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	return 0;
}

static int run_path(const char *path, int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rv = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (run_file(path) < 0)
			return -1;
		(*count)++;
		return 0;
	}
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (run_path(sub, count) < 0)
			rv = -1;
	}
	closedir(d);
	return rv;
}

int main(int argc, char **argv)
{
	int i, count = 0, rv = 0;

	for (i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			rv = 1;
	printf("%d\n", count);
	return rv;
}
