# SPDX-License-Identifier: GPL-2.0
# Common settings for the project's scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
# TP4_TREE: another tree (new_warnings' copy of the base, for kconfig.sh).
TREE=${TP4_TREE:-$BUILD/linux}
CACHE=${TP4_CACHE:-$HOME/.cache/tp4}

# The pinned base: Debian trixie-backports' linux-source-7.3 binary package,
# the newest kernel Debian has (see ../shared/design/ENVIRONMENT.md for why
# this package and not the source one). The backports pool keeps older
# builds, so the pin stays fetchable after newer ones come.
BASE_PKG=linux-source-7.3
BASE_VERSION=7.3.4-1~bpo13+1
BASE_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
BASE_SUITE=trixie-backports
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE_TAG=tp4-base
BRANCH=tp4

# A fixed identity and date for the base commit and for the committer of
# every applied patch, so that commit ids (and so the exported series) do not
# depend on who ran `make tree` or when.
export GIT_COMMITTER_NAME="tpacket4 series"
export GIT_COMMITTER_EMAIL="series@tpacket4.invalid"

# virtme-ng, when make deps put it in its own venv.
PATH=$CACHE/venv/bin:$PATH

JOBS=${JOBS:-$(( $(nproc) + 1 ))}
export CCACHE_BASEDIR=$TOP
export CCACHE_NOHASHDIR=1
# Two debug kernels and a modular one of 7.3 do not fit ccache's default 5 GB.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# The compiler, through ccache where there is one. Decided at each use, not
# once here: on a fresh machine make deps installs ccache after test.sh has
# sourced this file, and a kernel built once with "gcc" and once with
# "ccache gcc" is rebuilt whole (kbuild sees the command line change).
cc_wrap() {
	if command -v ccache >/dev/null 2>&1; then echo "ccache gcc"; else echo gcc; fi
}
CC_WRAP=$(cc_wrap)

say() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
err() { printf 'ERROR: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# kmake <kind> <make args...>: make in the tree with the O= directory of a
# config kind (bench or debug).
kmake() {
	local kind=$1 cc; shift
	cc=$(cc_wrap)
	# The bench kernel's tpbench marks its windows for the instruction
	# counting plugin (make bench); the others' does not.
	[ "$kind" = bench ] && set -- USERCFLAGS=-DTPBENCH_COUNT_MARKS "$@"
	make -C "$TREE" O="$BUILD/obj-$kind" CC="$cc" HOSTCC="$cc" \
		-j"$JOBS" "$@"
}

# build_kernel <kind> <who>: the config and kernel of a kind, the log in
# build/kernel-<kind>.log; dies with the log's tail if it does not build.
build_kernel() {
	local kind=$1 who=$2
	"$TOP/scripts/kconfig.sh" "$kind"
	say "$who: building the $kind kernel (log: $BUILD/kernel-$kind.log)"
	kmake "$kind" >"$BUILD/kernel-$kind.log" 2>&1 ||
		{ tail -30 "$BUILD/kernel-$kind.log"; die "$who: the kernel does not build"; }
}

# apt_side <suite>: apt-get/apt-cache options that read Debian <suite>'s
# index with a sources entry and lists of their own in $CACHE/apt-<suite>
# (Debian's archive keyring, signed-by), leaving the system's apt
# configuration alone; the index is read (apt-get update) once per call.
# Sets the array APT_OPTS.
apt_side() {
	local suite=$1 dir=$CACHE/apt-$1
	mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/cache/archives/partial"
	cat >"$dir/parts/$suite.sources" <<EOS
Types: deb
URIs: $DEBIAN_MIRROR
Suites: $suite
Components: main
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	APT_OPTS=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$dir/parts"
		  -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		  -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root")
	apt-get "${APT_OPTS[@]}" update -q >"$dir/update.log" 2>&1 ||
		{ tail -5 "$dir/update.log" >&2; return 1; }
}

# apt_kernels <suite>: "package version" of every linux-source-7.* that
# <suite> serves, oldest first.
apt_kernels() {
	local p
	apt_side "$1" || return 1
	for p in $(apt-cache "${APT_OPTS[@]}" pkgnames linux-source-7. |
			grep -E '^linux-source-7\.[0-9]+$'); do
		apt-cache "${APT_OPTS[@]}" madison "$p" | awk -v p="$p" '{ print p, $3 }'
	done | sort -u -k2,2V
}

# elapsed: minutes and seconds since the script started (lib.sh sourced).
START_TIME=$(date +%s)
elapsed() {
	local t=$(( $(date +%s) - START_TIME ))
	echo "$((t / 60))m$((t % 60))s"
}

# The series is posted in sets of at most 15 patches, as netdev takes
# them, which apply in order: patches/SETS names them, one line each,
# "<folder> <tree> <count>": patches/<folder>/ holds the set's cover letter
# (0000) and patches, numbered within the set, with "[PATCH <tree> n/m]"
# subjects; <count> is how many commits of tp4-base..HEAD it holds, in
# order ("+" on the last line: the rest). Each set's cover letter ends with
# base-commit: and a prerequisite-patch-id: for every patch of the sets
# before it. make tree copies SETS to the tree's .git/tp4-sets and each
# cover letter's subject and text to .git/tp4-covers/<folder>, from which
# make series exports again.
SET_MAX=15

# The wire of make test's boot (scripts/vm.sh's VM_WIRE groups); empty for
# none. With the iommu group, test.sh adds the swiotlb boot.
TEST_WIRE=${TEST_WIRE-plain iommu big}

# fix_tree <tree>: whether a set for <tree> is one of fixes, to the
# base's own code, which applies to the base alone.
fix_tree() {
	case $1 in net | iwl-net | bpf) return 0 ;; esac
	return 1
}

# tree_sets: the sets of the tree (.git/tp4-sets), "<folder> <tree> <count>"
# each, counts resolved ("+": the commits left), comments dropped. Fails if
# the counts do not add up to the branch's commits.
tree_sets() {
	local total left folder tree count
	total=$(git -C "$TREE" rev-list --count "$BASE_TAG..HEAD")
	left=$total
	[ -f "$TREE/.git/tp4-sets" ] || { [ "$total" = 0 ] && return 0; die "no $TREE/.git/tp4-sets (make tree)"; }
	while read -r folder tree count; do
		[ "$count" = + ] && count=$left
		[ "$count" -le "$left" ] 2>/dev/null ||
			die "sets: $folder wants $count patches, $left are left of $total"
		echo "$folder $tree $count"
		left=$((left - count))
	done < <(grep -vE '^[[:space:]]*(#|$)' "$TREE/.git/tp4-sets")
	[ "$left" = 0 ] || die "sets: .git/tp4-sets leaves $left of $total commits in no set"
}

# export_series <dir>: write tp4-base..HEAD of the tree as git format-patch
# files into <dir>, a folder per set (tree_sets), each with its cover letter
# first, and <dir>/SETS. A cover letter's subject and text are the set's
# .git/tp4-covers/<folder> (make tree takes them from its 0000); its Date
# is the newest patch's of the set, so that the same commits always give
# the same bytes.
export_series() {
	local dir=$1 folder tree count prev=$BASE_TAG end i=0 date sets
	local -a commits
	rm -rf "$dir"; mkdir -p "$dir"
	mapfile -t commits < <(git -C "$TREE" rev-list --reverse "$BASE_TAG..HEAD")
	[ ${#commits[@]} -gt 0 ] || return 0
	sets=$(tree_sets) || return 1
	cp "$TREE/.git/tp4-sets" "$dir/SETS"
	while read -r folder tree count; do
		[ "$count" -gt 0 ] || continue
		end=${commits[$((i + count - 1))]}
		# format-patch takes the cover letter from the description of
		# the branch at the range's tip (git 2.39 has no
		# --description-file): a branch of the set's own, for the time
		# of the export.
		git -C "$TREE" branch -f tp4-set "$end"
		GIT_COMMITTER_NAME=$(git -C "$TREE" log -1 --format=%an HEAD) \
		GIT_COMMITTER_EMAIL=$(git -C "$TREE" log -1 --format=%ae HEAD) \
		git -C "$TREE" -c core.abbrev=12 \
			-c "branch.tp4-set.description=$(cat "$TREE/.git/tp4-covers/$folder" 2>/dev/null)" \
			format-patch -q -o "$dir/$folder" --zero-commit --no-signature \
			--base="$BASE_TAG" \
			--cover-letter --cover-from-description=subject \
			--subject-prefix="PATCH $tree" "$prev..tp4-set"
		git -C "$TREE" branch -q -D tp4-set
		date=$(git -C "$TREE" log -1 --format=%aD "$end")
		sed -i "0,/^Date: .*/s//Date: $date/" "$dir/$folder/0000-cover-letter.patch"
		# A set of fixes (net, iwl-net) applies to the base alone
		# (check-series checks it): it needs none of the sets before.
		if fix_tree "$tree"; then
			sed -i '/^prerequisite-patch-id: /d' "$dir/$folder/0000-cover-letter.patch"
		fi
		prev=$end
		i=$((i + count))
	done <<<"$sets"
}

# cover_description <0000-cover-letter.patch>: the subject and text of a
# cover letter, as a branch description (subject, blank line, text). The
# text ends where format-patch's shortlog begins: the From: header's name
# followed by " (N):", and nothing else (a line of the text such as
# "Part 6, ... (27):" has that shape too).
cover_description() {
	awk '
	!body && /^From: / { name = $0; sub(/^From: /, "", name); sub(/ <[^>]*>$/, "", name); next }
	/^Subject:/ { sub(/^Subject: (\[[^]]*\] )?/, ""); subj = $0; insubj = 1; next }
	insubj && /^[ \t]/ { sub(/^[ \t]+/, " "); subj = subj $0; next }
	insubj && /^$/ { insubj = 0; body = 1; print subj; print ""; next }
	body && name != "" && index($0, name " (") == 1 && $0 ~ /^.+ \([0-9]+\):$/ { exit }
	body { lines[++nl] = $0 }
	END { while (nl > 0 && lines[nl] == "") nl--; for (i = 1; i <= nl; i++) print lines[i] }
	' "$1"
}

# patch_sets: the sets of patches/ (patches/SETS), "<folder> <tree> <count>"
# each, as written (a count may be "+").
patch_sets() {
	[ -f "$TOP/patches/SETS" ] || return 0
	grep -vE '^[[:space:]]*(#|$)' "$TOP/patches/SETS"
}

# series_files: the numbered patches of patches/, set after set, cover
# letters excluded.
series_files() {
	local folder
	for folder in $(patch_sets | awk '{ print $1 }'); do
		ls "$TOP/patches/$folder"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null |
			grep -v '/0000-' || true
	done
}

# tree_state: "clean", "dirty" (uncommitted changes to tracked files),
# "synced" (HEAD exports to what patches/ holds) or "unexported".
tree_state() {
	[ -d "$TREE/.git" ] || { echo absent; return; }
	if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		echo dirty; return
	fi
	local tmp
	tmp=$(mktemp -d)
	export_series "$tmp"
	if diff -qr "$tmp" "$TOP/patches" >/dev/null 2>&1 ||
	   { [ -z "$(ls "$tmp")" ] && [ -z "$(ls "$TOP/patches" 2>/dev/null)" ]; }; then
		echo synced
	elif [ -d "$TREE/.git/tp4-exported" ] && diff -qr "$tmp" "$TREE/.git/tp4-exported" >/dev/null 2>&1; then
		# The tree is as it was last synced: patches/ moved on.
		echo behind
	else
		echo unexported
	fi
	rm -rf "$tmp"
}

# remember_sync: note what the tree exports to now (see tree_state).
remember_sync() {
	export_series "$TREE/.git/tp4-exported"
}

# file_warnings <tree> <obj> <out> <file.c>...: the W=1 and sparse (C=2:
# every named file, rebuilt or not) warnings of compiling the <file.c>s of
# <tree> in the configured O= directory <obj>, without line numbers, sorted,
# paths from the tree's top, into <out> (<out>.log has the whole output).
file_warnings() {
	local tree=$1 obj=$2 out=$3 cc sparse
	shift 3
	cc=$(cc_wrap)
	sparse=$("$TOP/scripts/sparse-build.sh")
	: >"$out.log"
	if [ $# -gt 0 ]; then
		# Compiled again, each of them: an object that is up to date
		# would say nothing, and a header the series changes makes the
		# head's stale where the base's are not (ccache replays the
		# warnings of a compile it has seen).
		printf '%s\n' "$@" | sed "s|\\.c$|.o|; s|^|$obj/|" | xargs rm -f
		# shellcheck disable=SC2046
		make -k -C "$tree" O="$obj" CC="$cc" HOSTCC="$cc" -j"$JOBS" W=1 C=2 \
			CHECK="$sparse" \
			$(printf '%s\n' "$@" | sed 's/\.c$/.o/') >>"$out.log" 2>&1 || true
		# kbuild skips a checker it finds too old with a warning only.
		! grep -q 'specified, but .* is not available or not up to date' "$out.log" ||
			die "file_warnings: kbuild did not run sparse ($sparse): see $out.log"
	fi
	# None at all is no failure.
	{ grep -E '^[^ ]+:[0-9]+:([0-9]+:)? (warning|error):' "$out.log" || true; } |
		sed -E 's|^([^ :]+):[0-9]+:([0-9]+:)? |\1: |; s|^.*/linux/||' | sort >"$out"
}

# touched_files [--diff-filter=X [<obj>]]: the kernel .c files the series
# adds or changes (X as git diff's --diff-filter; AM by default); with
# <obj>, only those built there (their .o is there) by <obj>'s config.
touched_files() {
	local filter=${1:---diff-filter=AM} obj=${2:-} f
	git -C "$TREE" diff --name-only "$filter" "$BASE_TAG..$BRANCH" -- '*.c' |
		grep -vE '^(tools|samples|Documentation)/' |
		while read -r f; do
			[ -z "$obj" ] || [ -f "$obj/${f%.c}.o" ] || continue
			echo "$f"
		done
}

# build_tests <kind> <who>: into $BUILD/selftests, what the test VM
# runs against the <kind> kernel: the tpacket4 selftests, tpbench and
# bench_all.sh (built with the kernel; tpbench must also build on its own
# against the installed headers), the upstream AF_PACKET selftests, and
# with TEST_PCAP=1 (test.sh's default) the patched tcpdump that make pcap
# built. Dies if ours build with a warning.
build_tests() {
	local kind=$1 who=$2 obj=$BUILD/obj-$1 bin=$BUILD/selftests t
	local log=$BUILD/selftests.log
	rm -rf "$bin"; mkdir -p "$bin/net" "$bin/tpacket4" "$bin/bench"
	kmake "$kind" -s headers >/dev/null
	make -s -C "$TREE/tools/testing/selftests/net/tpacket4" OUTPUT="$bin/tpacket4" \
		KHDR_INCLUDES="-isystem $obj/usr/include" >"$log" 2>&1 ||
		{ tail -20 "$log"; die "$who: the selftests do not build"; }
	if [ -f "$TREE/samples/tpacket4/Makefile" ]; then
		make -s -C "$TREE/samples/tpacket4" KHDR="$obj/usr/include" \
			CFLAGS="-O2 -Werror" >>"$log" 2>&1 ||
			{ tail -20 "$log"; die "$who: tpbench does not build on its own"; }
		make -s -C "$TREE/samples/tpacket4" clean
	fi
	! grep -E '(warning|error):' "$log" >&2 ||
		die "$who: the selftests build with warnings ($log)"
	if [ -x "$obj/samples/tpacket4/tpbench" ]; then
		mkdir -p "$bin/samples"
		cp "$obj/samples/tpacket4/tpbench" "$TREE/samples/tpacket4/bench_all.sh" \
			"$bin/samples/"
		# The example of Documentation/networking/packet_v4.rst.
		if [ -x "$obj/samples/tpacket4/tp4_echo" ]; then
			cp "$obj/samples/tpacket4/tp4_echo" "$bin/samples/"
		fi
	fi
	# The patched tcpdump (make pcap), for guest-pcap.sh, with TEST_PCAP=1.
	if [ "${TEST_PCAP:-0}" = 1 ] && [ -x "$BUILD/pcap/bin/tcpdump" ]; then
		mkdir -p "$bin/pcap"
		cp "$BUILD/pcap/bin/tcpdump" "$bin/pcap/"
	fi
	# xskbench (bench/), AF_XDP for the wire's checks (guest-wire.sh).
	make -s -C "$TOP/bench" OUT="$bin/bench" "$bin/bench/xskbench" >>"$log" 2>&1 ||
		{ tail -20 "$log"; die "$who: bench/xskbench does not build"; }
	for t in psock_tpacket psock_fanout txring_overwrite; do
		gcc -Wall -O2 -isystem "$obj/usr/include" \
			-I"$TREE/tools/testing/selftests" -o "$bin/net/$t" \
			"$TREE/tools/testing/selftests/net/$t.c"
	done
}

# run_tests <kind> <who>: boots the <kind> kernel once to run what
# build_tests built (guest-tests.sh), with TEST_PCAP=1 checks the patched
# tcpdump on the host's kernel too (host-pcap.sh: no TPACKET_V4 there),
# then the verdict (results.py), whose
# last line is "N passed, N failed, N skipped". Returns 0 if all passed.
# Call it as "run_tests ... || rc=$?": it goes on after a failed step.
# The boot has TEST_WIRE's wire; with the iommu group, wire_swiotlb's
# boot (test.sh starts it earlier) is counted with it.
run_tests() {
	local kind=$1 who=$2 out=$BUILD/vm/test vrc rc boots=()
	say "$who: booting the $kind kernel to run the tests ($(elapsed))"
	VM_OUT=$out KIND=$kind VM_TIMEOUT=${VM_TIMEOUT:-2400} VM_WIRE=$TEST_WIRE \
		"$TOP/scripts/vm.sh" "$TOP/scripts/guest-tests.sh $BUILD/selftests $out/tests"
	vrc=$?
	case $vrc in
	0) ;;
	124) err "$who: the test VM timed out (VM_TIMEOUT=${VM_TIMEOUT:-2400}s): the tests still running are named below, the kernel's stacks are in $out/dmesg.txt" ;;
	*) warn "$who: the test VM exited $vrc" ;;
	esac
	# The test of vm.sh's own timeouts (vm-timeout-test.sh) and of the
	# counting plugin (count-test.sh), when they ran.
	if [ -d "$out/tests" ] && [ -f "$BUILD/vm/timeout/vm-timeout.tap" ]; then
		cp "$BUILD/vm/timeout/vm-timeout.tap" "$out/tests/"
	fi
	if [ -d "$out/tests" ] && [ -f "$BUILD/vm/count/count.tap" ]; then
		cp "$BUILD/vm/count/count.tap" "$out/tests/"
	fi
	# The patched tcpdump on the host's kernel, which has no TPACKET_V4.
	if [ "${TEST_PCAP:-0}" = 1 ] && [ -d "$out/tests" ] &&
	   [ -x "$BUILD/selftests/pcap/tcpdump" ]; then
		"$TOP/scripts/host-pcap.sh" "$BUILD/selftests/pcap/tcpdump" \
			>"$out/tests/pcap@host.tap" 2>&1
	fi
	say "$who: results ($(elapsed)); logs in $out"
	if [[ " $TEST_WIRE " == *" iommu "* ]]; then
		boots=(--boot swiotlb "$BUILD/vm/swiotlb/dmesg.txt" "$BUILD/vm/swiotlb/tests"
		       "$BUILD/vm/swiotlb/console.txt")
	fi
	python3 "$TOP/scripts/results.py" "$out/dmesg.txt" "$out/tests" "$out/console.txt" \
		"${boots[@]}" >"$out/summary.txt"
	rc=$?
	cat "$out/summary.txt"
	[ $vrc = 0 ] || rc=1
	return $rc
}

# wire_swiotlb <kind>: a boot of the <kind> kernel with the wire's iommu
# pair alone and swiotlb=force, every DMA buffer of that pair bounced (a
# missing DMA sync shows as wrong bytes or lost packets), that runs
# scripts/guest-wire.sh: its results in $BUILD/vm/swiotlb (run_tests counts
# them, named "swiotlb: ..."), its output in $BUILD/vm/swiotlb.log.
wire_swiotlb() {
	local out=$BUILD/vm/swiotlb
	VM_OUT=$out KIND=$1 VM_TIMEOUT=${WIRE_TIMEOUT:-1200} VM_WIRE=iommu VM_APPEND=swiotlb=force \
		"$TOP/scripts/vm.sh" "$TOP/scripts/guest-wire.sh $BUILD/selftests $out/tests" \
		>"$BUILD/vm/swiotlb.log" 2>&1
}

# new_warnings <kind> <who> <state>: the W=1 and sparse warnings of the
# kernel .c files the series adds or changes, at the series' head, that the
# same files do not have at the base. The head's are built in the tree's
# own O= directory (only those objects are rebuilt, and a normal build puts
# them back from ccache); the base's in a copy of the base of its own,
# $BUILD/w1-base/linux (made once, kept), with the same config: checking the
# base out in the tree would make the next build recompile everything that
# includes a header the series changes. Prints the new warnings and returns
# 1 if there are any.
new_warnings() {
	local kind=$1 who=$2 state=$3 new base_rev btree bobj files
	base_rev=$(git -C "$TREE" rev-parse "$BASE_TAG^{commit}")
	btree=$BUILD/w1-base/linux
	bobj=$BUILD/w1-base/obj-$kind
	if [ "$(cat "$BUILD/w1-base/rev" 2>/dev/null)" != "$base_rev" ]; then
		say "$who: a copy of the base for its W=1/sparse warnings ($btree)"
		rm -rf "$BUILD/w1-base"; mkdir -p "$btree"
		git -C "$TREE" archive "$base_rev" | tar -x -C "$btree"
		echo "$base_rev" >"$BUILD/w1-base/rev"
	fi
	TP4_TREE=$btree OBJ=$bobj "$TOP/scripts/kconfig.sh" "$kind" 2>/dev/null
	# The files the config builds: the head's objects are there (the
	# caller built the head).
	# shellcheck disable=SC2046
	file_warnings "$btree" "$bobj" "$state/warnings-base" \
		$(touched_files --diff-filter=M "$BUILD/obj-$kind")
	say "$who: the base's warnings ($(elapsed))"
	files=$(touched_files --diff-filter=AM "$BUILD/obj-$kind")
	# shellcheck disable=SC2086
	file_warnings "$TREE" "$BUILD/obj-$kind" "$state/warnings-head" $files
	say "$who: the head's warnings ($(elapsed))"
	new=$(comm -13 "$state/warnings-base" "$state/warnings-head")
	if [ -n "$new" ]; then
		printf '%s\n' "$new" | sed 's/^/  new: /' >&2
		warn "$who: the series adds W=1/sparse warnings (full logs in $state/warnings-head.log)"
		return 1
	fi
	say "$who: no new W=1 or sparse warnings in $(echo "$files" | wc -w) files ($(wc -l <"$state/warnings-base") in the base's)"
}
