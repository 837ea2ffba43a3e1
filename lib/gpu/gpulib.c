/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* gpulib.c: see gpulib.h. */
#include "config.h"
#include "gpulib.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rdzv_gpulib_check_path(const char *what, const char *library, char *err, size_t errlen)
{
	if (library && *library && library[0] != '/')
		return rdzv_err(err, errlen, "%s library '%.200s' is not an absolute path", what,
		                library);
	return 0;
}

void *rdzv_gpulib_open(const char *path, char *why, size_t whylen)
{
	const char *e;
	void *lib;

	dlerror();
	if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		return lib;
	e = dlerror();
	snprintf(why, whylen, "%s", e ? e : "unknown reason");
	return NULL;
}

int rdzv_gpulib_syms(void **lib, const char *path, const struct rdzv_gpulib_sym *syms, size_t n,
                     const char *not_it, char *err, size_t errlen)
{
	const char *missing = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		void *p = dlsym(*lib, syms[i].name);

		/* dlsym's object pointer into a function pointer by copy: ISO C
		 * leaves the cast undefined, POSIX guarantees the
		 * representation. */
		memcpy(syms[i].fn, &p, sizeof(p));
		if (!p && syms[i].required && !missing)
			missing = syms[i].name;
	}
	if (!missing)
		return 0;
	rdzv_err(err, errlen, "%s lacks %s: %s", path, missing, not_it);
	dlclose(*lib);
	*lib = NULL;
	return -1;
}

void rdzv_gpulib_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!buf || *off >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (k > 0)
		*off += (size_t)k < len - *off ? (size_t)k : len - *off - 1;
}
