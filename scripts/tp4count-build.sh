#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tp4count-build.sh: build the instruction counting plugin (bench/tp4count.c)
# for the installed QEMU, and the guest's marker program (bench/tp4mark.c),
# into build/tp4count/. The plugin's header, include/qemu/qemu-plugin.h,
# comes from Debian's qemu source package of the installed QEMU's version
# (7.2: plugin API 1), its upstream tarball and the header sha256-pinned;
# kept in the download cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

QEMU_MINOR=7.2
QEMU_ORIG=qemu_7.2+dfsg.orig.tar.xz
QEMU_ORIG_SHA256=91aca71520040edc40b8d437aa3004dae614f58e286cf653ee8996c07af2962f
QEMU_PLUGIN_H_SHA256=19f277b037d05a8bcb5069f2f81a465d177208e5903048a915c56627d4c3748e

out=$BUILD/tp4count
hdr=$CACHE/qemu-$QEMU_MINOR/qemu-plugin.h

ver=$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\.[0-9]*\).*/\1/p')
[ "$ver" = "$QEMU_MINOR" ] ||
	die "tp4count: QEMU $ver is installed; the plugin is pinned to $QEMU_MINOR's plugin API"

if ! echo "$QEMU_PLUGIN_H_SHA256  $hdr" | sha256sum -c --quiet >/dev/null 2>&1; then
	dl=$CACHE/qemu-$QEMU_MINOR
	mkdir -p "$dl"
	if ! echo "$QEMU_ORIG_SHA256  $dl/$QEMU_ORIG" | sha256sum -c --quiet >/dev/null 2>&1; then
		say "tp4count: fetching Debian's qemu source package (for qemu-plugin.h)"
		(cd "$dl" && apt-get source --download-only -qq qemu >/dev/null 2>&1) ||
			die "tp4count: apt-get source qemu failed (make deps adds the deb-src entry)"
		echo "$QEMU_ORIG_SHA256  $dl/$QEMU_ORIG" | sha256sum -c --quiet ||
			die "tp4count: $QEMU_ORIG does not have the pinned sha256"
	fi
	tar -xJf "$dl/$QEMU_ORIG" -O --wildcards '*/include/qemu/qemu-plugin.h' >"$hdr.tmp"
	echo "$QEMU_PLUGIN_H_SHA256  $hdr.tmp" | sha256sum -c --quiet ||
		die "tp4count: qemu-plugin.h does not have the pinned sha256"
	mv "$hdr.tmp" "$hdr"
	rm -f "$dl"/qemu_*.debian.tar.xz "$dl"/qemu_*.dsc
fi

mkdir -p "$out"
src=$TOP/bench
if [ ! -f "$out/tp4count.so" ] || [ "$src/tp4count.c" -nt "$out/tp4count.so" ] ||
   [ ! -f "$out/tp4mark" ] || [ "$src/tp4mark.c" -nt "$out/tp4mark" ] ||
   [ "$src/tp4mark.h" -nt "$out/tp4mark" ]; then
	gcc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC \
		-I"$(dirname "$hdr")" -o "$out/tp4count.so" "$src/tp4count.c" ||
		die "tp4count: the plugin does not build"
	gcc -O2 -Wall -Werror -o "$out/tp4mark" "$src/tp4mark.c" ||
		die "tp4count: tp4mark does not build"
fi
echo "$out/tp4count.so"
