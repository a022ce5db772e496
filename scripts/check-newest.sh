#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-newest.sh (make check-newest): the series on a kernel newer than
# its base, when Debian has one, to keep it portable to what its reviewers
# run (net-next).
#
#  1. Reads the package indexes of Debian trixie-backports and unstable
#     through apt, with sources entries and lists of their own in
#     $CACHE/apt-<suite> (Debian's archive keyring, signed-by): the
#     system's apt configuration is not touched.
#  2. Takes the newest linux-source-7.* of the two. If it is not newer
#     than the base (scripts/lib.sh), there is nothing to try: it says so
#     and stops (exit 0).
#  3. Makes build/newest/linux from it with the series applied (tree.sh,
#     git am: a patch that does not apply stops here).
#  4. Builds the debug kernel with the project's config fragments, the
#     samples (tpbench) and the tpacket4 selftests, warning-free, and checks
#     for new W=1 and sparse warnings in the files the series touches
#     against that base.
#  5. Boots it and runs the KUnit suites and the tpacket4 selftests.
# The last line is the verdict, as make test prints it. Not part of make
# test: it costs a second kernel build.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${NEWEST_BUILD:-$TOP/build/newest}
. "$TOP/scripts/lib.sh"

"$TOP/scripts/deps.sh"
mkdir -p "$BUILD" "$CACHE"

# --- 1, 2. the newest linux-source-7.* of trixie-backports and unstable ----------
for suite in trixie-backports unstable; do
	say "check-newest: reading Debian $suite's package index"
	list=$(apt_kernels "$suite") || die "check-newest: apt-get update of $suite failed"
	while read -r pkg version; do
		[ -n "$pkg" ] && echo "$version $pkg $suite"
	done <<<"$list"
done >"$BUILD/kernels"
read -r version pkg suite < <(sort -V "$BUILD/kernels" | tail -n 1) ||
	die "check-newest: Debian has no linux-source-7.*"
if [ "$version" = "$BASE_VERSION" ] ||
   [ "$(printf '%s\n' "$version" "$BASE_VERSION" | sort -V | tail -n 1)" = "$BASE_VERSION" ]; then
	say "check-newest: the newest is $pkg $version ($suite): the base ($BASE_VERSION) is as new; nothing to try"
	exit 0
fi
say "check-newest: $pkg $version ($suite) is newer than the base $BASE_VERSION"
apt_side "$suite" || die "check-newest: apt-get update of $suite failed"
deb=$CACHE/${pkg}_${version//:/%3a}_all.deb
if [ ! -f "$deb" ]; then
	say "check-newest: downloading $pkg=$version"
	(cd "$CACHE" && apt-get "${APT_OPTS[@]}" download -q "$pkg=$version" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || true
	[ -f "$deb" ] || die "check-newest: could not download $pkg=$version"
fi
sha=$(sha256sum "$deb" | cut -d' ' -f1)
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
