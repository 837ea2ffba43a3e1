#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package builds from the distributed tree with
# `dpkg-buildpackage -us -uc -b`, depends on exactly the Slurm major it was
# built against, installs (into a scratch root: dpkg -x) with its plugin in
# Debian's plugin directory, man pages and a plugstack.conf.d example that
# enables nothing, and its INSTALLED rdzv.so loads in the local Slurm
# cluster and gives `srun --rdzv=torch` tasks their ranks. The RPM spec in
# the same tree builds an rpm whose Release and Requires name the Slurm major.
# Every leg runs it against its own suite's libslurm-dev: bookworm 22.05 (the
# host), trixie 24.11 and sid 26.05 (tests/versions roots).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/lib/e2e.sh"
e2e_require
for tool in dpkg-buildpackage dh dh_autoreconf dpkg-deb; do
	command -v $tool >/dev/null || skip_all_missing "debhelper dpkg-dev" "$tool not installed"
done
dpkg-query -W libslurm-dev >/dev/null 2>&1 || skip_all_missing libslurm-dev "libslurm-dev not installed"


work=$(mktemp -d /tmp/rdzv-0093.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The packages are built by their own makes: nothing of this `make check`
# (jobserver, TESTS=...) may leak into them.
clean_env=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u TESTS)

# The Slurm major as the test sees it, independently of debian/rules.
slurm_version=$(dpkg-query -W -f='${Version}' libslurm-dev)
major=$(printf '%s\n' "$slurm_version" | sed -E 's/^([0-9]+:)?([0-9]+)\.([0-9]+).*/\2.\3/')
next=$(printf '%s\n' "$major" | awk -F. '{ printf "%d.%02d", $1, $2 + 1 }')
diag "libslurm-dev $slurm_version: Slurm major $major"

# What a packager gets: the tree `make dist` would pack.
ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
tree=$work/spank-rdzv-$ver
"${clean_env[@]}" make -s -C "$top_builddir" distdir distdir="$tree" >"$work/distdir.log" 2>&1
is "$?" 0 "make distdir gives the tree packagers build from"
[ -x "$tree/debian/rules" ] || { echo "Bail out! no debian/rules in the distributed tree"; exit 1; }
tar -C "$work" -czf "$work/spank-rdzv-$ver.tar.gz" "spank-rdzv-$ver"

# ---- Debian
# The package is built where localhost resolves to ::1 first, as in Debian 13
# and unstable roots (debootstrap, a build daemon's chroot) and unlike this
# machine perhaps (Debian 12 lists only 127.0.0.1): a unit test that
# assumed 127.0.0.1 once failed dh_auto_test there and only there. The build
# runs in a private mount namespace whose /etc/hosts lists ::1 localhost
# before 127.0.0.1 localhost, then this machine's other names; nothing
# outside it sees that file.
hosts=$work/hosts
{
	printf '::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\tlocalhost\n'
	awk '/^[[:space:]]*(#|$)/ { next }
	     { line = $1; n = 0
	       for (i = 2; i <= NF && $i !~ /^#/; i++)
	           if ($i != "localhost" && $i != "ip6-localhost" && $i != "ip6-loopback") { line = line " " $i; n++ }
	       if (n) print line }' /etc/hosts
} >"$hosts"
v6_first() { # v6_first CMD...: CMD with that /etc/hosts
	unshare -m --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts" "$@"
}
# The first address getaddrinfo gives for localhost, asked as the plugin and
# its unit tests ask (no AI_ADDRCONFIG, unlike getent ahosts).
localhost_first='import socket; print(socket.getaddrinfo("localhost", None, type=socket.SOCK_STREAM)[0][4][0])'
if [ -x "$PY" ]; then
	first=$(v6_first "$PY" -c "$localhost_first" 2>&1)
else
	first=$(v6_first getent ahosts localhost 2>&1 | awk '{ print $1; exit }')
fi
diag "localhost resolves to ${first:-nothing} first where the package is built (here: $(getent ahosts localhost | awk '{ print $1; exit }'))"
# ::1 comes first only where an interface holds it: IPv6 off (the kernel's
# ipv6.disable, disable_ipv6 on lo) sorts it last whatever the hosts file says.
v6_on=0
awk '$1 == "00000000000000000000000000000001" && $6 == "lo" { f = 1 } END { exit !f }' \
	/proc/net/if_inet6 2>/dev/null && v6_on=1
if [ $v6_on = 1 ]; then
	is "$first" "::1" "the package is built where localhost resolves to ::1 first (as on Debian 13 and unstable)"
else
	skip "IPv6 is off here (no ::1 on lo): localhost cannot resolve to ::1 first"
fi
rpm_defines=()
cp -a "$tree" "$work/deb"
(cd "$work/deb" && v6_first "${clean_env[@]}" DEB_BUILD_OPTIONS="parallel=2" \
	timeout 1200 dpkg-buildpackage -us -uc -b) >"$work/deb.log" 2>&1
rc=$?
is "$rc" 0 "dpkg-buildpackage -us -uc -b builds the package"
if [ "$rc" != 0 ]; then
	# The failed unit tests first: the tail is mostly the passes before them.
	grep -E '^(FAIL|ERROR|XPASS):' "$work/deb.log" | head -n 20 | sed 's/^/#   /'
	sed 's/^/#   /' "$work/deb.log" | tail -n 40
	done_testing
	exit 1
fi
like "$(cat "$work/deb.log")" "make.* check-unit" "the package build runs the unit tests"
# test-master says which address its localhost checks met (a diag line).
if [ $v6_on = 1 ]; then
	like "$(cat "$work/deb/tests/unit/test-master.log" 2>&1)" "^# localhost resolves to ::1 first here" \
		"... and they met localhost as ::1 first"
else
	skip "IPv6 is off here: the unit tests met localhost as $first first"
fi
unlike "$(cat "$work/deb.log")" "(PASS|FAIL|SKIP|ERROR): tests/[0-9]" \
	"... and only those (the others need root or a cluster)"
deb=$(ls "$work"/spank-rdzv_"$ver"-*_*.deb 2>/dev/null | head -n 1)
ok "$([ -f "$deb" ] && echo 0 || echo 1)" "a spank-rdzv .deb was written ($(basename "$deb"))"

depends=$(dpkg-deb -f "$deb" Depends)
diag "Depends: $depends"
like "$depends" "slurm-wlm-basic-plugins \(>= $major\)" "Depends asks for Slurm $major or newer"
like "$depends" "slurm-wlm-basic-plugins \(<< $next~\)" "Depends refuses Slurm $next and later (the next major)"
if command -v apt-get >/dev/null; then
	out=$(apt-get -s -o Debug::NoLocking=1 install "$deb" 2>&1)
	like "$out" "Inst spank-rdzv" "the package's dependencies are satisfied by the installed Slurm (apt-get -s)"
else
	skip "apt-get not installed"
fi

root=$work/root
dpkg -x "$deb" "$root"
plugindir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm
plugin=$root$plugindir/rdzv.so
ok "$([ -f "$plugin" ] && echo 0 || echo 1)" "rdzv.so is installed in Debian's Slurm plugin directory $plugindir"
ok "$([ -f "${plugin%/*}/rdzv_node.so" ] && [ ! -e "${plugin%/*}/rdzv_node.la" ] && echo 0 || echo 1)" "... and rdzv_node.so beside it (no libtool .la)"
ok "$([ ! -e "$root$plugindir/rdzv.la" ] && echo 0 || echo 1)" "no libtool archive is shipped"
for page in man8/rdzv.8 man1/rdzv-topo.1 man1/rdzv-hostfile.1 man1/rdzv-profile.1 man1/rdzv-preflight.1 man1/rdzv-retry.1 man1/rdzv-report.1; do
	ok "$([ -f "$root/usr/share/man/$page.gz" ] && echo 0 || echo 1)" "man page $page is installed"
done
for prog in rdzv-topo rdzv-hostfile rdzv-profile rdzv-preflight rdzv-retry rdzv-report; do
	ok "$([ -x "$root/usr/bin/$prog" ] && echo 0 || echo 1)" "helper $prog is installed"
done
# The release named once (configure.ac): the package, its changelog, the
# installed helpers and the release documents all say it.
is "$(dpkg-deb -f "$deb" Version)" "$(dpkg-parsechangelog -l "$top_srcdir/debian/changelog" -S Version)" \
	"the .deb's version is debian/changelog's ($(dpkg-deb -f "$deb" Version))"
like "$(dpkg-deb -f "$deb" Version)" "^$ver-" "... release $ver, configure.ac's"
like "$(zcat "$root/usr/share/doc/spank-rdzv/changelog.Debian.gz" 2>&1 | head -n 1)" "^spank-rdzv \($ver-" \
	"the package's changelog opens with release $ver"
for prog in rdzv-report rdzv-preflight; do
	is "$("$root/usr/bin/$prog" --version 2>&1 | head -n 1)" "$prog (spank-rdzv) $ver" "the installed $prog --version says $ver"
done
for docfile in NEWS.md SECURITY.md stability.md; do
	ok "$(ls "$root/usr/share/doc/spank-rdzv/$docfile"* >/dev/null 2>&1 && echo 0 || echo 1)" "$docfile is installed with the guides"
done
out=$("$root/usr/bin/rdzv-hostfile" --nodelist='n[1-2]' --slots=4 2>&1)
is "$(printf '%s' "$out" | tr '\n' ' ')" "n1 slots=4 n2 slots=4" "the installed rdzv-hostfile runs"

copyright=$root/usr/share/doc/spank-rdzv/copyright
like "$(cat "$copyright" 2>&1)" "^Files: \*\$" "the package ships its copyright file"
is "$(awk '/^Files: \*$/{f=1; next} f && /^License:/{print $2; exit}' "$copyright" 2>/dev/null)" "GPL-2.0-or-later" \
	"... whose licence for the project's files is GPL-2.0-or-later"

conf=$root/etc/slurm/plugstack.conf.d/rdzv.conf
ok "$([ -f "$conf" ] && echo 0 || echo 1)" "the plugstack.conf.d example is installed"
is "$(grep -v -E '^[[:space:]]*(#|$)' "$conf" | wc -l)" 0 "the example enables nothing (every line is a comment)"
like "$(cat "$conf")" "^#required $plugindir/rdzv.so " "the example names the installed plugin's path"
like "$(dpkg-deb -I "$deb" conffiles 2>/dev/null)" "/etc/slurm/plugstack.conf.d/rdzv.conf" "the example is a conffile (an admin's edits survive upgrades)"
like "$(readelf -d "$plugin")" "BIND_NOW|FLAGS.*NOW" "the plugin is built with hardening (bindnow)"
unlike "$(readelf -d "$plugin")" "libslurm" "the plugin does not link libslurm"

# The installed plugin in the cluster, with the example's first line's
# arguments: the common case an admin enables by uncommenting it.
args=$(sed -n "s|^#required $plugindir/rdzv.so ||p" "$conf" | head -n 1)
diag "plugstack arguments from the example: $args"
e2e_start RDZV_PLUGIN="$plugin" RDZV_PLUGSTACK_ARGS="$args"
trap 'e2e_stop; rm -rf "$work"' EXIT
like "$(cat "$RDZV_CLUSTER_DIR/plugstack.conf")" "$plugin" "the cluster's plugstack.conf names the installed rdzv.so"
run_to 60 srun -N2 -n4 --rdzv=torch printenv RANK
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "0 1 2 3 " "srun --rdzv=torch through the installed plugin gives every task its RANK"
run_to 60 srun -N2 -n4 --rdzv=torch bash -c 'echo $WORLD_SIZE $MASTER_ADDR'
is "$(printf '%s\n' "$out" | sort -u | tr '\n' ' ')" "4 n1 " "... and the same WORLD_SIZE and MASTER_ADDR"
run_to 30 srun -N1 --rdzv=bogus true
like "$out" "valid modes are" "the installed plugin refuses a bad --rdzv value in srun"
e2e_stop
# Release the cluster (and its lock): other tests may start theirs during
# the rpm build.
trap 'rm -rf "$work"' EXIT
exec 9>&-

# ---- RPM
if ! command -v rpmbuild >/dev/null; then
	skip_missing rpm "rpmbuild not installed (Debian package rpm)"
	done_testing
	exit $?
fi
top=$work/rpmbuild
# --nodeps: Debian has no slurm-devel rpm; -tb: the spec comes from the tarball.
"${clean_env[@]}" timeout 1200 rpmbuild -tb --nodeps --nocheck \
	--define "_topdir $top" --define "_dbpath $work/rpmdb" --define 'debug_package %{nil}' "${rpm_defines[@]}" \
	"$work/spank-rdzv-$ver.tar.gz" >"$work/rpm.log" 2>&1
rc=$?
is "$rc" 0 "rpmbuild -tb builds the rpm from the distributed tarball"
[ "$rc" = 0 ] || sed 's/^/#   /' "$work/rpm.log" | tail -n 40
rpm=$(ls "$top"/RPMS/*/spank-rdzv-"$ver"-*.rpm 2>/dev/null | head -n 1)
ok "$([ -f "$rpm" ] && echo 0 || echo 1)" "an rpm was written ($(basename "$rpm"))"
q() { rpm --dbpath "$work/rpmdb" -qp "$@" "$rpm" 2>/dev/null; }
tag=${major/./}
like "$(q --qf '%{RELEASE}')" "^1\.slurm$tag" "the rpm's Release names Slurm $major (1.slurm$tag)"
requires=$(q --requires)
like "$requires" "^slurm >= $major" "the rpm requires Slurm $major or newer"
like "$requires" "^slurm < $next~" "the rpm refuses Slurm $next and later"
files=$(q -l)
like "$files" "/slurm/rdzv\.so$" "the rpm holds rdzv.so in the Slurm plugin directory"
like "$files" "/man8/rdzv\.8" "the rpm holds the man page"
like "$files" "/etc/slurm/plugstack.conf.d/rdzv.conf" "the rpm holds the plugstack.conf.d example"
unlike "$files" "\.la$" "the rpm ships no libtool archive"
is "$(q --qf '%{VERSION}')" "$ver" "the rpm's Version is release $ver"
like "$(q --changelog | head -n 1)" " - $ver-1\$" "its %changelog opens with release $ver"
like "$files" "/NEWS\.md" "the rpm holds NEWS.md"
done_testing
