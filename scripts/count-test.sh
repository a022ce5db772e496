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
#  - the guest's time with the plugin, in the output only;
# and a second boot with VM_COUNT_MODE=cb (a counter per vCPU), tp4mark
# running 1e6 turns, then 2e6 between the markers of waiting (5 and 6):
#  - the window's per-vCPU kernel, user and idle counts add up to its
#    totals;
#  - the profile has both loops' blocks, exactly 3 * (N - 1) each;
#  - the idle count is at least the idle loop's 3 * (2e6 - 1) and at most
#    3 * 2e6 plus 10 %, the user count at least the busy loop's and less
#    than the idle loop's (what waits is not counted as work).
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
echo "1..7" >>"$tap"

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

t0=$(date +%s)
VM_COUNT=$out/count-cb.txt VM_COUNT_MODE=cb VM_OUT=$out/vm-cb \
	VM_TIMEOUT=${COUNT_TIMEOUT:-900} \
	"$TOP/scripts/vm.sh" "$mark 0 1000000 2000000" >"$out/vm-cb.log" 2>&1
rc=$?
echo "# mode=cb: the guest ran $(( $(date +%s) - t0 ))s with the plugin (rc $rc)" >>"$tap"
w=$("$TOP/scripts/tp4count.py" windows "$out/count-cb.txt" 2>&1)
echo "$w" | sed 's/^/# /' >>"$tap"
# window SEQ: kernel K user U idle I cell C cpu0 k/u/i cpu1 k/u/i
[ "$rc" = 0 ] && echo "$w" | awk '/^window/ { n++; k = 0; u = 0; i = 0
	for (f = 10; f <= NF; f++) if ($f ~ /\//) { split($f, a, "/"); k += a[1]; u += a[2]; i += a[3] }
	bad += (k != $4 || u != $6 || i != $8 || NF < 11) }
	END { exit !(n == 1 && !bad) }'
ok $? "mode=cb: the guest ran, and the window's per-vCPU kernel, user and idle counts add up to its totals"
seq=$(echo "$w" | sed -n 's/^window \([0-9]*\):.*/\1/p')
b=$("$TOP/scripts/tp4count.py" blocks "$out/count-cb.txt" "${seq:-0}" 2>/dev/null)
grep -q " 3 $(( 3 * (1000000 - 1) ))\$" <<<"$b" &&
	grep -q " 3 $(( 3 * (2000000 - 1) ))\$" <<<"$b"
ok $? "mode=cb: the profile has both loops' blocks, each run exactly LOOPS - 1 times"
u=$(echo "$w" | awk '/^window/ { print $6 }')
i=$(echo "$w" | awk '/^window/ { print $8 }')
[ -n "$u" ] && [ -n "$i" ] &&
	[ "$i" -ge $(( 3 * (2000000 - 1) )) ] && [ "$i" -le $(( 3 * 2000000 * 11 / 10 )) ] &&
	[ "$u" -ge $(( 3 * (1000000 - 1) )) ] && [ "$u" -lt $(( 3 * (2000000 - 1) )) ]
ok $? "mode=cb: the waiting loop's instructions are idle, not user (idle ${i:-none}, user ${u:-none})"
[ "$fails" = 0 ]
