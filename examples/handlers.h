/* The paper's Table 3, the two handlers side by side: the page handler
 * (mprotect the faulting page; fault.h tells a write) and the region
 * handler (region_protect the faulting region). Same shape, different
 * reach. Each counts its traps in traps, which the program defines. */
#ifndef EXAMPLES_HANDLERS_H
#define EXAMPLES_HANDLERS_H

#include <rtl/region.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "examples/fault.h"

extern volatile int traps;

/* Table 3, left column. */
static void page_handler(int sig, siginfo_t *si, void *ucv)
{
	long page = sysconf(_SC_PAGESIZE);
	char *addr = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(page - 1));

	(void)sig;
	traps++;
	if (fault_was_write(ucv, si->si_addr))
		mprotect(addr, (size_t)page, PROT_READ | PROT_WRITE);
	else
		mprotect(addr, (size_t)page, PROT_READ);
}

/* Table 3, right column. */
void reg_handler(rtl_trap_t *t)
{
	traps++;
	if (t->write)
		region_protect(t->addr, PROT_READ | PROT_WRITE);
	else
		region_protect(t->addr, PROT_READ);
}

#endif
