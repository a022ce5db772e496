#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sparse-build.sh: print the path of a sparse that the base's kbuild takes.
#
# 7.3's scripts/checker-valid.sh wants a sparse that knows
# __typeof_unqual__; Debian 12's 0.6.4 does not, and kbuild then skips the
# checker with a warning only, so C=1/C=2 would check nothing. Debian
# unstable's 0.6.5~rc1 does: its upstream tarball is fetched from the
# archive's pool (pinned sha256), built once into $CACHE and reused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SPARSE_VERSION=0.6.5~rc1
SPARSE_SHA256=3ac8855ec7f3ab92f325be0f64347ccc2b10f8b4d7c2906783ee8e2bdab3f0de
tarball=$CACHE/sparse_${SPARSE_VERSION}.orig.tar.gz
dir=$CACHE/sparse-${SPARSE_VERSION/\~/-}

if [ -x "$dir/sparse" ] && [ "$(cat "$dir/.tp4-sha256" 2>/dev/null)" = "$SPARSE_SHA256" ]; then
	echo "$dir/sparse"
	exit 0
fi
mkdir -p "$CACHE"
# (sha256sum -c says FAILED on stdout: this script's stdout is the path only.)
if ! echo "$SPARSE_SHA256  $tarball" | sha256sum -c --quiet - >/dev/null 2>&1; then
	url=$DEBIAN_MIRROR/pool/main/s/sparse/sparse_${SPARSE_VERSION}.orig.tar.gz
	say "sparse: downloading $url"
	curl -fsSL --retry 3 -o "$tarball.tmp" "$url" ||
		die "sparse: cannot download $url"
	echo "$SPARSE_SHA256  $tarball.tmp" | sha256sum -c --quiet - >&2 ||
		die "sparse: $url does not have the pinned sha256 $SPARSE_SHA256"
	mv "$tarball.tmp" "$tarball"
fi
say "sparse: building $SPARSE_VERSION into $dir"
rm -rf "$dir"; mkdir -p "$dir"
tar -xzf "$tarball" -C "$dir" --strip-components=1
# Only the checker itself: no GTK, LLVM or XML front ends.
make -C "$dir" -j"$JOBS" sparse HAVE_GTK=no HAVE_LLVM=no HAVE_LIBXML=no \
	>"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log" >&2; die "sparse: build failed"; }
if [ -f "$TREE/scripts/checker-valid.sh" ] &&
   [ "$(sh "$TREE/scripts/checker-valid.sh" "$dir/sparse" 2>/dev/null)" != 1 ]; then
	die "sparse: $dir/sparse is built, and $TREE's kbuild still refuses it"
fi
echo "$SPARSE_SHA256" >"$dir/.tp4-sha256"
echo "$dir/sparse"
