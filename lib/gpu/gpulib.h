/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* gpulib.h: what lib/gpu's vendor readers share (fabric.c through NVML,
 * rsmi.c through ROCm SMI): loading the vendor's library at run time, so
 * that rdzv builds and runs without it, and the messages they build. */
#ifndef RDZV_GPULIB_H
#define RDZV_GPULIB_H

#include <stddef.h>

#include "util.h"

#define RDZV_NVML_SONAME "libnvidia-ml.so.1"

/* NVML's name of a return code ("not supported", "GPU is lost", ...);
 * lib/gpu/fabric.c. */
const char *rdzv_nvml_error_name(int rc);

/* One symbol of a vendor library: its name, the function pointer it goes
 * into (its address, whatever the pointer's type), and whether the library
 * is refused without it. */
struct rdzv_gpulib_sym {
	const char *name;
	void *fn;
	int required;
};

/* A library named by the admin must be an absolute path (never relative
 * to a working directory); an empty or NULL one is the vendor's default.
 * -1 with "WHAT library 'LIBRARY' is not an absolute path" in err. */
int rdzv_gpulib_check_path(const char *what, const char *library, char *err, size_t errlen);

/* dlopen(path) now and locally; NULL with the dynamic linker's reason in
 * why. A bare name is searched the dynamic linker's way. */
void *rdzv_gpulib_open(const char *path, char *why, size_t whylen);

/* Looks up each of the n symbols of *lib (path names it in the message).
 * When one that is required is missing, closes *lib, sets it to NULL and
 * returns -1 with "PATH lacks SYMBOL: NOT_IT" in err, naming the first in
 * syms' order. */
int rdzv_gpulib_syms(void **lib, const char *path, const struct rdzv_gpulib_sym *syms, size_t n,
                     const char *not_it, char *err, size_t errlen);

/* printf at buf + *off, within len, moving *off past what was written (to
 * len - 1 at most): the lists of GPUs in the readers' messages. Nothing
 * when buf is NULL or full. */
void rdzv_gpulib_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
	RDZV_PRINTF(4, 5);

#endif
