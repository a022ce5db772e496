#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# base.sh: make build/base/linux.tar.xz, the pristine kernel tree the series
# applies to, and print its path.
#
# By default: Debian's linux-source-6.12 binary package at the pinned
# version, checked against the pinned sha256 and cached in $CACHE, so that a
# second run does not download. When the pinned version is gone from the
# archive, the newest 6.12.y is taken with a warning (the series may then not
# apply: it is tied to its base).
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
if [ -f "$deb" ] && echo "$BASE_SHA256  $deb" | sha256sum -c --quiet - 2>/dev/null; then
	say "base: $BASE_PKG $BASE_VERSION (cached, sha256 ok)"
	version=$BASE_VERSION
else
	rm -f "$deb"
	say "base: downloading $BASE_PKG=$BASE_VERSION from Debian's archive"
	if (cd "$CACHE" && apt-get download -q "$BASE_PKG=$BASE_VERSION" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2); [ -f "$deb" ]; then
		echo "$BASE_SHA256  $deb" | sha256sum -c --quiet - ||
			die "$deb does not have the pinned sha256 $BASE_SHA256"
		version=$BASE_VERSION
	else
		version=$(apt-cache policy "$BASE_PKG" | awk '/Candidate:/ { print $2 }')
		[ -n "$version" ] && [ "$version" != "(none)" ] ||
			die "$BASE_PKG is not in the archive (is the security suite in /etc/apt/sources.list.d?)"
		warn "$BASE_PKG $BASE_VERSION is gone from the archive: falling back to $version."
		warn "The series is made for $BASE_VERSION and may not apply; its sha256 cannot be checked against the pin (apt checked it against the signed index)."
		deb=$CACHE/${BASE_PKG}_${version//:/%3a}_all.deb
		[ -f "$deb" ] || (cd "$CACHE" && apt-get download -q "$BASE_PKG=$version" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) || true
		[ -f "$deb" ] || die "could not download $BASE_PKG=$version"
	fi
fi

stamp="$BASE_PKG $version $(sha256sum "$deb" | cut -d' ' -f1)"
if [ -f "$out/linux.tar.xz" ] && [ "$(cat "$out/ORIGIN" 2>/dev/null)" = "$stamp" ]; then
	echo "$out/linux.tar.xz"
	exit 0
fi
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-6.12.tar.xz >"$out/linux.tar.xz.tmp"
mv "$out/linux.tar.xz.tmp" "$out/linux.tar.xz"
echo "$stamp" >"$out/ORIGIN"
say "base: $BASE_PKG $version unpacked to $out/linux.tar.xz"
echo "$out/linux.tar.xz"
