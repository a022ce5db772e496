// SPDX-License-Identifier: GPL-2.0
/*
 * tp4count: a QEMU TCG plugin that counts the instructions the guest
 * executes, exactly, for `make bench` and `make profile`.
 *
 * Every translated block gets a counter of its own, keyed by its start
 * address and length; the block adds its length to it each time it runs.
 * Kernel and user are told apart by the address (x86-64: the kernel's
 * half has bit 63 set). A per-function profile is the block counters
 * bucketed by the function each block starts in (scripts/tp4count.py,
 * with the guest kernel's System.map).
 *
 * Windows: a guest program marks the start and end of what it measures by
 * executing a marker, the 8-byte NOP "nopl 0x545034NN(%rax,%rax,1)"
 * (0f 1f 84 00 NN 34 50 54: "TP4" and the marker's number NN), which no
 * compiler emits (its padding NOPs have a zero displacement). The plugin
 * finds it at translation time and, each time it runs, writes a record
 * of the totals so far to the output file. Markers 1 and 2 start and end
 * a window; with bit 7 set (129, 130), or with profile=1 for every
 * window, the window is profiled: at its end the plugin writes every block
 * that ran in it, with its instructions there (the counts since the last
 * profiled marker).
 *
 * Waiting: markers 5 and 6 bracket a turn of a program's loop that found
 * nothing to do (a reader spinning on an empty ring). In cb mode, the user
 * instructions a vCPU executes between its 5 and its 6 are counted apart,
 * as "idle", so that a per-packet figure can leave the spinning out; the
 * kernel's are not (an interrupt, a system call made while waiting is
 * work done). They write no record and take no lock: one may run every
 * few hundred instructions. Inline mode counts no idle.
 *
 * Arguments (-plugin tp4count.so,out=FILE[,mode=inline|cb][,profile=1]):
 *   out   the output file (required)
 *   mode  inline (default): the counters are added inline by the
 *         translated code, a few host instructions per block; exact only
 *         with one TCG thread (-accel tcg,thread=single), as the adds of
 *         two threads to one counter would race. No split per vCPU: the
 *         inline operations of QEMU 7.2 (plugin API 1) take one address.
 *         cb: a callback per block adds to the running vCPU's own
 *         counter: per-vCPU counts, exact with a thread per vCPU too,
 *         at the cost of a helper call per block.
 *   profile=1  every window is profiled, not only those of markers 129/130
 *
 * Output, one record per line:
 *   tp4count 2 mode=<mode> vcpus=<n>
 *   M <seq> <marker> <kernel> <user> <idle>
 *     [<kernel vcpu0> <user vcpu0> <idle vcpu0> ...]
 *     (<user> without the idle user instructions, <idle> those)
 *   P <seq> <block address> <block length> <instructions>   (profile:
 *     each block that ran in the window ending at marker record <seq>)
 *   X <kernel> <user> [...]                                  (at exit)
 * Counts are cumulative since QEMU started; a window is the difference
 * of two M records.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS	64
#define KERNEL_BIT	(1ULL << 63)

static const uint8_t marker_prefix[4] = { 0x0f, 0x1f, 0x84, 0x00 };
static const uint8_t marker_tag[3] = { 0x34, 0x50, 0x54 };

/* One translated block. Never moves or goes away once made: the
 * translated code holds the address of its counter.
 */
struct block {
	uint64_t vaddr;
	uint32_t ninsns;
	uint64_t count;			/* inline mode */
	uint64_t *vcount;		/* cb mode: per vCPU */
	uint64_t *vidle;		/* cb mode, user blocks: idle, per vCPU */
	uint64_t profiled;		/* total at the last profile record */
	struct block *next_all;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block **table;		/* open addressing, pointers only */
static size_t table_size, table_used;
static struct block *all;
static FILE *out;
static bool cb_mode, profile_all;
static int nvcpus;
/*
 * The running totals a marker writes, kept as the blocks run, so that a
 * marker costs the same however many blocks there are: a marker that
 * summed every block's counter held its vCPU for longer and longer as a
 * long run made new blocks (a reader stopped that long while its input
 * ran on saw its ring overflow). cb mode: per vCPU, kernel, user and idle,
 * each written by its vCPU only; inline mode: kernel and user, added
 * inline beside the block's own counter.
 */
static uint64_t vcpu_kernel[MAX_VCPUS], vcpu_user[MAX_VCPUS];
static uint64_t vcpu_idle[MAX_VCPUS];
static uint64_t inline_kernel, inline_user;
/* cb mode: the vCPU is between markers 5 and 6. Each written by its vCPU. */
static bool idle[MAX_VCPUS];
static uint64_t seq;

static size_t slot_of(uint64_t vaddr, uint32_t ninsns, size_t size)
{
	uint64_t h = (vaddr ^ ((uint64_t)ninsns << 48)) * 0x9e3779b97f4a7c15ULL;

	return (h >> 17) & (size - 1);
}

static void table_grow(void)
{
	size_t size = table_size ? table_size * 2 : 1 << 16, i;
	struct block **t = calloc(size, sizeof(*t));

	if (!t) {
		fprintf(stderr, "tp4count: out of memory\n");
		abort();
	}
	for (i = 0; i < table_size; i++) {
		struct block *b = table[i];
		size_t s;

		if (!b)
			continue;
		for (s = slot_of(b->vaddr, b->ninsns, size); t[s];
		     s = (s + 1) & (size - 1))
			;
		t[s] = b;
	}
	free(table);
	table = t;
	table_size = size;
}

/* The block of (@vaddr, @ninsns), made if new. Under the lock. */
static struct block *block_get(uint64_t vaddr, uint32_t ninsns)
{
	struct block *b;
	size_t s;

	if (2 * (table_used + 1) > table_size)
		table_grow();
	for (s = slot_of(vaddr, ninsns, table_size); (b = table[s]);
	     s = (s + 1) & (table_size - 1))
		if (b->vaddr == vaddr && b->ninsns == ninsns)
			return b;
	b = calloc(1, sizeof(*b));
	if (b && cb_mode) {
		b->vcount = calloc(nvcpus, sizeof(*b->vcount));
		if (!(vaddr & KERNEL_BIT))
			b->vidle = calloc(nvcpus, sizeof(*b->vidle));
	}
	if (!b || (cb_mode && (!b->vcount ||
			       (!(vaddr & KERNEL_BIT) && !b->vidle)))) {
		fprintf(stderr, "tp4count: out of memory\n");
		abort();
	}
	b->vaddr = vaddr;
	b->ninsns = ninsns;
	b->next_all = all;
	all = b;
	table[s] = b;
	table_used++;
	return b;
}

/* cb mode: the block ran on @vcpu, which alone writes its counter. */
static void block_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;
	uint64_t *c;

	uint64_t *t;

	if (vcpu >= (unsigned int)nvcpus)
		return;
	if (!b->vidle) {
		c = &b->vcount[vcpu];
		t = &vcpu_kernel[vcpu];
	} else if (idle[vcpu]) {
		c = &b->vidle[vcpu];
		t = &vcpu_idle[vcpu];
	} else {
		c = &b->vcount[vcpu];
		t = &vcpu_user[vcpu];
	}
	__atomic_store_n(c, *c + b->ninsns, __ATOMIC_RELAXED);
	__atomic_store_n(t, *t + b->ninsns, __ATOMIC_RELAXED);
}

/* Markers 5 and 6: the vCPU starts, ends waiting. */
static void idle_exec(unsigned int vcpu, void *udata)
{
	if (vcpu < (unsigned int)nvcpus)
		idle[vcpu] = (uintptr_t)udata == 5;
}

static uint64_t block_total(const struct block *b)
{
	uint64_t n = 0;
	int i;

	if (!cb_mode)
		return __atomic_load_n(&b->count, __ATOMIC_RELAXED);
	for (i = 0; i < nvcpus; i++) {
		n += __atomic_load_n(&b->vcount[i], __ATOMIC_RELAXED);
		if (b->vidle)
			n += __atomic_load_n(&b->vidle[i], __ATOMIC_RELAXED);
	}
	return n;
}

/* The totals so far: kernel, user (not idle), idle user, over all
 * vCPUs, then per vCPU in cb mode. Reads the running totals only.
 */
static void write_totals(void)
{
	uint64_t k = 0, u = 0, w = 0;
	uint64_t vk[MAX_VCPUS], vu[MAX_VCPUS], vw[MAX_VCPUS];
	int i;

	if (!cb_mode) {
		k = __atomic_load_n(&inline_kernel, __ATOMIC_RELAXED);
		u = __atomic_load_n(&inline_user, __ATOMIC_RELAXED);
		fprintf(out, " %" PRIu64 " %" PRIu64 " 0\n", k, u);
		return;
	}
	/* One snapshot, read once: the other vCPUs run on meanwhile, and
	 * the totals must be the sum of the per-vCPU counts written.
	 */
	for (i = 0; i < nvcpus; i++) {
		vk[i] = __atomic_load_n(&vcpu_kernel[i], __ATOMIC_RELAXED);
		vu[i] = __atomic_load_n(&vcpu_user[i], __ATOMIC_RELAXED);
		vw[i] = __atomic_load_n(&vcpu_idle[i], __ATOMIC_RELAXED);
		k += vk[i];
		u += vu[i];
		w += vw[i];
	}
	fprintf(out, " %" PRIu64 " %" PRIu64 " %" PRIu64, k, u, w);
	for (i = 0; i < nvcpus; i++)
		fprintf(out, " %" PRIu64 " %" PRIu64 " %" PRIu64,
			vk[i], vu[i], vw[i]);
	fputc('\n', out);
}

static void marker_exec(unsigned int vcpu, void *udata)
{
	unsigned int id = (uintptr_t)udata;
	struct block *b;

	pthread_mutex_lock(&lock);
	seq++;
	fprintf(out, "M %" PRIu64 " %u", seq, id);
	write_totals();
	/*
	 * A program that ended in a turn it marked idle (its loop ran out
	 * of time there) left its vCPU idle: the next program's user
	 * instructions would count as waiting. Nothing waits across the end
	 * of a window or the start of a run (marker 4): every vCPU is busy
	 * again; a window's start makes its own vCPU busy.
	 */
	if ((id & 0x7f) == 2 || id == 4) {
		int i;

		for (i = 0; i < nvcpus; i++)
			__atomic_store_n(&idle[i], false, __ATOMIC_RELAXED);
	} else if ((id & 0x7f) == 1 && vcpu < (unsigned int)nvcpus) {
		__atomic_store_n(&idle[vcpu], false, __ATOMIC_RELAXED);
	}
	if ((id & 0x80) || (profile_all && (id == 1 || id == 2))) {
		/* A start only sets where the window's counts begin. */
		bool end = (id & 0x7f) != 1;

		for (b = all; b; b = b->next_all) {
			uint64_t n = block_total(b);

			if (end && n != b->profiled)
				fprintf(out, "P %" PRIu64 " %" PRIx64 " %u %" PRIu64 "\n",
					seq, b->vaddr, b->ninsns,
					n - b->profiled);
			b->profiled = n;
		}
	}
	fflush(out);
	pthread_mutex_unlock(&lock);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	pthread_mutex_lock(&lock);
	b = block_get(vaddr, n);
	pthread_mutex_unlock(&lock);
	if (cb_mode)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
						     QEMU_PLUGIN_CB_NO_REGS, b);
	else {
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
				QEMU_PLUGIN_INLINE_ADD_U64, &b->count, n);
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
				QEMU_PLUGIN_INLINE_ADD_U64,
				vaddr & KERNEL_BIT ? &inline_kernel : &inline_user,
				n);
	}

	if (vaddr & KERNEL_BIT)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *d = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) != 8 ||
		    memcmp(d, marker_prefix, 4) || memcmp(d + 5, marker_tag, 3))
			continue;
		if (d[4] == 5 || d[4] == 6) {
			if (cb_mode)
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
						idle_exec, QEMU_PLUGIN_CB_NO_REGS,
						(void *)(uintptr_t)d[4]);
			continue;
		}
		qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
						       QEMU_PLUGIN_CB_NO_REGS,
						       (void *)(uintptr_t)d[4]);
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	pthread_mutex_lock(&lock);
	fputs("X", out);
	write_totals();
	fflush(out);
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strcmp(argv[i], "mode=cb")) {
			cb_mode = true;
		} else if (!strcmp(argv[i], "mode=inline")) {
			cb_mode = false;
		} else if (!strcmp(argv[i], "profile=1")) {
			profile_all = true;
		} else {
			fprintf(stderr, "tp4count: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "tp4count: out=FILE is required\n");
		return -1;
	}
	if (info->system_emulation)
		nvcpus = info->system.max_vcpus;
	if (nvcpus < 1 || nvcpus > MAX_VCPUS) {
		fprintf(stderr, "tp4count: %d vCPUs (1 to %d)\n", nvcpus,
			MAX_VCPUS);
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror("tp4count: out");
		return -1;
	}
	fprintf(out, "tp4count 2 mode=%s vcpus=%d\n",
		cb_mode ? "cb" : "inline", nvcpus);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
