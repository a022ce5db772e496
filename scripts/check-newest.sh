#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-newest.sh (make check-newest): the series on the newest kernel that
# Debian has, to keep it portable to what its reviewers run (net-next).
#
#  1. Reads Debian unstable's package index through apt, with a sources
#     entry and lists of its own in $CACHE/apt-unstable (Debian's archive
#     keyring, signed-by): the system's apt configuration is not touched.
#  2. Takes the newest linux-source-7.* there. The version and sha256 it
#     last passed with are pinned below; unstable keeps only current
#     versions, so when the pin is gone (or a newer 7.x came) it takes the
#     newest with a warning.
#  3. Makes build/newest/linux from it with the series applied (tree.sh,
#     git am: a patch that does not apply stops here).
#  4. Builds the debug kernel with the project's config fragments, the
#     samples (tpbench) and the tpacket4 selftests, warning-free, and checks
#     for new W=1 and sparse warnings in the directories the series
#     touches against that base.
#  5. Boots it and runs the KUnit suites and the tpacket4 selftests.
# The last line is the verdict, as make test prints it. Not part of make
# test: it costs a second kernel build.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${NEWEST_BUILD:-$TOP/build/newest}
. "$TOP/scripts/lib.sh"

# The newest base this series last passed on.
NEWEST_PKG=linux-source-7.2
NEWEST_VERSION=7.2.13-1
NEWEST_SHA256=30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d

"$TOP/scripts/deps.sh"
mkdir -p "$BUILD" "$CACHE"

# --- 1. Debian unstable's index, apt set up on the side -----------------------
apt_dir=$CACHE/apt-unstable
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
cat >"$apt_dir/parts/unstable.sources" <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: unstable
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/parts"
	  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
	  -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root")
say "check-newest: reading Debian unstable's package index"
apt-get "${apt_opts[@]}" update -q >"$apt_dir/update.log" 2>&1 ||
	{ tail -5 "$apt_dir/update.log"; die "check-newest: apt-get update of unstable failed"; }

# --- 2. the newest linux-source-7.* ------------------------------------------
pkg=$(apt-cache "${apt_opts[@]}" pkgnames linux-source-7. | grep -E '^linux-source-7\.[0-9]+$' |
	sort -V | tail -n 1)
[ -n "$pkg" ] || die "check-newest: Debian unstable has no linux-source-7.*"
version=$(apt-cache "${apt_opts[@]}" policy "$pkg" | awk '/Candidate:/ { print $2 }')
[ -n "$version" ] && [ "$version" != "(none)" ] || die "check-newest: no candidate for $pkg"
pinned=0
if [ "$pkg" = "$NEWEST_PKG" ] && [ "$version" = "$NEWEST_VERSION" ]; then
	pinned=1
else
	warn "check-newest: the pinned $NEWEST_PKG $NEWEST_VERSION is not unstable's newest; taking $pkg $version"
fi
deb=$CACHE/${pkg}_${version//:/%3a}_all.deb
if [ ! -f "$deb" ]; then
	say "check-newest: downloading $pkg=$version"
	(cd "$CACHE" && apt-get "${apt_opts[@]}" download -q "$pkg=$version" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || true
	[ -f "$deb" ] || die "check-newest: could not download $pkg=$version"
fi
sha=$(sha256sum "$deb" | cut -d' ' -f1)
if [ $pinned = 1 ] && [ -n "$NEWEST_SHA256" ] && [ "$sha" != "$NEWEST_SHA256" ]; then
	die "check-newest: $deb has sha256 $sha, not the pinned $NEWEST_SHA256"
fi
tarball=$BUILD/$pkg.tar.xz
if [ ! -f "$tarball" ] || [ "$(cat "$tarball.sha256" 2>/dev/null)" != "$sha" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" >"$tarball.tmp"
	mv "$tarball.tmp" "$tarball"
	echo "$sha" >"$tarball.sha256"
fi
say "check-newest: $pkg $version (sha256 $sha)"

# --- 3. the tree: base + series ------------------------------------------------
KERNEL_SRC=$tarball FORCE=1 "$TOP/scripts/tree.sh"

# --- 4. build, warnings ----------------------------------------------------------
KIND=debug
build_kernel $KIND check-newest
say "check-newest: kernel built ($(elapsed))"
fail=0
state=$BUILD/check
mkdir -p "$state"
new_warnings $KIND check-newest "$state" || fail=1
kmake $KIND >/dev/null 2>&1 || die "check-newest: the kernel does not build again"

build_tests $KIND check-newest

# --- 5. boot and test -----------------------------------------------------------
rc=0
run_tests $KIND check-newest || rc=$?
[ $fail = 0 ] || rc=1
if [ $rc = 0 ]; then
	say "check-newest: $pkg $version passed in $(elapsed)"
else
	warn "check-newest: $pkg $version FAILED after $(elapsed)"
fi
tail -n 1 "$BUILD/vm/test/summary.txt"
exit $rc
