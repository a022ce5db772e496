#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout-test.sh OUT: tests vm.sh's two bounds on a built kernel
# (KIND, default debug), two guests at once, one vCPU each. TAP in
# OUT/vm-timeout.tap (make test counts it), each guest's files in OUT/host
# and OUT/guest.
#
#  1. The host's bound: the guest's watchdog off (VM_GUEST_TIMEOUT=0), a
#     command that sleeps for an hour, VM_TIMEOUT=$HOST_LIMIT. vm.sh must
#     return 124 within 30 s of the limit, say that it timed out, and leave
#     no process behind (none has the guest's directory in its command
#     line: QEMU, virtiofsd and vng all do).
#  2. The guest's bound: VM_TIMEOUT=$GUEST_LIMIT, VM_GUEST_MARGIN=90, a
#     command that names itself in a running.<stream> file as
#     guest-tests.sh does and leaves a task in an uninterruptible wait (a
#     parent blocked in vfork() behind a child that never execs). vm.sh
#     must return 124 before the host's limit with the guest's message and
#     the running test's name, and dmesg.txt must hold the blocked task's
#     stack (sysrq w: "Show Blocked State", the task, its vfork frame) and
#     every task's (sysrq t).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

out=$1
KIND=${KIND:-debug}
HOST_LIMIT=${HOST_LIMIT:-100}
GUEST_LIMIT=${GUEST_LIMIT:-330}
rm -rf "$out"; mkdir -p "$out/bin"
tap=$out/vm-timeout.tap

# The task that hangs: a vfork() parent waits in TASK_KILLABLE (state D)
# until its child execs or exits, and this child does neither.
cat >"$out/bin/tp4-hang.c" <<'EOF'
#include <unistd.h>

int main(void)
{
	if (vfork() == 0) {
		pause();
		_exit(0);
	}
	return 0;
}
EOF
gcc -O2 -Wall -o "$out/bin/tp4-hang" "$out/bin/tp4-hang.c" || die "vm-timeout-test: cannot build tp4-hang"

n=0
fails=0
result() {	# result OK|FAIL TEXT [DETAIL]
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n $2" >>"$tap.body"
	else
		echo "not ok $n $2" >>"$tap.body"
		[ -n "${3:-}" ] && echo "# vm-timeout-test: $3" >>"$tap.body"
		fails=$((fails + 1))
	fi
}
: >"$tap.body"

# none_left WHICH: no process of either guest is left (every one of them,
# QEMU, virtiofsd and vng, has the guest's directory in its command line);
# what is, is killed after the check.
none_left() {
	local left

	left=$(pgrep -af -- "$out/" | grep -v "pgrep" || true)
	if [ -z "$left" ]; then
		result OK "$1 bound: no QEMU, vng or helper left"
	else
		result FAIL "$1 bound: no QEMU, vng or helper left" "$left"
		pkill -KILL -f -- "$out/$1/" || true
	fi
}

# 1. the host's bound
(
	t0=$(date +%s)
	VM_OUT=$out/host/vm KIND=$KIND VM_CPUS=1 VM_GUEST_TIMEOUT=0 VM_TIMEOUT=$HOST_LIMIT \
		"$TOP/scripts/vm.sh" "touch $out/host/vm/started; sleep 3600" >"$out/host.log" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" >"$out/host.rc"
) &
host=$!
# 2. the guest's bound
(
	t0=$(date +%s)
	VM_OUT=$out/guest/vm KIND=$KIND VM_CPUS=1 VM_GUEST_MARGIN=90 VM_TIMEOUT=$GUEST_LIMIT \
		"$TOP/scripts/vm.sh" "echo tp4-hang-test >$out/guest/vm/running.fg; exec $out/bin/tp4-hang" \
		>"$out/guest.log" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" >"$out/guest.rc"
) &
guest=$!
# Each is bounded by vm.sh itself; this bounds vm.sh, should it hang.
for pid in $host $guest; do
	( sleep $(( GUEST_LIMIT + 120 )) && kill "$pid" 2>/dev/null ) &
	killer=$!
	wait "$pid"
	kill "$killer" 2>/dev/null
done

read -r rc secs <"$out/host.rc" 2>/dev/null || { rc=none; secs=0; }
if [ "$rc" = 124 ] && [ "$secs" -ge "$HOST_LIMIT" ] && [ "$secs" -le $(( HOST_LIMIT + 30 )) ]; then
	result OK "host bound: vm.sh exits 124 ${secs}s after a ${HOST_LIMIT}s VM_TIMEOUT"
else
	result FAIL "host bound: vm.sh exits 124 ${secs}s after a ${HOST_LIMIT}s VM_TIMEOUT" \
		"exit $rc after ${secs}s (want 124 within $HOST_LIMIT..$(( HOST_LIMIT + 30 ))s)"
fi
if grep -q "ERROR: vm: timed out after ${HOST_LIMIT}s" "$out/host.log"; then
	result OK "host bound: the timeout's message"
else
	result FAIL "host bound: the timeout's message" "$(tail -n 3 "$out/host.log" | tr '\n' ' ')"
fi
none_left host
# Informative: whether the guest got as far as the command (a slow host
# may still be booting at the limit; the bound holds either way).
[ -f "$out/host/vm/started" ] && echo "# the host-bound guest was running its command" >>"$tap.body"

read -r rc secs <"$out/guest.rc" 2>/dev/null || { rc=none; secs=0; }
if [ "$rc" = 124 ] && [ "$secs" -lt "$GUEST_LIMIT" ] &&
   grep -q "ERROR: vm: the command timed out in the guest" "$out/guest.log"; then
	result OK "guest bound: the guest stops the command first, vm.sh exits 124 (${secs}s)"
else
	result FAIL "guest bound: the guest stops the command first, vm.sh exits 124 (${secs}s)" \
		"exit $rc after ${secs}s: $(grep ERROR "$out/guest.log" | tr '\n' ' ')"
fi
if grep -q "still running when it stopped: tp4-hang-test" "$out/guest.log"; then
	result OK "guest bound: the running test is named"
else
	result FAIL "guest bound: the running test is named" "$(grep ERROR "$out/guest.log" | tr '\n' ' ')"
fi
d=$out/guest/vm/dmesg.txt
# The blocked task's own block: from its task: line to the next task.
blocked=$(awk '/sysrq: Show Blocked State/ { on = 1 } on' "$d" 2>/dev/null |
	awk '/task:tp4-hang / { on = 1; print; next } on && /task:/ { exit } on' )
if grep -q "state:D" <<<"$blocked" && grep -q "vfork" <<<"$blocked"; then
	result OK "guest bound: dmesg.txt has the blocked task's stack (sysrq w)"
else
	result FAIL "guest bound: dmesg.txt has the blocked task's stack (sysrq w)" \
		"no D-state tp4-hang with a vfork frame after 'Show Blocked State' in $d"
fi
if grep -q "sysrq: Show State" "$d" 2>/dev/null && grep -q "task:tp4-hang " "$d" &&
   [ "$(grep -c 'task:' "$d")" -ge 10 ]; then
	result OK "guest bound: dmesg.txt has every task's stack (sysrq t)"
else
	result FAIL "guest bound: dmesg.txt has every task's stack (sysrq t)" "no 'Show State' dump in $d"
fi
none_left guest

{ echo "1..$n"; cat "$tap.body"; } >"$tap"
rm -f "$tap.body"
cat "$tap"
[ $fails = 0 ]
