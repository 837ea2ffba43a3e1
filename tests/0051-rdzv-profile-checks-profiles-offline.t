#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rdzv-profile, the admin's checker: the shipped example profiles pass, a
# broken one is named by file:line with exit 1, show prints what a step
# gets with the line that won, and unsafe directories are refused.
. "$top_srcdir/tests/lib/tap.sh"
tool=$top_builddir/helpers/rdzv-profile
[ -x "$tool" ] || skip_all "helpers/rdzv-profile not built"
me=$(id -u)
# under /run when we may (root), else the build tree: a directory below a
# world-writable one such as /tmp is (rightly) refused
d=/run/rdzv-profile-check.$$
mkdir "$d" 2>/dev/null || { d=$top_builddir/tests/rdzv-profile-check.$$; mkdir -p "$d"; } || skip_all "cannot create $d"
chmod 755 "$d"
trap 'rm -rf "$d"' EXIT
cp "$top_srcdir"/etc/profiles/*.profile "$d/"
chmod 644 "$d"/*.profile
"$tool" -d "$d" -u "$me" check >/dev/null 2>&1 || skip_all "the build tree is not a trusted path ($("$tool" -d "$d" -u "$me" check 2>&1 | head -1))"

out=$("$tool" -d "$d" -u "$me" -s site-base -m h100:h100-ndr check 2>&1); rc=$?
is "$rc" 0 "the example profiles check clean"
like "$out" "site-base: ok, 6 variables: Site defaults" "check prints each profile with its description"
like "$out" "roce-seed.profile:[0-9]+: warning: NCCL_BUFFSIZE is for debugging only" "the seed's NCCL_BUFFSIZE draws the debug-only warning"
like "$out" "7 profiles, 0 errors" "check sums up"
like "$out" "require mnnvl \(.*gb200-mnnvl.profile:[0-9]+\): every node is checked" "check says which profile requires multi-node NVLink"
like "$out" "slingshot-rccl: ok, [0-9]+ variables: Slingshot 11" "the Slingshot/RCCL example checks clean"
like "$out" "mi300x-roce: ok, [0-9]+ variables: MI300X" "the MI300X example checks clean"
like "$out" "slingshot-rccl.profile:[0-9]+: note: FI_CXI_RDZV_PROTO=alt_read also needs the allocation option --network=disable_rdzv_get" "alt_read: check names the allocation option, with file:line"
like "$out" "multinode \(.*slingshot-rccl.profile:[0-9]+\): default NCCL_NET=OFI in steps on several nodes only" "check lists the multinode line"
set_ifname=$(grep -l '^[[:space:]]*[a-z].*NCCL_SOCKET_IFNAME' "$d/slingshot-rccl.profile" "$d/mi300x-roce.profile")
is "$set_ifname" "" "neither AMD example sets NCCL_SOCKET_IFNAME (the plugin does)"

out=$("$tool" -d "$d" -u "$me" show slingshot-rccl 2>&1)
unlike "$out" "NCCL_NET=OFI" "show: a one-node step gets no NCCL_NET"
like "$out" "# multinode entries apply to steps on several nodes: see them with --nodes 2" "show says what the one-node view leaves out"
out=$("$tool" -d "$d" -u "$me" -N 4 show slingshot-rccl 2>&1)
like "$out" "; a step on 4 nodes" "show --nodes names the step size"
like "$out" "default +NCCL_NET=OFI +# profile slingshot-rccl, .*slingshot-rccl.profile:[0-9]+" "show --nodes 4: NCCL_NET=OFI with its line"
"$tool" -d "$d" -N 0 show >/dev/null 2>&1; is "$?" 2 "--nodes 0 is a usage error"

out=$("$tool" -d "$d" -u "$me" -s site-base -m h100:h100-ndr -p h100 show 2>&1); rc=$?
is "$rc" 0 "show exits 0"
like "$out" "^# profile: h100-ndr \(partition default\)" "show names the partition default"
like "$out" "enforce +NCCL_IB_HCA==mlx5_0:1,.*h100-ndr.profile:[0-9]+" "show names the line that won"
out=$("$tool" -d "$d" -u "$me" -s site-base show none 2>&1)
like "$out" "unset +NCCL_P2P_DISABLE +# profile site-base \(default\)" "show none keeps the site default's unset entries"
unlike "$out" "NCCL_SOCKET_IFNAME" "show none drops the site default's plain defaults"
out=$("$tool" -d "$d" -u "$me" -s site-base list 2>&1)
like "$out" "\* site-base +Site defaults.*\[applies\]" "list marks the profile that applies"

printf 'description typo\ninclude site-base\ndefault NCCL_IB_HCAS=mlx5_0\n' > "$d/typo.profile"
chmod 644 "$d/typo.profile"
out=$("$tool" -d "$d" -u "$me" check 2>&1); rc=$?
is "$rc" 1 "a broken profile makes check exit 1"
like "$out" "typo: error: .*typo.profile:3: unknown NCCL variable NCCL_IB_HCAS \(did you mean NCCL_IB_HCA\?\)" "the error names file:line and the likely name"
like "$out" "8 profiles, 1 error" "the summary counts it"
out=$("$tool" -d "$d" -u "$me" -s nosuch check 2>&1)
like "$out" "error: site default profile=nosuch: .*no such profile" "a site default that does not exist is an error"
rm -f "$d/typo.profile"

chmod 664 "$d/debug.profile"
out=$("$tool" -d "$d" -u "$me" check 2>&1); rc=$?
is "$rc" 1 "a group-writable profile fails the check"
like "$out" "debug.profile is writable by its group: refused" "... with the reason"
chmod 644 "$d/debug.profile"
chmod 777 "$d"
out=$("$tool" -d "$d" -u "$me" check 2>&1); rc=$?
is "$rc" 1 "a world-writable directory fails the check"
chmod 755 "$d"
chmod 600 "$d/debug.profile"
out=$("$tool" -d "$d" -u "$me" check 2>&1)
like "$out" "not readable by others: jobs of other users will fail" "a profile users cannot read is warned about"
chmod 644 "$d/debug.profile"
"$tool" -d "$d" bogus >/dev/null 2>&1; is "$?" 2 "an unknown command is a usage error"
"$tool" check >/dev/null 2>&1; is "$?" 2 "no directory is a usage error"
done_testing
