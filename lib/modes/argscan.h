/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* argscan.h: reading long options out of a step's command line (S_JOB_ARGV)
 * the way the program will read them, so that a check in srun predicts what
 * the training script sees.
 *
 * Rules (those of Python's argparse with allow_abbrev=False, which is how
 * Megatron-LM builds its parser, megatron/training/arguments.py):
 *   - "--name VALUE" and "--name=VALUE" are the same option; "--name-more"
 *     is another option (no prefix matching);
 *   - a following word is taken as the value unless it starts with '-' and
 *     is not a negative number ("--tp --pp 2": --tp has no value);
 *   - when an option repeats, the last occurrence wins, but every occurrence
 *     must be well formed (argparse converts each one and stops on the first
 *     bad one, so a bad early value fails the run even if a later one is good);
 *   - a bare "--" ends the options: what follows is positional.
 * Only separate words are read: an option inside one word ("bash -c '...'")
 * or inside a script file is invisible here. */
#ifndef RDZV_ARGSCAN_H
#define RDZV_ARGSCAN_H

#include <stddef.h>
#include <stdint.h>

struct rdzv_argval {
	int count;          /* occurrences of the option */
	int index;          /* argv index of the last occurrence; -1 when absent */
	const char *value;  /* last occurrence's value (points into argv) */
};

/* Occurrences of a flag without value ("--fp8-hybrid"); "--flag=x" counts
 * too (argparse would refuse it, the program would then stop anyway). */
int rdzv_argscan_flag(int argc, char *const *argv, const char *name);

/* An option taking one value. Returns 1 (found; v filled), 0 (absent) or
 * -1 when an occurrence has no value, with the option and its position
 * named in err. argv may be NULL (argc is then ignored). */
int rdzv_argscan_value(int argc, char *const *argv, const char *name,
                       struct rdzv_argval *v, char *err, size_t errlen);

/* An option taking a whole number in [min, max]. Every occurrence is
 * checked; *out gets the last one. Returns 1, 0 (absent, *out untouched) or
 * -1 naming the option, the value, the range and the argv position. */
int rdzv_argscan_uint(int argc, char *const *argv, const char *name, uint64_t min,
                      uint64_t max, uint64_t *out, char *err, size_t errlen);

#endif
