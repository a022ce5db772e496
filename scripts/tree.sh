#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tree.sh: build/linux = the base tree, committed and tagged tp4-base, plus
# the series of patches/ applied with git am (branch tp4), set after set
# (patches/SETS, see lib.sh).
#
# An existing build/linux is kept when it already holds the series, and
# brought up to date when only patches/ moved on; it is never thrown away
# while it has uncommitted changes or commits that were not exported with
# `make series` (FORCE=1 overrides).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tarball=$("$TOP/scripts/base.sh")
origin=$(cat "$BUILD/base/ORIGIN")

apply_series() {
	local files folder tree count n
	# The sets and each one's cover letter text, for make series.
	rm -rf "$TREE/.git/tp4-covers"; mkdir -p "$TREE/.git/tp4-covers"
	if [ -f "$TOP/patches/SETS" ]; then
		cp "$TOP/patches/SETS" "$TREE/.git/tp4-sets"
	else
		rm -f "$TREE/.git/tp4-sets"
	fi
	files=$(series_files)
	[ -n "$files" ] || { say "tree: no patches in patches/"; return 0; }
	while read -r folder tree count; do
		cover_description "$TOP/patches/$folder/0000-cover-letter.patch" \
			>"$TREE/.git/tp4-covers/$folder"
		files=$(ls "$TOP/patches/$folder"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-')
		n=$(echo "$files" | wc -l)
		[ "$count" = + ] || [ "$count" = "$n" ] ||
			die "tree: patches/SETS says $count patches for $folder, it has $n"
		# shellcheck disable=SC2086
		git -C "$TREE" am -q --committer-date-is-author-date $files ||
			die "tree: git am failed on $folder (see above); the tree is left mid-am in $TREE"
		say "tree: $folder: $n patches applied ($tree)"
	done < <(patch_sets)
}

if [ -d "$TREE/.git" ]; then
	state=$(tree_state)
	same_base=0
	[ "$(cat "$TREE/.git/tp4-origin" 2>/dev/null)" = "$origin" ] && same_base=1
	if [ $same_base = 1 ] && [ "$state" = synced ]; then
		say "tree: $TREE holds the series of patches/"
		exit 0
	fi
	case $state in
	dirty|unexported)
		if [ "${FORCE:-0}" != 1 ]; then
			[ "$state" = dirty ] &&
				die "tree: $TREE has uncommitted changes. Commit them into the series and export (make series), or FORCE=1 to throw them away."
			die "tree: $TREE has commits that patches/ does not have. Export them (make series), or FORCE=1 to throw them away."
		fi
		warn "tree: FORCE=1: throwing away the $state work in $TREE"
		;;
	esac
	if [ $same_base = 1 ]; then
		# Same base: move the branch, so that files the series does not
		# change keep their timestamps and nothing is rebuilt for them.
		git -C "$TREE" am --abort >/dev/null 2>&1 || true
		git -C "$TREE" checkout -q -f -B "$BRANCH" "$BASE_TAG"
		apply_series
		remember_sync
		exit 0
	fi
	say "tree: the base changed; making $TREE anew"
	rm -rf "$TREE"
fi
# Objects, configs and selftests of another base are of no use (and an old
# O= directory's kconfig parser can break the new tree's build).
if [ "$(cat "$BUILD/base-origin" 2>/dev/null)" != "$origin" ]; then
	rm -rf "$BUILD"/obj-* "$BUILD/selftests" "$BUILD/check" "$BUILD/w1-base"
	echo "$origin" >"$BUILD/base-origin"
fi

say "tree: unpacking the base into $TREE"
mkdir -p "$TREE"
tar -xf "$tarball" -C "$TREE" --strip-components=1
version=$(make -s -C "$TREE" kernelversion 2>/dev/null || echo unknown)
case $origin in
KERNEL_SRC=*) title="Linux $version (${origin#KERNEL_SRC=})" ;;
*) set -- $origin; title="Linux $version (Debian $1 $2)" ;;
esac
note=""
# Debian's .gitignore is upstream's without the dot-files to keep, and with
# a packaging block that ignores every new top-level path: undo both, or git
# would not see the new files of the series.
if grep -q '^# Debian packaging' "$TREE/.gitignore" 2>/dev/null; then
	python3 - "$TREE/.gitignore" <<'EOP'
import sys
p = sys.argv[1]
s = open(p).read()
s = s[:s.index('#\n# Debian packaging')].rstrip('\n') + '\n'
open(p, 'w').write(s)
EOP
	note="Debian's .gitignore is upstream's without its list of dot-files to keep and with a packaging block that ignores every new top-level path: the block is left out and the list restored, so that new files of the series show up in git."
fi
if ! grep -q '^!\.gitignore$' "$TREE/.gitignore"; then
	cat >>"$TREE/.gitignore" <<'EOI'

# We don't want to ignore the following even if they are dot-files
#
!.clang-format
!.cocciconfig
!.editorconfig
!.get_maintainer.ignore
!.gitattributes
!.gitignore
!.kunitconfig
!.mailmap
!.rustfmt.toml
EOI
fi
(
	cd "$TREE"
	export GIT_AUTHOR_NAME="tpacket4 base" GIT_AUTHOR_EMAIL="base@tpacket4.invalid"
	export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
	export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
	git init -q -b "$BRANCH"
	git add -Af .
	if [ -n "$note" ]; then
		git commit -q -m "$title" -m "$note"
	else
		git commit -q -m "$title"
	fi
	git tag "$BASE_TAG"
)
echo "$origin" >"$TREE/.git/tp4-origin"
apply_series
remember_sync
