/* Regions on memory tags (aarch64 MTE): protection per 16-byte granule,
 * traps with no pointer moved, grants by retagging. Where the machine has
 * no MTE (x86-64, aarch64 without it) the same calls must place regions on
 * the views and say why; make test-aarch64 runs the tag half under
 * qemu-user, whose default CPU has MTE. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/tag/fault.h"
#include "core/tag/mte.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

static int tags(void)
{
	const char *why = NULL;
	int b = region_tag_backend(&why);

	CHECK(b == RTL_ON_TAGS || b == RTL_ON_VIEWS);
	CHECK(why != NULL && why[0] != '\0');
	printf("# %s\n", why);
	return b == RTL_ON_TAGS;
}

static _Atomic int grants;
static _Atomic(void *) last_addr, last_base;
static _Atomic int last_write;

/* Tags give none and read-write: every trap is granted read-write. */
static void grant_rw(rtl_trap_t *t)
{
	grants++;
	atomic_store(&last_addr, t->addr);
	atomic_store(&last_base, t->base);
	atomic_store(&last_write, t->write);
	CHECK_EQ(t->prot, PROT_NONE);
	CHECK_EQ(region_protect(t->addr, RW), 0);
}

TEST(without_tags_regions_go_on_the_views)
{
	char *p;

	if (tags())
		return;                     /* the tag half below */
	p = region_alloc_tagged(40, &p, 0); /* bound: it moves on the views */
	CHECK(p != NULL);
	CHECK_EQ(region_mechanism(p), RTL_ON_VIEWS);
	CHECK_EQ(region_handler(p, grant_rw), 0);
	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	poke(p + 3, 7); /* a trap on the views, granted */
	CHECK_EQ(grants, 1);
	CHECK_EQ(region_free(p), 0);
}

TEST(read_only_regions_go_on_the_views)
{
	char *p = region_alloc_tagged(40, NULL, 1);

	CHECK(p != NULL);
	CHECK_EQ(region_mechanism(p), RTL_ON_VIEWS);
	CHECK_EQ(region_protect(p, PROT_READ), 0);
	CHECK_EQ(region_free(p), 0);
}

TEST(rtl_tag_off_chooses_the_views)
{
	const char *why = NULL;

	setenv("RTL_TAG", "off", 1);
	CHECK_EQ(region_tag_backend(&why), RTL_ON_VIEWS);
	CHECK(strstr(why, "RTL_TAG=off") != NULL);
	CHECK_EQ(region_mechanism(region_alloc_tagged(16, NULL, 0)), RTL_ON_VIEWS);
}

/* Two regions of 16 bytes side by side, in one pair of granules: each
 * traps alone, at its own granule, and its grant leaves the other as it
 * was. No pointer moves. */
TEST(two_granule_regions_trap_alone)
{
	char *a, *b;
	struct region_info ia, ib;

	if (!tags())
		return;
	a = region_alloc_tagged(16, NULL, 0);
	b = region_alloc_tagged(16, NULL, 0);
	CHECK(a && b);
	CHECK_EQ(region_mechanism(a), RTL_ON_TAGS);
	CHECK_EQ(region_mechanism(b), RTL_ON_TAGS);
	CHECK_EQ(region_find(a, &ia), 0);
	CHECK_EQ(region_find(b, &ib), 0);
	/* Adjacent granules: no page, no 64-byte granule between them. */
	CHECK_EQ(((uintptr_t)b & ((1ull << 56) - 1)) - ((uintptr_t)a & ((1ull << 56) - 1)), 16);
	CHECK(((uintptr_t)a >> 56) != ((uintptr_t)b >> 56)); /* tags differ */
	CHECK_EQ(region_handler(a, grant_rw), 0);
	CHECK_EQ(region_handler(b, grant_rw), 0);
	poke(a, 1);
	poke(b, 2);
	CHECK_EQ(region_protect(a, PROT_NONE), 0);
	poke(b + 15, 3); /* b's last byte: no trap */
	CHECK_EQ(peek(b), 2);
	CHECK_EQ(grants, 0);
	CHECK_EQ(region_find(a, &ia), 0);
	CHECK_EQ(ia.prot, PROT_NONE);

	CHECK_EQ(peek(a + 15), 0); /* a's last byte: a trap, a read */
	CHECK_EQ(grants, 1);
	CHECK(atomic_load(&last_addr) == a + 15);
	CHECK(atomic_load(&last_base) == a);
	CHECK_EQ(atomic_load(&last_write), 0);
	CHECK_EQ(peek(a), 1); /* granted: the same pointer reads on */

	CHECK_EQ(region_protect(b, PROT_NONE), 0);
	poke(a + 8, 4); /* a is read-write: no trap */
	CHECK_EQ(grants, 1);
	poke(b + 1, 5); /* b traps alone, a write */
	CHECK_EQ(grants, 2);
	CHECK(atomic_load(&last_addr) == b + 1);
	CHECK_EQ(atomic_load(&last_write), 1);
	CHECK_EQ(peek(b + 1), 5);
	CHECK_EQ(peek(b + 15), 3);
	CHECK_EQ(region_free(a), 0);
	CHECK_EQ(region_free(b), 0);
}

/* A region of 40 bytes is three granules: byte 47 (the third granule's
 * last) is its span, as 63 is a view region's; byte 48 is the next one's. */
TEST(granularity_is_sixteen_bytes)
{
	char *p, *q;
	struct region_info info;

	if (!tags())
		return;
	p = region_alloc_tagged(40, NULL, 0);
	q = region_alloc_tagged(16, NULL, 0);
	CHECK(p && q);
	CHECK_EQ(region_find(p + 47, &info), 0);
	CHECK(info.base == p);
	CHECK_EQ(info.size, 40);
	CHECK_EQ(info.offset, 47);
	CHECK_EQ(region_find(q, &info), 0);
	CHECK(info.base == q);
	CHECK_EQ(region_handler(p, grant_rw), 0);
	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	poke(q, 9); /* the next granule is q's */
	CHECK_EQ(grants, 0);
	poke(p + 32, 1); /* the third granule is p's */
	CHECK_EQ(grants, 1);
}

TEST(tag_regions_are_zeroed_and_reused)
{
	char *p, *q;

	if (!tags())
		return;
	p = region_alloc_tagged(100, NULL, 0);
	CHECK(p != NULL);
	for (int i = 0; i < 100; i++) {
		CHECK_EQ(peek(p + i), 0);
		poke(p + i, 0xab);
	}
	CHECK_EQ(region_free(p), 0);
	CHECK_EQ(region_mechanism(p), -1);
	CHECK_EQ(errno, ENOENT);
	q = region_alloc_tagged(100, NULL, 0);
	CHECK(q != NULL);
	/* The same granules (exact-size list), zero again. */
	CHECK_EQ((uintptr_t)q << 8, (uintptr_t)p << 8);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(peek(q + i), 0);
}

TEST(what_tags_cannot_do_is_refused)
{
	char *p, *v;

	if (!tags())
		return;
	p = region_alloc_tagged(64, &v, 0);
	CHECK(p != NULL && v == p);
	CHECK_EQ(region_protect(p, PROT_READ), -1);
	CHECK_EQ(errno, ENOTSUP);
	CHECK_EQ(region_protect_ptr(&v, PROT_NONE), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(region_track(p, RTL_TRACK_ON), -1);
	CHECK_EQ(errno, ENOTSUP);
	CHECK_EQ(region_tracking(p), 0);
	CHECK(region_view(p, PROT_READ) == NULL);
	CHECK_EQ(region_protect_in_place(p, PROT_NONE), -1);
	CHECK(region_define(p, 16, NULL) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(region_bptr(&v, &v), 0); /* nothing to register */
	CHECK_EQ(region_alloc_tagged(0, NULL, 0) == NULL, 1);
	CHECK_EQ(errno, EINVAL);
	/* All refused, nothing changed. */
	poke(p, 1);
	CHECK_EQ(peek(p), 1);
}

static void no_handler_child(void)
{
	char *p = region_alloc_tagged(32, NULL, 0);

	region_protect(p, PROT_NONE);
	poke(p + 20, 1);
	_exit(0);
}

static void freed_child(void)
{
	char *p = region_alloc_tagged(32, NULL, 0);

	region_free(p);
	poke(p, 1);
	_exit(0);
}

static void retagged_child(void)
{
	char *p = region_alloc_tagged(32, NULL, 0);
	char *wrong = (char *)(((uintptr_t)p & ((1ull << 56) - 1)) |
	                       ((((uintptr_t)p >> 56) % 15 + 1) << 56));

	poke(wrong, 1); /* the granule's tag is p's, never wrong's */
	_exit(0);
}

/* What rtl cannot resolve ends the process with a message, as a trap on
 * the views does. */
TEST(unresolvable_tag_faults_die_with_a_message)
{
	char err[4096];
	int st;

	if (!tags())
		return;
	st = test_run_captured(no_handler_child, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "unhandled region trap (no handler)") != NULL);
	CHECK(strstr(err, "offset 20 of region") != NULL);
	CHECK(strstr(err, "on memory tags") != NULL);
	st = test_run_captured(freed_child, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "outside any region") != NULL);
	st = test_run_captured(retagged_child, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "does not carry its region's tag") != NULL);
}

/* The kernel's accesses: read() into a protected granule goes to the
 * handler first (on hardware the kernel would answer EFAULT; under
 * qemu-user it would write through unchecked). */
TEST(system_call_on_a_protected_granule)
{
	char *p;
	int fds[2];

	if (!tags())
		return;
	p = region_alloc_tagged(16, NULL, 0);
	CHECK(p != NULL);
	CHECK_EQ(region_handler(p, grant_rw), 0);
	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	CHECK_EQ(pipe(fds), 0);
	CHECK_EQ(write(fds[1], "tagged", 6), 6);
	CHECK_EQ(read(fds[0], p + 4, 6), 6);
	CHECK_EQ(grants, 1);
	CHECK_EQ(atomic_load(&last_write), 1);
	CHECK(memcmp(p + 4, "tagged", 6) == 0);
	/* No handler: the call is refused and reads nothing. */
	CHECK_EQ(region_handler(p, NULL), 0);
	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	CHECK_EQ(write(fds[1], "x", 1), 1);
	CHECK_EQ(read(fds[0], p, 1), -1);
	CHECK_EQ(errno, EFAULT);
}

#define THREADS 4
#define ROUNDS 500

static void *worker(void *arg)
{
	char *mine = arg;

	for (int i = 0; i < ROUNDS; i++) {
		CHECK_EQ(region_protect(mine, PROT_NONE), 0);
		poke(mine + i % 16, (unsigned char)i);
		CHECK_EQ(peek(mine + i % 16), (unsigned char)i);
	}
	return NULL;
}

/* Threads started after rtl check tags as the main thread does, each
 * trapping on its own granules. */
TEST(threads_trap_on_their_own_granules)
{
	pthread_t th[THREADS];
	char *r[THREADS];

	if (!tags())
		return;
	region_handler(NULL, grant_rw);
	for (int i = 0; i < THREADS; i++)
		CHECK((r[i] = region_alloc_tagged(16, NULL, 0)) != NULL);
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, worker, r[i]), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(grants, THREADS * ROUNDS);
}

/* A forked child keeps its regions' tags, protection and handler (the
 * arena is private memory: the kernel copies tags with pages). */
TEST(fork_keeps_tags)
{
	char *p;
	pid_t pid;
	int st;

	if (!tags())
		return;
	p = region_alloc_tagged(16, NULL, 0);
	CHECK(p != NULL);
	poke(p, 42);
	CHECK_EQ(region_handler(p, grant_rw), 0);
	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	pid = fork();
	if (pid == 0) {
		if (peek(p) != 42 || grants != 1)
			_exit(1);
		poke(p, 43);
		_exit(region_protect(p, PROT_NONE) == 0 && peek(p) == 43 && grants == 2 ? 0
		                                                                        : 2);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_EQ(grants, 0);
	CHECK_EQ(peek(p), 42); /* the parent's copy: its own trap */
	CHECK_EQ(grants, 1);
}

static char *volatile retagged;
static _Atomic int retagging;

static void *retag_loop(void *arg)
{
	(void)arg;
	while (atomic_load(&retagging)) {
		region_protect(retagged, PROT_NONE);
		region_protect(retagged, RW);
	}
	return NULL;
}

#define FORKS 8

/* A fork while another thread retags a region (an epoch does): that
 * thread held the region's lock, and does not come along. The child must
 * still change the region's protection and trap on it; a lock left held
 * would spin it until the alarm. */
TEST(fork_while_another_thread_retags)
{
	const size_t size = 256 << 10; /* long to retag: forks land inside */
	pthread_t th;
	char *p;

	if (!tags())
		return;
	region_handler(NULL, grant_rw);
	CHECK((p = region_alloc_tagged(size, NULL, 0)) != NULL);
	retagged = p;
	atomic_store(&retagging, 1);
	CHECK_EQ(pthread_create(&th, NULL, retag_loop, NULL), 0);
	for (int i = 0; i < FORKS; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			alarm(30);
			if (region_protect(p, PROT_NONE) != 0)
				_exit(1);
			poke(p + size - 1, 7);
			_exit(peek(p + size - 1) == 7 && grants == 1 ? 0 : 2);
		}
		CHECK(pid > 0);
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st));
		CHECK_EQ(WEXITSTATUS(st), 0);
	}
	atomic_store(&retagging, 0);
	pthread_join(th, NULL);
}

/* The fault's address as hardware gives it (no tag bits) and as qemu-user
 * does (with them): the same region, the address as the program used it,
 * the grant. Faults that are not a tag check, or outside the arena, are
 * not rtl's. Handed to the trap path directly: the kernel decides the
 * form. */
TEST(fault_address_with_or_without_its_tag)
{
	char *p;
	siginfo_t si;
	ucontext_t uc;
	struct region_info info;

	if (!tags())
		return;
	p = region_alloc_tagged(32, NULL, 0);
	CHECK(p != NULL);
	CHECK_EQ(region_handler(p, grant_rw), 0);
	CHECK_EQ(getcontext(&uc), 0);
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGSEGV;
	si.si_code = SEGV_MTESERR;

	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	si.si_addr = (void *)rtl_mte_untag((uintptr_t)(p + 17));
	CHECK_EQ(rtl_tag_fault(&si, &uc), 0);
	CHECK_EQ(grants, 1);
	CHECK(atomic_load(&last_addr) == p + 17); /* its tag put back */
	CHECK(atomic_load(&last_base) == p);
	CHECK_EQ(region_find(p, &info), 0);
	CHECK_EQ(info.prot, RW);

	CHECK_EQ(region_protect(p, PROT_NONE), 0);
	si.si_addr = p + 5;
	CHECK_EQ(rtl_tag_fault(&si, &uc), 0);
	CHECK_EQ(grants, 2);
	CHECK(atomic_load(&last_addr) == p + 5);

	si.si_code = SEGV_ACCERR;
	CHECK_EQ(rtl_tag_fault(&si, &uc), -1);
	si.si_code = SEGV_MTESERR;
	si.si_addr = &si; /* not in the arena */
	CHECK_EQ(rtl_tag_fault(&si, &uc), -1);
	CHECK_EQ(grants, 2);
}

static pthread_barrier_t ready, made;
static char *volatile early_region;

static void *early(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&made);
	if (early_region) /* tags: protected, must trap here too */
		poke(early_region + 3, 9);
	return NULL;
}

/* A thread started before the program's first rtl call checks tags too:
 * librtl turned the checks on when it was loaded, and threads inherit
 * them. */
TEST(a_thread_started_before_rtl_checks_tags)
{
	pthread_t t;

	CHECK_EQ(pthread_barrier_init(&ready, NULL, 2), 0);
	CHECK_EQ(pthread_barrier_init(&made, NULL, 2), 0);
	CHECK_EQ(pthread_create(&t, NULL, early, NULL), 0);
	pthread_barrier_wait(&ready);
	if (!tags()) {
		pthread_barrier_wait(&made);
		pthread_join(t, NULL);
		return;
	}
	early_region = region_alloc_tagged(16, NULL, 0);
	CHECK(early_region != NULL);
	CHECK_EQ(region_handler(early_region, grant_rw), 0);
	CHECK_EQ(region_protect(early_region, PROT_NONE), 0);
	pthread_barrier_wait(&made);
	pthread_join(t, NULL);
	CHECK_EQ(grants, 1);
	CHECK_EQ(peek(early_region + 3), 9);
}
