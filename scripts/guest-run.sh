#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# guest-run.sh OUT: runs inside the VM (see vm.sh). Streams the kernel log to
# OUT/dmesg.txt, runs the command in OUT/cmd, and leaves its exit code in
# OUT/rc.
#
# With OUT/limit ("VM_TIMEOUT MARGIN", written by vm.sh), the command has
# until MARGIN seconds before the host's VM_TIMEOUT, counted from the
# guest's boot (/proc/uptime: QEMU's start before the kernel is a few
# seconds of the margin). Then a watchdog tells where it hung before
# anything is killed: the names in OUT/**/running.* (the tests still
# running) and the stacks of the blocked tasks and of all tasks (sysrq w
# and t) go to the kernel log, so to dmesg.txt; it then kills the command's
# process group, writes OUT/timedout (the seconds the command ran) and
# rc 124, and powers the guest off even if a task cannot be killed.
out=$1
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
dmesg --follow --nopager >"$out/dmesg.txt" 2>&1 &
logger=$!

kmsg() { echo "guest-run: $*" >/dev/kmsg 2>/dev/null; echo "guest-run: $*" >&2; }

# finish RC: the log and the exit code where the host finds them.
finish() {
	sleep 1
	kill "$logger" 2>/dev/null
	wait "$logger" 2>/dev/null
	# The whole log again, unless a dump may have pushed its start out
	# of the kernel's buffer (then what the follower wrote is kept).
	[ -f "$out/timedout" ] || dmesg --nopager >"$out/dmesg.txt"
	echo "$1" >"$out/rc"
	sync
}

# The command in a process group (and session) of its own, so that the
# watchdog can end all of it.
setsid -w bash -c "$(cat "$out/cmd")" &
cmd=$!
t0=$(cut -d. -f1 /proc/uptime)

watchdog=
if [ -f "$out/limit" ]; then
	read -r vm_limit margin <"$out/limit"
	budget=$(( vm_limit - margin - t0 ))
	[ "$budget" -ge 10 ] || budget=10
	(
		sleep "$budget"
		ran=$(( $(cut -d. -f1 /proc/uptime) - t0 ))
		kmsg "the command ran ${ran}s, its bound (${vm_limit}s less ${margin}s, from boot): where it is"
		for f in $(find "$out" -name 'running.*' 2>/dev/null | sort); do
			kmsg "still running: $(cat "$f") (${f#"$out"/})"
		done
		echo "$ran" >"$out/timedout"
		echo w >/proc/sysrq-trigger
		echo t >/proc/sysrq-trigger
		sleep 2
		kmsg "stopping the command"
		pg=$(ps -o pgid= -p "$cmd" | tr -d ' ')
		# (Had setsid forked, the group is its child's, never ours.)
		[ "$pg" = "$(ps -o pgid= -p $$ | tr -d ' ')" ] &&
			pg=$(pgrep -P "$cmd" | head -n 1)
		[ -n "$pg" ] && kill -TERM -- "-$pg" 2>/dev/null
		sleep 5
		[ -n "$pg" ] && kill -KILL -- "-$pg" 2>/dev/null
		sleep 5
		# Still there: a task that even SIGKILL does not end (an
		# uninterruptible wait). Off all the same: the host has its
		# answer in rc.
		if kill -0 "$cmd" 2>/dev/null; then
			kmsg "the command survives SIGKILL: powering off"
			finish 124
			echo o >/proc/sysrq-trigger
		fi
	) &
	watchdog=$!
fi

wait "$cmd"
rc=$?
if [ -n "$watchdog" ]; then
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
fi
[ -f "$out/timedout" ] && rc=124
finish "$rc"
exit "$rc"
