#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The project is GPL-2.0-or-later, Slurm's own licence: COPYING holds the
# text Debian ships (/usr/share/common-licenses/GPL-2), every source file of
# the project names it in an SPDX line near its top, and both packages'
# metadata say so. Third-party test data (tests/topo, the fuzz inputs) keeps
# its own licence and is not counted.
. "$top_srcdir/tests/lib/tap.sh"
# The tree is the same under every leg; COPYING is Debian 12's text (a
# Debian 13 root's base-files has the FSF's later wording).
host_leg_only "the sources and their licence do not depend on the leg's Slurm or PyTorch"
cd "$top_srcdir" || exit 1
spdx="SPDX-License-Identifier: GPL-2.0-or-later"

ok "$([ -f COPYING ] && echo 0 || echo 1)" "COPYING is there"
if [ -f /usr/share/common-licenses/GPL-2 ]; then
	ok "$(cmp -s COPYING /usr/share/common-licenses/GPL-2 && echo 0 || echo 1)" \
		"COPYING is Debian 12's GPL-2 text, byte for byte"
else
	skip "no /usr/share/common-licenses/GPL-2 (base-files) to compare COPYING with"
fi
like "$(head -n 5 COPYING)" "GNU GENERAL PUBLIC LICENSE" "... and it is the GNU GPL"
like "$(sed -n '2,4p' COPYING)" "Version 2, June 1991" "... version 2"

# The project's sources: C, shell, Python, tests, build files, examples,
# man pages, helpers without an extension.
files=$(find spank lib helpers tests sbatch-examples etc m4 doc nccl bench .ci \
	\( -path tests/topo -o -path tests/fuzz/corpus -o -path tests/fuzz/regressions \) -prune -o \
	-type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.t' -o -name '*.py' \
	-o -name '*.am' -o -name '*.m4' -o -name '*.sbatch' -o -name '*.awk' -o -name '*.def' \
	-o -name '*.1' -o -name '*.8' -o -name 'rdzv-retry' -o -name 'run' -o -name '*.conf.in' \) \
	-print 2>/dev/null; for f in configure.ac Makefile.am spank-rdzv.spec.in debian/rules; do [ -f "$f" ] && echo "$f"; done)
# libtool's own m4 files are generated (autoreconf), not the project's.
files=$(printf '%s\n' "$files" | grep -v -E '^m4/(libtool|lt[a-z~_]*)\.m4$')
n=$(printf '%s\n' "$files" | grep -c .)
missing=$(for f in $files; do head -c 4096 "$f" | grep -q "$spdx" || echo "$f"; done)
ok "$([ "$n" -gt 300 ] && echo 0 || echo 1)" "the project's sources are found ($n files)"
is "$(printf '%s' "$missing" | tr '\n' ' ')" "" "every one names $spdx near its top"
like "$(grep -A1 '^Files: \*$' debian/copyright)" "^Copyright: " "debian/copyright has a stanza for the project's files"
is "$(awk '/^Files: \*$/{f=1; next} f && /^License:/{print $2; exit}' debian/copyright)" "GPL-2.0-or-later" \
	"... under GPL-2.0-or-later"
is "$(sed -n 's/^License:[[:space:]]*//p' spank-rdzv.spec.in)" "GPL-2.0-or-later" "the RPM spec's License: is GPL-2.0-or-later"
like "$(cat spank-rdzv.spec.in)" "%license COPYING" "... and the RPM ships COPYING as its licence file"
# The third-party data keeps its own: each licence named in the fixtures'
# README has its stanza in debian/copyright.
for lic in Apache-2.0 LGPL-3.0 BSD-3-Clause MIT QPL-1.0; do
	like "$(cat tests/topo/fixtures/README.md)" "$lic" "the fixtures' README names $lic"
	like "$(cat debian/copyright)" "^License: $lic" "... and debian/copyright has its stanza"
done
done_testing
