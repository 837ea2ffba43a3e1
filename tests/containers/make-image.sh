#!/bin/bash
# make-image.sh: a small squashfs container image with Python 3 and PyTorch
# 2.6 (Debian 13, made with debootstrap, no Slurm), cached on this machine
# keyed by its package list, its environment and this script. Prints the
# image path (pyxis: srun --container-image=PATH).
#
# Its /etc/environment (what `enroot import` makes of an image's ENV) holds
# PYTORCH_VERSION, as NGC's PyTorch images do: pyxis then maps SLURM_PROCID
# to RANK, and enroot's hook 50-slurm-pytorch.sh fires. It also declares
# two NCCL variables, as images do, so the tests can show that a variable
# the image declares is not a user's export.
#
#   RDZV_VERSIONS_CACHE  cache root (default /var/cache/spank-rdzv)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${RDZV_VERSIONS_CACHE:-/var/cache/spank-rdzv}
suite=trixie
pkgs=(python3-torch)
environ=(
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	"PYTORCH_VERSION=2.6.0"
	"NCCL_SOCKET_IFNAME=eth0"
	"NCCL_IB_HCA=mlx5_0"
)
# Not needed to import torch and run a CPU process group; removed to keep
# the image (and mksquashfs on two cores) small.
trim=(
	usr/share/doc usr/share/man usr/share/info usr/share/locale usr/share/i18n
	usr/share/zoneinfo var/cache/apt var/lib/apt/lists var/cache/debconf
	usr/lib/x86_64-linux-gnu/libtorch-test usr/share/libtorch-test
	usr/lib/python3/dist-packages/torch/include usr/include
)
die() { echo "make-image.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap)"
key=$( { echo "$suite"; printf '%s\n' "${pkgs[@]}" "${environ[@]}" "${trim[@]}"; cat "$0"; } \
	| sha256sum | cut -c1-16)
image=$cache/containers-image-$key.sqsh
if [ -f "$image" ]; then echo "$image"; exit 0; fi
root=$(bash "$here/make-root.sh") || die "no containers root (make-root.sh)"
exec 8>"$cache/.containers-image.lock"
flock 8
if [ -f "$image" ]; then echo "$image"; exit 0; fi
dir=$cache/containers-image-$key.d
log=$cache/containers-image-$key.log
rm -rf "$dir" "$image.partial"
mkdir -p "$dir" "$cache/containers-debs"
# The Debian 13 root downloaded most of these packages already.
base=$(bash "$top/tests/versions/make-chroot.sh")
cp -n "$base"/var/cache/apt/archives/*.deb "$cache/containers-debs/" 2>/dev/null || :
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || die "no Debian mirror configured"
t0=$(date +%s)
if ! debootstrap --variant=minbase --cache-dir="$cache/containers-debs" \
	--include="$(IFS=,; echo "${pkgs[*]}")" "$suite" "$dir" "$mirror" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "debootstrap failed, log $log"
fi
t1=$(date +%s)
for p in "${trim[@]}"; do rm -rf "${dir:?}/$p"; done
find "$dir/usr/lib/python3" -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || :
printf '%s\n' "${environ[@]}" > "$dir/etc/environment"
du -sh "$dir" >>"$log"
# mksquashfs from the containers root (squashfs-tools is installed there).
mkdir -p "$root/mnt/image"
unshare -m --propagation private bash -c '
	set -e
	mount --bind "$2" "$1/mnt/image"
	mount --bind "$(dirname "$3")" "$1/mnt/out" 2>/dev/null || { mkdir -p "$1/mnt/out"; mount --bind "$(dirname "$3")" "$1/mnt/out"; }
	chroot "$1" mksquashfs /mnt/image "/mnt/out/$(basename "$3")" -comp zstd -Xcompression-level 3 \
		-processors 2 -noappend -quiet' sq "$root" "$dir" "$image.partial" >>"$log" 2>&1 \
	|| { tail -n 20 "$log" >&2; die "mksquashfs failed, log $log"; }
t2=$(date +%s)
echo "make-image.sh: debootstrap $((t1 - t0)) s, mksquashfs $((t2 - t1)) s, $(du -h "$image.partial" | cut -f1)" >>"$log"
rm -rf "$dir"
mv "$image.partial" "$image"
echo "$image"
