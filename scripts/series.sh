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
remember_sync
say "series: $(series_files | wc -l) patches in patches/"
git -C "$TOP" status --short -- patches/ >&2
