#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# count-test.sh OUT: checks the instruction counting plugin
# (bench/tp4count.c) on a built kernel (KIND, default debug): one boot with
# VM_COUNT, in which tp4mark runs user loops of exactly 3 * N instructions
# between its markers for N = 1e6, 2e6 and 4e6. TAP in OUT/count.tap (make
# test counts it):
#  - the plugin wrote its header, three windows and its exit record;
#  - each window's profile has the loop's block (3 instructions) with
#    exactly 3 * (N - 1) instructions: the counts are exact, not sampled;
#  - each window's user count (every process, both vCPUs) is at least the
#    loop block's 3 * (N - 1) and at most 3 * N plus 10 % (a block is
#    counted when it starts: the one entering the loop, with its first
#    turn, began before the window's first marker);
#  - window 3 counted kernel instructions too (the timer, the other vCPU);
#  - the guest's time with the plugin, in the output only.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

out=$1
rm -rf "$out"; mkdir -p "$out"
tap=$out/count.tap
n=0 fails=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2" >>"$tap"
	else echo "not ok $n $2" >>"$tap"; fails=$((fails + 1)); fi
}
echo "TAP version 13" >"$tap"
echo "1..4" >>"$tap"

mark=$("$TOP/scripts/tp4count-build.sh") || { ok 1 "tp4count builds"; exit 1; }
mark=$(dirname "$mark")/tp4mark
t0=$(date +%s)
VM_COUNT=$out/count.txt VM_OUT=$out/vm VM_TIMEOUT=${COUNT_TIMEOUT:-900} \
	"$TOP/scripts/vm.sh" "$mark 0 1000000 && $mark 0 2000000 && $mark 0 4000000" \
	>"$out/vm.log" 2>&1
rc=$?
echo "# the guest ran $(( $(date +%s) - t0 ))s with the plugin (rc $rc)" >>"$tap"

w=$("$TOP/scripts/tp4count.py" windows "$out/count.txt" 2>&1)
echo "$w" | sed 's/^/# /' >>"$tap"
[ "$rc" = 0 ] && grep -q '^X ' "$out/count.txt" && [ "$(echo "$w" | grep -c '^window')" = 3 ]
ok $? "the plugin wrote its header, three windows and its exit record"
seqs=($(echo "$w" | sed -n 's/^window \([0-9]*\):.*/\1/p'))
u=($(echo "$w" | awk '/^window/ { print $6 }'))
k=($(echo "$w" | awk '/^window/ { print $4 }'))
loops=(1000000 2000000 4000000)
good=0
for i in 0 1 2; do
	want=$(( 3 * (loops[i] - 1) ))
	got=$("$TOP/scripts/tp4count.py" blocks "$out/count.txt" "${seqs[i]:-0}" 2>/dev/null |
		awk -v w="$want" '$2 == 3 && $3 == w { print $3 }' | head -1)
	echo "# window $((i + 1)): a 3-instruction block with ${got:-no} instructions (want $want)" >>"$tap"
	[ "$got" = "$want" ] && good=$((good + 1))
done
[ "$good" = 3 ]
ok $? "each window's profile has the loop's block, run exactly LOOPS - 1 times"
bad=0
for i in 0 1 2; do
	lo=$(( 3 * (loops[i] - 1) )) hi=$(( 3 * loops[i] * 11 / 10 ))
	[ "${u[i]:-0}" -ge "$lo" ] && [ "${u[i]:-0}" -le "$hi" ] || bad=1
done
[ "${#u[@]}" = 3 ] && [ "$bad" = 0 ]
ok $? "each window's user count is at least the loop's block, at most 3 * LOOPS + 10 % (the guest's other processes)"
[ "${#k[@]}" = 3 ] && [ "${k[2]}" -gt 0 ]
ok $? "kernel instructions in window 3 (the timer, the other vCPU)"
[ "$fails" = 0 ]
