#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh: install what the project needs on a Debian 12 machine (as root),
# saying what it installs. Idempotent: a second run installs nothing.
# With --check it only tells whether something is missing (exit 1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VNG_VERSION=1.42
PKGS="gcc make bc flex bison libelf-dev libssl-dev dwarves cpio kmod ccache
sparse perl python3 python3-venv python3-ply python3-git qemu-system-x86 udev iproute2 util-linux
xz-utils rsync git iputils-ping libcap2-bin ethtool
libxdp-dev libbpf-dev pkg-config python3-matplotlib
autoconf tcpdump python3-sphinx python3-yaml"

missing_pkgs() {
	local p
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			printf '%s ' "$p"
	done
}

vng_ok() {
	command -v vng >/dev/null 2>&1 &&
		[ "$(vng --version 2>/dev/null | awk '{ print $2 }')" = "$VNG_VERSION" ]
}

# The deb-src entry gives the pristine libpcap and tcpdump sources.
SRC_LIST=/etc/apt/sources.list.d/tpacket4-deb-src.sources
debsrc_ok() { [ -f "$SRC_LIST" ] || grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/; }

pkgs=$(missing_pkgs)
if [ "${1:-}" = --check ]; then
	[ -z "$pkgs" ] && vng_ok && debsrc_ok && exit 0
	exit 1
fi

[ "$(id -u)" = 0 ] || { [ -z "$pkgs" ] && vng_ok && debsrc_ok; } ||
	die "deps: run as root to install: ${pkgs:-}${pkgs:+ }$(vng_ok || echo virtme-ng)"

update=0
if ! debsrc_ok; then
	say "deps: adding a deb-src entry for bookworm ($SRC_LIST)"
	cat >"$SRC_LIST" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	update=1
fi
[ -n "$pkgs" ] && update=1
if [ $update = 1 ]; then
	apt-get update -q >/dev/null
fi
if [ -n "$pkgs" ]; then
	say "deps: installing $pkgs"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $pkgs >/dev/null
fi

if ! vng_ok; then
	say "deps: installing virtme-ng $VNG_VERSION (PyPI) into $CACHE/venv"
	python3 -m venv "$CACHE/venv"
	"$CACHE/venv/bin/pip" install -q "virtme-ng==$VNG_VERSION"
	vng_ok || die "deps: virtme-ng $VNG_VERSION is not usable after install"
fi
say "deps: all present"
