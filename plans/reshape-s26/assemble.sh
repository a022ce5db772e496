#!/bin/bash
# assemble.sh [LAST]: build branch "reshape" in build/linux from tp4-base and
# the staged file states (stage/NN), one commit per NN (01..LAST, default 43),
# message msgs/NN.txt (a placeholder when missing). Worktree: /work/wt-rs.
set -euo pipefail
R=/work/reshape
L=/work/main/build/linux
WT=/work/wt-rs
last=${1:-43}
if [ ! -d $WT ]; then git -C $L worktree add -q --detach $WT tp4-base; fi
cd $WT
git checkout -q -f --detach tp4-base
git clean -qfdx
export GIT_AUTHOR_NAME="Seed 895cc76d maintainers" GIT_AUTHOR_EMAIL="maintainers@users.noreply.a-seed-895cc76d.example"
export GIT_COMMITTER_NAME="tpacket4 series" GIT_COMMITTER_EMAIL="series@tpacket4.invalid"
export GIT_AUTHOR_DATE="2026-11-29 12:00:00 +0000" GIT_COMMITTER_DATE="2026-11-29 12:00:00 +0000"
for n in $(seq -w 1 $last); do
	if [ -d $R/stage/$n ]; then cp -a $R/stage/$n/. .; fi
	git add -A
	msg=$R/msgs/$n.txt
	if [ ! -s $msg ]; then
		msg=$(mktemp); printf 'placeholder %s\n\nSigned-off-by: %s <%s>\n' $n "$GIT_AUTHOR_NAME" "$GIT_AUTHOR_EMAIL" > $msg
	fi
	git commit -q --allow-empty -F $msg
	git tag -f rs-$n >/dev/null
done
git branch -f reshape HEAD
echo "reshape: $(git rev-parse --short HEAD)"
git diff --stat tp4-old-final HEAD | tail -3
