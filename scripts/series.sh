#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# series.sh: export tp4-base..HEAD of build/linux to patches/ (git
# format-patch, cover letter 0000 from the branch description).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "series: no tree in $TREE (make tree)"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "series: $TREE has uncommitted changes: commit them into the right patch first"
[ -n "$(git -C "$TREE" config branch.$BRANCH.description)" ] ||
	die "series: no cover letter text: git -C $TREE branch --edit-description"
export_series "$TOP/patches"
# make tree sets the branch description from the cover letter: it must
# come back whole, or a fresh tree is not what patches/ holds.
if ! diff -u <(git -C "$TREE" config branch.$BRANCH.description | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}') \
		<(cover_description "$TOP/patches/0000-cover-letter.patch") >&2; then
	die "series: the cover letter does not read back as the branch description (above: what differs)"
fi
remember_sync
say "series: $(series_files | wc -l) patches in patches/"
git -C "$TOP" status --short -- patches/ >&2
