#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# pcap.sh: build/pcap/bin/tcpdump, Debian 12's tcpdump 4.99.3 statically
# linked with its libpcap 1.10.3, both with the project's patches
# (pcap/libpcap/*.patch, pcap/tcpdump/*.patch: TPACKET_V4 and zero-copy
# capture, --tpacket-version and --zerocopy).
#
# The sources are the pristine upstream tarballs of Debian's source
# packages (the .orig.tar.gz, not Debian's patched tree), fetched once with
# `apt-get source --download-only` into $CACHE and checked against pinned
# sha256s. Each is unpacked into build/pcap/src/, committed as a git base
# and the patches applied with `git am`; libpcap is built static
# (--disable-shared) and installed into build/pcap/, tcpdump is configured
# against that libpcap (its pcap-config) and installed there too. Nothing
# is installed outside build/: the system's tcpdump and libpcap stay as
# they are.
#
# Incremental: does nothing when build/pcap was built from the same
# tarballs, patches and script. Dies if our patches' code compiles with a
# warning.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LIBPCAP_SRC=libpcap
LIBPCAP_VERSION=1.10.3-1
LIBPCAP_ORIG=libpcap_1.10.3.orig.tar.gz
LIBPCAP_SHA256=2a8885c403516cf7b0933ed4b14d6caa30e02052489ebd414dc75ac52e7559e6
TCPDUMP_SRC=tcpdump
TCPDUMP_VERSION=4.99.3-1
TCPDUMP_ORIG=tcpdump_4.99.3.orig.tar.gz
TCPDUMP_SHA256=ad75a6ed3dc0d9732945b2e5483cb41dc8b4b528a169315e499c6861952e73b3

out=$BUILD/pcap
log=$out/build.log
mkdir -p "$CACHE"

# fetch <source package> <version> <orig tarball> <sha256>: the upstream
# tarball in $CACHE, downloaded if missing, checked against the pin.
fetch() {
	local pkg=$1 version=$2 orig=$3 sha=$4
	if [ -f "$CACHE/$orig" ] && echo "$sha  $CACHE/$orig" | sha256sum -c --quiet - 2>/dev/null; then
		return
	fi
	rm -f "$CACHE/$orig"
	say "pcap: downloading the source package $pkg=$version from Debian's archive"
	(cd "$CACHE" && apt-get source --download-only -q "$pkg=$version" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || true
	[ -f "$CACHE/$orig" ] ||
		die "pcap: could not download $pkg=$version (is there a deb-src entry? make deps adds one)"
	echo "$sha  $CACHE/$orig" | sha256sum -c --quiet - ||
		die "pcap: $CACHE/$orig does not have the pinned sha256 $sha"
}

fetch $LIBPCAP_SRC $LIBPCAP_VERSION $LIBPCAP_ORIG $LIBPCAP_SHA256
fetch $TCPDUMP_SRC $TCPDUMP_VERSION $TCPDUMP_ORIG $TCPDUMP_SHA256

# What the build is made of: if it has not changed, there is nothing to do.
stamp=$( {
	echo "$LIBPCAP_SHA256 $TCPDUMP_SHA256"
	sha256sum "$TOP"/pcap/libpcap/*.patch "$TOP"/pcap/tcpdump/*.patch "$0" |
		sed "s|$TOP/||"
} | sha256sum | cut -d' ' -f1)
if [ -x "$out/bin/tcpdump" ] && [ "$(cat "$out/STAMP" 2>/dev/null)" = "$stamp" ]; then
	say "pcap: $out/bin/tcpdump is up to date"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out/src"
: >"$log"

# unpack <orig tarball> <dir> <patch dir>: the pristine tree committed as
# the base (tag pristine), the patches applied on top with git am.
unpack() {
	local orig=$1 dir=$2 patches=$3
	mkdir "$dir"
	tar -C "$dir" --strip-components=1 -xzf "$CACHE/$orig"
	git -C "$dir" init -q
	git -C "$dir" add -A -f
	GIT_AUTHOR_NAME="$GIT_COMMITTER_NAME" GIT_AUTHOR_EMAIL="$GIT_COMMITTER_EMAIL" \
		GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git -C "$dir" commit -q -m "$orig"
	git -C "$dir" tag pristine
	git -C "$dir" am -q "$patches"/*.patch ||
		die "pcap: the patches in $patches do not apply to $orig"
	say "pcap: $orig + $(ls "$patches"/*.patch | wc -l) patches in $dir"
}

unpack $LIBPCAP_ORIG "$out/src/libpcap" "$TOP/pcap/libpcap"
unpack $TCPDUMP_ORIG "$out/src/tcpdump" "$TOP/pcap/tcpdump"

# Only what tcpdump needs: no D-Bus, RDMA, Bluetooth or netlink (802.11
# monitor mode) capture, so that the static libpcap needs no other
# library.
say "pcap: building libpcap (log: $log)"
(
	cd "$out/src/libpcap"
	./configure --prefix="$out" --disable-shared --disable-dbus \
		--disable-rdma --disable-bluetooth --without-libnl CC=gcc
	make -j"$JOBS"
	make install
) >>"$log" 2>&1 || { tail -30 "$log"; die "pcap: libpcap does not build"; }

# tcpdump's configure.ac is patched: regenerate configure. Its configure
# takes the libpcap of the first pcap-config in $PATH, ours.
say "pcap: building tcpdump"
(
	cd "$out/src/tcpdump"
	autoconf -W none
	PATH=$out/bin:$PATH ./configure --prefix="$out" --without-crypto CC=gcc
	make -j"$JOBS"
	make install
) >>"$log" 2>&1 || { tail -30 "$log"; die "pcap: tcpdump does not build"; }

# The files the patches touch must compile without a warning.
files=$( { git -C "$out/src/libpcap" diff --name-only pristine HEAD;
	   git -C "$out/src/tcpdump" diff --name-only pristine HEAD; } |
	 grep '\.c$' | xargs -r -n1 basename | sort -u | paste -sd'|')
if [ -n "$files" ] && grep -E "^[^ ]*($files):[0-9]+:([0-9]+:)? warning:" "$log" >&2; then
	die "pcap: the patched files compile with warnings (see $log)"
fi

"$out/bin/tcpdump" --version 2>&1 | grep -q 'TPACKET_V4' ||
	die "pcap: $out/bin/tcpdump is not linked with the patched libpcap"
! ldd "$out/bin/tcpdump" 2>/dev/null | grep -q libpcap ||
	die "pcap: $out/bin/tcpdump uses a shared libpcap"
echo "$stamp" >"$out/STAMP"
say "pcap: built $out/bin/tcpdump ($("$out/bin/tcpdump" --version 2>&1 | sed -n 2p))"
