/* fork: parent and child each see only their own writes to regions, and
 * traps keep working on both sides. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util/lock.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

TEST(fork_isolation_both_ways)
{
	char *x = region_alloc(10000, &x);
	int to_child[2], to_parent[2];
	char c;
	pid_t pid;

	CHECK(x != NULL);
	memset(x, 'p', 10000);
	CHECK_EQ(pipe(to_child), 0);
	CHECK_EQ(pipe(to_parent), 0);
	pid = fork();
	if (pid == 0) {
		/* Child: sees the parent's data as of fork, writes its own. */
		if (x[9999] != 'p')
			_exit(10);
		memset(x, 'c', 10000);
		if (write(to_parent[1], "w", 1) != 1)
			_exit(11);
		if (read(to_child[0], &c, 1) != 1)
			_exit(12);
		/* The parent wrote 'P' meanwhile: not visible here. */
		_exit(x[0] == 'c' && x[9999] == 'c' ? 0 : 13);
	}
	CHECK_EQ(read(to_parent[0], &c, 1), 1);
	CHECK_EQ(x[0], 'p'); /* the child's writes are not ours */
	memset(x, 'P', 10000);
	CHECK_EQ(write(to_child[1], "w", 1), 1);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK_EQ(x[5000], 'P');
}

TEST(traps_work_in_child_and_parent)
{
	char *x = region_alloc(64, &x);
	pid_t pid;
	int st;

	CHECK(x != NULL);
	region_handler(NULL, grant_handler);
	region_protect(x, PROT_NONE);
	pid = fork();
	if (pid == 0) {
		poke(x, 5);
		_exit(h_calls == 1 && x[0] == 5 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(h_calls, 0);
	CHECK_EQ(peek(x), 0); /* the child's 5 stayed in the child */
	CHECK_EQ(h_calls, 1);
	/* The child could define regions of its own afterwards. */
	pid = fork();
	if (pid == 0) {
		char *y = region_alloc(100, &y);
		_exit(y && region_free(y) == 0 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The parent writing right after fork returns must not reach the child's
 * copy: the child copies 32 MB of populated views while the parent would
 * already be writing the last byte, unless the parent waits for the copy. */
TEST(parent_writes_after_fork_stay_out_of_child)
{
	size_t n = 32u << 20;
	char *x = region_alloc(n, &x);
	pid_t pid;
	int st;

	CHECK(x != NULL);
	memset(x, 'p', n);
	pid = fork();
	if (pid == 0) {
		usleep(100000);
		_exit(x[n - 1] == 'p' && x[0] == 'p' ? 0 : 1);
	}
	x[n - 1] = 'P';
	x[0] = 'P';
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* Spin locks another thread holds, from before a fork until told. */
struct holder {
	struct rtl_lock a, b;
	pthread_barrier_t taken, done;
	pthread_t th;
};

static void *hold(void *arg)
{
	struct holder *h = arg;

	CHECK_EQ(rtl_lock_acquire(&h->a), 0);
	CHECK_EQ(rtl_lock_acquire(&h->b), 0);
	pthread_barrier_wait(&h->taken);
	pthread_barrier_wait(&h->done);
	rtl_lock_release(&h->b);
	rtl_lock_release(&h->a);
	return NULL;
}

static void hold_start(struct holder *h)
{
	*h = (struct holder){ .a = RTL_LOCK_INIT, .b = RTL_LOCK_INIT };
	CHECK_EQ(pthread_barrier_init(&h->taken, NULL, 2), 0);
	CHECK_EQ(pthread_barrier_init(&h->done, NULL, 2), 0);
	CHECK_EQ(pthread_create(&h->th, NULL, hold, h), 0);
	pthread_barrier_wait(&h->taken);
}

static void hold_end(struct holder *h)
{
	pthread_barrier_wait(&h->done);
	pthread_join(h->th, NULL);
}

/* In a child: both of h's locks are free to take (their holder did not
 * come along), once each. 0, or what failed. */
static int taken_over(struct holder *h)
{
	if (rtl_lock_try(&h->a) != 0)
		return 1;
	if (rtl_lock_acquire(&h->b) != 0) /* spins until the alarm if held */
		return 2;
	if (rtl_lock_try(&h->a) == 0 || errno != EDEADLK)
		return 3;
	rtl_lock_release(&h->a);
	rtl_lock_release(&h->b);
	return 0;
}

static int wait_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

/* A spin lock another thread held at a fork is held in the child by a
 * thread that is not there: the child takes it over, in a grandchild too.
 * The forking thread's own stays its own (re-entry refused), and the
 * parent's other thread keeps its locks. */
TEST(locks_of_threads_that_did_not_come_along_are_free)
{
	static struct rtl_lock mine = RTL_LOCK_INIT;
	struct holder h;
	pid_t pid;

	hold_start(&h);
	CHECK_EQ(rtl_lock_acquire(&mine), 0);
	pid = fork();
	if (pid == 0) {
		struct holder h2;
		pid_t pid2;
		int rc;

		alarm(30);
		if (rtl_lock_acquire(&mine) == 0 || errno != EDEADLK)
			_exit(10);
		if ((rc = taken_over(&h)) != 0)
			_exit(rc);
		hold_start(&h2);
		pid2 = fork();
		if (pid2 == 0)
			_exit(taken_over(&h2) + 20 * (taken_over(&h) != 0));
		rc = wait_ok(pid2);
		hold_end(&h2);
		_exit(rc ? 40 + rc : 0);
	}
	CHECK(pid > 0);
	CHECK_EQ(wait_ok(pid), 0);
	CHECK_EQ(rtl_lock_try(&h.a), -1);
	CHECK_EQ(errno, EBUSY);
	rtl_lock_release(&mine);
	hold_end(&h);
}
