#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# base.sh: make build/base/linux.tar.xz, the pristine kernel tree the series
# applies to, and print its path.
#
# By default: Debian's linux-source-7.3 binary package of trixie-backports at
# the pinned version (scripts/lib.sh), checked against the pinned sha256 and
# cached in $CACHE, so that a second run does not download. When the pinned
# version is gone from the archive, it stops and names the linux-source-7.*
# versions that trixie-backports serves (the series is tied to its base: a
# newer one is a port, not a fallback).
#
# KERNEL_SRC=<dir or tarball> uses that tree instead (your own checkout).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$BUILD/base
mkdir -p "$out" "$CACHE"

if [ -n "${KERNEL_SRC:-}" ]; then
	src=$(realpath "$KERNEL_SRC")
	if [ -d "$src" ]; then
		[ -f "$src/Makefile" ] && [ -d "$src/net/packet" ] ||
			die "KERNEL_SRC=$src is not a kernel tree"
		say "base: the tree in $src (KERNEL_SRC)"
		# A tarball of what git tracks if it is a git checkout, else
		# of everything but build output.
		if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
			git -C "$src" archive --format=tar --prefix=linux/ HEAD |
				xz -T0 -1 >"$out/linux.tar.xz.tmp"
		else
			tar -C "$(dirname "$src")" --transform "s|^$(basename "$src")|linux|" \
				--exclude='*.o' --exclude='*.cmd' --exclude=.git \
				-cf - "$(basename "$src")" | xz -T0 -1 >"$out/linux.tar.xz.tmp"
		fi
	elif [ -f "$src" ]; then
		say "base: the tarball $src (KERNEL_SRC)"
		cp "$src" "$out/linux.tar.xz.tmp"
	else
		die "KERNEL_SRC=$KERNEL_SRC: no such file or directory"
	fi
	mv "$out/linux.tar.xz.tmp" "$out/linux.tar.xz"
	echo "KERNEL_SRC=$src" >"$out/ORIGIN"
	echo "$out/linux.tar.xz"
	exit 0
fi

deb=$CACHE/${BASE_PKG}_${BASE_VERSION//:/%3a}_all.deb
if [ -f "$deb" ] && echo "$BASE_SHA256  $deb" | sha256sum -c --quiet - >/dev/null 2>&1; then
	say "base: $BASE_PKG $BASE_VERSION (cached, sha256 ok)"
else
	rm -f "$deb"
	# From the archive's pool by name: the pinned sha256 is the trust (as
	# a signed index would be), and the system's apt needs no sources
	# entry for $BASE_SUITE.
	url=$DEBIAN_MIRROR/pool/main/l/linux/${BASE_PKG}_${BASE_VERSION//:/%3a}_all.deb
	say "base: downloading $BASE_PKG $BASE_VERSION ($url)"
	if ! curl -fsSL --retry 3 -o "$deb.tmp" "$url"; then
		rm -f "$deb.tmp"
		err "base: $BASE_PKG $BASE_VERSION cannot be downloaded from $DEBIAN_MIRROR"
		if kernels=$(apt_kernels "$BASE_SUITE"); then
			err "base: $BASE_SUITE serves these, oldest first:"
			printf '  %s\n' "$kernels" >&2
		else
			err "base: and $BASE_SUITE's index cannot be read either"
		fi
		die "base: pin a version that exists (BASE_VERSION and BASE_SHA256 in scripts/lib.sh; the series may need porting), or KERNEL_SRC=<tree>"
	fi
	echo "$BASE_SHA256  $deb.tmp" | sha256sum -c --quiet - ||
		die "base: $url does not have the pinned sha256 $BASE_SHA256"
	mv "$deb.tmp" "$deb"
fi
version=$BASE_VERSION

stamp="$BASE_PKG $version $(sha256sum "$deb" | cut -d' ' -f1)"
if [ -f "$out/linux.tar.xz" ] && [ "$(cat "$out/ORIGIN" 2>/dev/null)" = "$stamp" ]; then
	echo "$out/linux.tar.xz"
	exit 0
fi
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$BASE_PKG.tar.xz" >"$out/linux.tar.xz.tmp"
mv "$out/linux.tar.xz.tmp" "$out/linux.tar.xz"
echo "$stamp" >"$out/ORIGIN"
say "base: $BASE_PKG $version unpacked to $out/linux.tar.xz"
echo "$out/linux.tar.xz"
