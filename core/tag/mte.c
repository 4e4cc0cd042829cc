/* Whether the machine has memory tagging, asked once: the CPU and kernel
 * (HWCAP2_MTE), the thread's tag-check mode (prctl), a PROT_MTE mapping.
 * The answer and its sentence are what region_tag_backend, the report and
 * rtlctl check give. */
#include "core/tag/mte.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#ifndef PR_SET_TAGGED_ADDR_CTRL
#define PR_SET_TAGGED_ADDR_CTRL 55
#define PR_GET_TAGGED_ADDR_CTRL 56
#define PR_TAGGED_ADDR_ENABLE (1UL << 0)
#endif
#ifndef PR_MTE_TCF_SYNC
#define PR_MTE_TCF_SYNC (1UL << 1)
#define PR_MTE_TCF_ASYNC (1UL << 2)
#define PR_MTE_TAG_SHIFT 3
#endif
#ifndef PROT_MTE
#define PROT_MTE 0x20
#endif
#ifndef HWCAP2_MTE
#define HWCAP2_MTE (1UL << 18)
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int have;
static char why_buf[160];

/* Synchronous checks (the fault names the access, before it happens), and
 * tags 1..15 for IRG should anyone ask (rtl picks its own). */
#define CTRL (PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC | 0xfffeUL << PR_MTE_TAG_SHIFT)

int rtl_mte_thread_enable(void)
{
	return prctl(PR_SET_TAGGED_ADDR_CTRL, CTRL, 0, 0, 0) < 0 ? -1 : 0;
}

int rtl_mte_thread_checks(void)
{
	int ctrl = prctl(PR_GET_TAGGED_ADDR_CTRL, 0, 0, 0, 0);

	return ctrl >= 0 && (ctrl & PR_MTE_TCF_SYNC);
}

static void say(const char *fmt, const char *arg)
{
	snprintf(why_buf, sizeof(why_buf), fmt, arg);
}

static void probe(void)
{
	const char *env = secure_getenv("RTL_TAG");

	if (env && strcmp(env, "off") == 0) {
		say("the environment variable RTL_TAG=off chose the views%s", "");
		return;
	}
#if !defined(__aarch64__)
	say("memory tagging is aarch64's (MTE); this machine is %s", "x86-64");
	return;
#else
	void *m;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE)) {
		say("the CPU or the kernel has no memory tagging (HWCAP2_MTE)%s", "");
		return;
	}
	if (rtl_mte_thread_enable() < 0) {
		say("the kernel refused synchronous tag checks "
		    "(PR_SET_TAGGED_ADDR_CTRL): %s",
		    strerror(errno));
		return;
	}
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_MTE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		say("the kernel refused a PROT_MTE mapping: %s", strerror(errno));
		return;
	}
	munmap(m, 4096);
	have = 1;
	say("memory tagging (MTE): 16-byte granules, synchronous checks, "
	    "none and read-write%s",
	    "");
#endif
}

#if defined(__aarch64__)
/* Tag checks from the process's start, where the machine has MTE: the
 * mode is a thread's own, and threads inherit it, so set in the first
 * thread before the program starts others it reaches every thread; a
 * thread running before (librtl loaded by dlopen) would never check the
 * tags of a region it touches. Unchecked memory is unaffected; a mode the
 * program chose itself is kept. */
__attribute__((constructor)) static void checks_from_start(void)
{
	const char *env = secure_getenv("RTL_TAG");
	int ctrl;

	if ((env && strcmp(env, "off") == 0) || !(getauxval(AT_HWCAP2) & HWCAP2_MTE))
		return;
	ctrl = prctl(PR_GET_TAGGED_ADDR_CTRL, 0, 0, 0, 0);
	if (ctrl >= 0 && !(ctrl & (PR_MTE_TCF_SYNC | PR_MTE_TCF_ASYNC)))
		rtl_mte_thread_enable();
}
#endif

int rtl_mte_probe(const char **why)
{
	pthread_once(&once, probe);
	if (why)
		*why = why_buf;
	return have;
}
