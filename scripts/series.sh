#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# series.sh: export tp4-base..HEAD of build/linux to patches/ (git
# format-patch), a folder per set of .git/tp4-sets, each with its cover
# letter 0000 from .git/tp4-covers/<folder> (see lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "series: no tree in $TREE (make tree)"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "series: $TREE has uncommitted changes: commit them into the right patch first"
sets=$(tree_sets)
while read -r folder _ _; do
	[ -s "$TREE/.git/tp4-covers/$folder" ] ||
		die "series: no cover letter text for $folder: write its subject, a blank line and its text into $TREE/.git/tp4-covers/$folder"
done <<<"$sets"
export_series "$TOP/patches"
# make tree takes each cover letter's text back: it must come back whole,
# or a fresh tree is not what patches/ holds.
while read -r folder _ _; do
	if ! diff -u <(sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$TREE/.git/tp4-covers/$folder") \
			<(cover_description "$TOP/patches/$folder/0000-cover-letter.patch") >&2; then
		die "series: $folder's cover letter does not read back as its text (above: what differs)"
	fi
done <<<"$sets"
remember_sync
say "series: $(series_files | wc -l) patches in $(wc -l <<<"$sets") sets in patches/"
git -C "$TOP" status --short -- patches/ >&2
