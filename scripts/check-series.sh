#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-series.sh: what a maintainer checks before applying the series.
#
#  1. checkpatch.pl --strict on every patch of patches/ (a patch found
#     clean is remembered, for the same checkpatch): no error, warning
#     or check; each commit message ends with its trailers (Signed-off-by
#     among them), with nothing after them. checkpatch's "does MAINTAINERS
#     need updating?" is answered here instead: every file a patch adds
#     must fall under a MAINTAINERS section with a maintainer (not only
#     THE REST), and get_maintainer.pl names the series' own entries
#     ("PACKET SOCKETS V4 ...") for every patch. The series is in sets
#     (patches/SETS): each has its cover letter and at most 15 patches,
#     as netdev takes them; each set's last patch is a prefix like any
#     other, so every set's boundary builds (2).
#  2. Every prefix of the series builds, in the modular configuration
#     (configs/tpacket4.config + configs/modular.config: AF_PACKET, veth,
#     virtio-net, i40e and the KUnit suite as modules, no debug options;
#     build/obj-modular): vmlinux and the modules, incrementally from one
#     prefix to the next, with no error and no modpost warning (every
#     symbol a module uses is exported), and the tpacket4 selftests
#     against the prefix's headers, warning-free. A patch that changes
#     only selftests, documentation or MAINTAINERS builds as its parent
#     does: only its selftests are built. The prefixes are
#     checked out in a worktree of build/linux, build/prefix/linux, so
#     that build/linux stays at the series' head: the debug kernel that
#     `make test` boots (all of the series built in, KASAN, lockdep) is
#     built from it by test.sh, beside this script. One configuration for
#     the prefixes, as a second one costs a second full rebuild wherever
#     a patch changes a header most of the kernel includes (netdevice.h).
#     And at the series' head, veth, i40e and virtio-net build without
#     packet sockets (configs/nopacket.config: no packet-array library),
#     calling none of its exports: the stubs of <linux/tpacket4.h> stand
#     in.
#  3. No new W=1 or sparse (C=2) warning in the kernel .c files the series
#     adds or changes (and so in the headers they include), against the
#     same files of the base.
#  4. kernel-doc -Wall is clean on the kernel files the series adds.
#  5. Each UAPI header the series changes passes the kernel's header test
#     (usr/include/Makefile: installed, included twice into an empty C90
#     file, once into a C++98 one, headers_check.pl), and its copy under
#     tools/include/uapi, if there is one, is the same file (as tools/
#     keeps them in sync).
#  6. The networking documentation builds (make htmldocs
#     SPHINXDIRS=networking) with no Sphinx or kernel-doc warning about a
#     file the series adds or a line it adds (docs-warnings.py); the
#     base's own warnings (labels outside networking/, no graphviz) stay.
#
# Prefixes and W=1/sparse results already checked for the same tree and
# config are remembered in build/check/ and not built again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KIND=modular
obj=$BUILD/obj-$KIND
state=$BUILD/check
mkdir -p "$state"
[ -d "$TREE/.git" ] || die "check-series: no tree (make tree)"
[ "$(tree_state)" = synced ] ||
	die "check-series: $TREE is not what patches/ holds (make tree, or make series)"
fail=0

# Everything below runs in a worktree of the tree of its own,
# build/prefix/linux, which is where the prefixes are checked out:
# build/linux stays on its branch, so that test.sh can build the debug
# kernel from it meanwhile, and its files keep their timestamps (checking
# a prefix out there would make the next build of another kind recompile
# all that includes a header the series changes). Made again when the
# tree was (tree.sh's new base).
ptree=$BUILD/prefix/linux
if [ "$(git -C "$ptree" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" != \
     "$(git -C "$TREE" rev-parse --path-format=absolute --git-common-dir)" ]; then
	rm -rf "$BUILD/prefix"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$ptree" "$BRANCH"
fi
git -C "$ptree" checkout -q -f --detach "$BRANCH"
# For kconfig.sh and sparse-build.sh too.
export TP4_TREE=$ptree
TREE=$ptree

# --- 1. checkpatch -----------------------------------------------------------
say "check-series: checkpatch --strict"
# The MAINTAINERS entries of the series (its last patch adds them).
V4_ENTRY="PACKET SOCKETS V4"
for p in $(series_files); do
	name=$(basename "$p")
	# checkpatch runs spdxcheck.py with python3 from PATH: Debian's has ply.
	# A patch found clean is not checked again with the same checkpatch
	# (its script, data and MAINTAINERS) and this script.
	key=$(cat "$p" "$TREE/scripts/checkpatch.pl" "$TREE/scripts/spelling.txt" \
		"$TREE/scripts/const_structs.checkpatch" "$TREE/MAINTAINERS" "$0" 2>/dev/null |
		sha256sum | cut -c1-32)
	if [ -f "$state/checkpatch-$key" ]; then
		:
	# UNKNOWN_COMMIT_ID: the base is a release tarball committed whole,
	# with no upstream history, where checkpatch cannot look up the
	# commits a Fixes: tag names.
	elif ! out=$(cd "$TREE" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict --quiet \
			--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$p" 2>&1); then
		printf '%s\n' "$out" | sed "s|^|  $name: |" >&2
		warn "checkpatch: $name is not clean"
		fail=1
	else
		touch "$state/checkpatch-$key"
	fi
	# The commit message ends with its trailers, the sign-off among them:
	# nothing an editor or a rebase left after them.
	last=$(awk '/^---$/ { exit } NF { l = $0 } END { print l }' "$p")
	if ! grep -q '^Signed-off-by: .*<.*@.*>$' <(awk '/^---$/ { exit } { print }' "$p") ||
	   ! [[ $last =~ ^[A-Z][A-Za-z-]+:\ .*\<.*@.*\>$ ]]; then
		warn "checkpatch: $name: the commit message does not end with its Signed-off-by (last line: ${last:0:60})"
		fail=1
	fi
	added=$(awk '/^diff --git a\// { f = $4; sub(/^b\//, "", f) } /^new file mode/ { print f }' "$p")
	# shellcheck disable=SC2086
	if [ -n "$added" ] && ! orphans=$(python3 "$TOP/scripts/maintained.py" "$TREE/MAINTAINERS" $added); then
		warn "checkpatch: $name adds files that no MAINTAINERS entry names: $(echo $orphans)"
		fail=1
	fi
	# Whoever answers for V4 is asked about every patch of it, but for
	# a fix to code of the base (a Fixes: tag), which goes to that
	# code's maintainers.
	# (Its whole output first: grep -q would end the pipe early, and
	# pipefail would take get_maintainer.pl's SIGPIPE for a miss.)
	if grep -q "^$V4_ENTRY" "$TREE/MAINTAINERS" &&
	   ! grep -q '^Fixes: [0-9a-f]\{12,\} ("' <(awk '/^---$/ { exit } { print }' "$p") &&
	   ! grep -q "$V4_ENTRY" <<<"$(cd "$TREE" && PATH=/usr/bin:$PATH \
		./scripts/get_maintainer.pl --no-git --no-git-fallback "$p" 2>&1)"; then
		warn "checkpatch: get_maintainer.pl does not name $V4_ENTRY for $name"
		fail=1
	fi
done
[ $fail = 0 ] && say "check-series: checkpatch clean on $(series_files | wc -l) patches"

# Each set as netdev takes it: a cover letter, at most SET_MAX patches.
while read -r folder tree _; do
	n=$(ls "$TOP/patches/$folder"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null |
		grep -vc '/0000-' || true)
	if [ ! -f "$TOP/patches/$folder/0000-cover-letter.patch" ]; then
		warn "check-series: set $folder has no cover letter"
		fail=1
	fi
	if [ "$n" -gt "$SET_MAX" ]; then
		warn "check-series: set $folder ($tree) has $n patches, more than the $SET_MAX netdev takes at a time"
		fail=1
	fi
	# A set of fixes applies to the base alone, in an index of its own.
	if fix_tree "$tree"; then
		idx=$(mktemp)
		if ! GIT_INDEX_FILE=$idx git -C "$TREE" read-tree "$BASE_TAG" ||
		   ! GIT_INDEX_FILE=$idx git -C "$TREE" apply --cached \
			$(ls "$TOP/patches/$folder"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-'); then
			warn "check-series: set $folder ($tree, fixes) does not apply to the base alone"
			fail=1
		fi
		rm -f "$idx"
	fi
done < <(patch_sets)
[ $fail = 0 ] && say "check-series: $(patch_sets | wc -l) sets of at most $SET_MAX patches, each with its cover letter, the fixes applying to the base alone"

# Return the worktree to the branch's head whatever happens below.
restore() { git -C "$TREE" checkout -q --detach "$BRANCH" 2>/dev/null || true; }
trap restore EXIT

"$TOP/scripts/kconfig.sh" "$KIND"
cfg=$(sha256sum "$obj/.config" | cut -c1-16)

# Build the tpacket4 selftests of prefix <c> against its kernel headers;
# our own test code must be warning-free. Not again for the same selftests
# and UAPI headers (the tree ids of both are the key).
build_selftests() {
	local c=$1 log=$2 d=$TREE/tools/testing/selftests/net/tpacket4 key
	[ -d "$d" ] || return 0
	key=$(git -C "$TREE" rev-parse "$c:tools/testing/selftests/net/tpacket4" \
		"$c:include/uapi" | tr '\n' -)$cfg
	[ -f "$state/selftests-$key" ] && return 0
	kmake "$KIND" -s headers >/dev/null
	rm -rf "$state/selftests"; mkdir -p "$state/selftests"
	make -C "$d" OUTPUT="$state/selftests" \
		KHDR_INCLUDES="-isystem $obj/usr/include" >"$log" 2>&1 || return 1
	! grep -E '(warning|error):' "$log" || return 1
	touch "$state/selftests-$key"
}

# prefix_config <c>: the config of prefix <c>. A symbol that a later patch
# adds is unknown before it, and must come back when that patch does; the
# config only changes with the Kconfig files and configs/, so it is made
# again only when those changed since the last prefix.
last_kconfig=
prefix_config() {
	local key
	key=$( { git -C "$TREE" ls-tree -r "$1" | grep -E '	(.*/)?Kconfig[^/]*$'
		cat "$TOP"/configs/*.config; } | sha256sum | cut -c1-16)
	[ "$key" = "$last_kconfig" ] && [ -f "$obj/.config" ] && return 0
	"$TOP/scripts/kconfig.sh" "$KIND" 2>/dev/null
	last_kconfig=$key
}

# --- 2. every prefix builds ----------------------------------------------------
for c in $(git -C "$TREE" rev-list --reverse "$BASE_TAG..$BRANCH"); do
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	key=$(git -C "$TREE" rev-parse "$c^{tree}")-$cfg
	if [ -f "$state/built-$key" ]; then
		say "check-series: builds (checked before): $subject"
		continue
	fi
	git -C "$TREE" checkout -q --detach "$c"
	prefix_config "$c"
	log=$state/build-$(git -C "$TREE" rev-parse --short=12 "$c").log
	# A patch that changes nothing the kernel's build reads (selftests,
	# documentation, MAINTAINERS) builds as its parent does, which built
	# (the base, or a prefix checked before): only its selftests are
	# built. Any other gets vmlinux (linked, with kallsyms; modpost
	# checks the modules against it) and the modules, not the compressed
	# bzImage, which no prefix boots.
	same=0
	changed=$(git -C "$TREE" diff --name-only "$c^" "$c")
	grep -qvE '^(tools/testing/|Documentation/|MAINTAINERS$)' <<<"$changed" ||
		same=1
	if [ $same = 1 ]; then
		say "check-series: builds as its parent (no kernel change): $subject"
		: >"$log"
	else
		say "check-series: building: $subject"
	fi
	if [ $same = 0 ] && ! kmake "$KIND" vmlinux modules >"$log" 2>&1; then
		grep -E 'error|Error|ERROR' "$log" | head -20 >&2
		warn "check-series: the kernel does not build at '$subject' ($log)"
		fail=1
		break
	fi
	if grep -E '^WARNING: modpost: ' "$log" >&2; then
		warn "check-series: modpost warns at '$subject' ($log)"
		fail=1
		break
	fi
	if ! build_selftests "$c" "$log.selftests"; then
		head -20 "$log.selftests" >&2
		warn "check-series: the selftests do not build cleanly at '$subject'"
		fail=1
		break
	fi
	touch "$state/built-$key"
done

restore
"$TOP/scripts/kconfig.sh" "$KIND"

# --- 2b. the zero-copy drivers without packet sockets ---------------------------
# With CONFIG_PACKET=n the packet-array library is not built (only
# CONFIG_PACKET selects CONFIG_TPACKET4): veth, i40e and virtio-net, as
# modules, must build against the stubs of <linux/tpacket4.h> and refer to
# none of the library's exports, which would be missing at their load. The
# series' head only, in a config of its own (build/obj-nopacket: the
# objects of the three drivers, not a kernel).
if [ $fail = 0 ] && [ -f "$TREE/include/linux/tpacket4.h" ]; then
	"$TOP/scripts/kconfig.sh" nopacket
	key=$(git -C "$TREE" rev-parse "$BRANCH^{tree}")-$(sha256sum "$BUILD/obj-nopacket/.config" | cut -c1-16)
	drivers=(drivers/net/veth.o drivers/net/virtio_net.o drivers/net/ethernet/intel/i40e/)
	log=$state/nopacket.log
	if [ -f "$state/nopacket-$key" ]; then
		say "check-series: veth, i40e and virtio-net without packet sockets (checked before)"
	elif ! kmake nopacket "${drivers[@]}" >"$log" 2>&1; then
		grep -E 'error|Error' "$log" | head -20 >&2
		warn "check-series: veth, i40e or virtio-net does not build without packet sockets ($log)"
		fail=1
	else
		exports=$(git -C "$TREE" grep -hoP 'EXPORT_SYMBOL\w*\(\K\w+' -- 'net/packet/tp4*.c' 'net/packet/tpacket4.c' | sort -u)
		undef=$(nm -u "$BUILD/obj-nopacket/drivers/net/veth.o" \
			"$BUILD/obj-nopacket/drivers/net/virtio_net.o" \
			"$BUILD"/obj-nopacket/drivers/net/ethernet/intel/i40e/*.o |
			awk '$1 == "U" { print $2 }' | sort -u)
		missing=$(comm -12 <(echo "$exports") <(echo "$undef"))
		if [ -n "$missing" ]; then
			warn "check-series: without packet sockets veth, i40e or virtio-net still calls the library: $(echo $missing)"
			fail=1
		else
			touch "$state/nopacket-$key"
			say "check-series: veth, i40e and virtio-net build without packet sockets, calling none of the library's $(echo "$exports" | wc -l) exports"
		fi
	fi
fi

# --- 3. W=1 and sparse against the base ------------------------------------------
if [ $fail = 0 ] && [ -n "$(touched_files)" ]; then
	key=$(git -C "$TREE" rev-parse "$BRANCH^{tree}")-$cfg-$(sha256sum "$("$TOP/scripts/sparse-build.sh")" | cut -c1-16)
	if [ -f "$state/warnings-$key" ]; then
		say "check-series: W=1 and sparse (checked before): no new warnings"
	else
		say "check-series: W=1 and sparse on the $(touched_files | wc -l) .c files the series touches, against the base"
		if new_warnings "$KIND" check-series "$state"; then
			touch "$state/warnings-$key"
		else
			fail=1
		fi
		# Put the objects back as the normal build makes them (ccache).
		kmake "$KIND" vmlinux modules >/dev/null 2>&1 || true
	fi
fi

# --- 4. kernel-doc on the kernel files the series adds -------------------------
new_files=$(git -C "$TREE" diff --name-only --diff-filter=A "$BASE_TAG..$BRANCH" -- '*.c' '*.h' |
	grep -vE '^(tools|samples|Documentation)/' || true)
if [ -n "$new_files" ]; then
	# shellcheck disable=SC2086
	kdoc=$(cd "$TREE" && scripts/kernel-doc -none -Wall $new_files 2>&1)
	if [ -n "$kdoc" ]; then
		printf '%s\n' "$kdoc" | sed 's/^/  /' >&2
		warn "check-series: kernel-doc warnings in the files the series adds"
		fail=1
	else
		say "check-series: kernel-doc clean on $(echo $new_files | wc -w) new files"
	fi
fi

# --- 5. the UAPI headers the series changes ------------------------------------
uapi=$(git -C "$TREE" diff --name-only "$BASE_TAG..$BRANCH" -- 'include/uapi/*.h')
if [ -n "$uapi" ]; then
	kmake "$KIND" -s headers >/dev/null
	inc=$obj/usr/include
	n=0
	for h in $uapi; do
		rel=${h#include/uapi/}
		n=$((n + 1))
		# As the base's usr/include/Makefile tests each header (its
		# hdrtest): C90 twice (the include guard), C++98, and
		# headers_check.pl.
		if ! out=$(gcc -std=c90 -Wall -Werror=implicit-function-declaration \
				-Werror -fsyntax-only -x c /dev/null -I "$inc" \
				-include "$inc/$rel" -include "$inc/$rel" 2>&1 &&
			   g++ -std=c++98 -Werror -fsyntax-only -x c++ /dev/null -I "$inc" \
				-include "$inc/$rel" 2>&1 &&
			   perl "$TREE/usr/include/headers_check.pl" "$inc" "$inc/$rel" 2>&1); then
			printf '%s\n' "$out" | sed 's/^/  /' >&2
			warn "check-series: UAPI header $rel fails the header test"
			fail=1
		fi
		if [ -f "$TREE/tools/$h" ] && ! cmp -s "$TREE/$h" "$TREE/tools/$h"; then
			warn "check-series: tools/$h differs from $h"
			fail=1
		fi
	done
	say "check-series: UAPI header test on $n changed headers"
fi

# --- 6. the networking documentation -------------------------------------------
if [ -n "$(git -C "$TREE" diff --name-only "$BASE_TAG..$BRANCH" -- Documentation/networking)" ]; then
	key=$(git -C "$TREE" rev-parse "$BRANCH^{tree}")
	if [ -f "$state/docs-$key" ]; then
		say "check-series: networking documentation (checked before): no new warnings"
	else
		say "check-series: make htmldocs SPHINXDIRS=networking"
		log=$state/htmldocs.log
		# Debian's python3 and sphinx-build (make deps), as for checkpatch.
		if ! PATH=/usr/bin:$PATH make -C "$TREE" O="$BUILD/docs" SPHINXDIRS=networking \
				htmldocs >"$log" 2>&1; then
			tail -20 "$log" >&2
			warn "check-series: the networking documentation does not build ($log)"
			fail=1
		else
			# Warnings about the files of the series, or about the
			# lines it adds to files of the base.
			if ! python3 "$TOP/scripts/docs-warnings.py" "$log" "$TREE" \
					"$BASE_TAG" "$BRANCH" >&2; then
				warn "check-series: the documentation build warns about the series ($log)"
				fail=1
			else
				touch "$state/docs-$key"
				say "check-series: networking documentation built, no warning about the series' files"
			fi
		fi
	fi
fi

[ $fail = 0 ] || die "check-series: failed"
say "check-series: ok"
