/* Where the decoder reads code from: a buffer (tests, fuzzing) or this
 * process's memory, only from pages checked readable. Runs in the trap
 * handler: process_vm_readv answers EFAULT instead of faulting. */
#include <sys/uio.h>
#include <unistd.h>

#include "decoder/backend.h"

uint64_t rtl_code_page = 4096;

void rtl_code_init(void)
{
	long p = sysconf(_SC_PAGESIZE);

	if (p > 0)
		rtl_code_page = (uint64_t)p;
}

static int page_readable(struct rtl_code *c, uint64_t page)
{
	char byte;
	struct iovec local = { &byte, 1 }, remote = { (void *)page, 1 };

	for (int i = 0; i < c->nreadable; i++)
		if (c->readable[i] == page)
			return 1;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1)
		return 0;
	c->readable[c->nreadable++ % 4] = page;
	if (c->nreadable > 4)
		c->nreadable = 4;
	return 1;
}

int rtl_code_at(struct rtl_code *c, uint64_t a, const uint8_t **p, size_t *n)
{
	uint64_t page = a & ~(rtl_code_page - 1), room;

	if (c->buf) {
		if (a - c->pc >= c->len)
			return -1;
		*p = c->buf + (a - c->pc);
		room = c->len - (a - c->pc);
		*n = room < RTL_INSN_MAX_BYTES ? room : RTL_INSN_MAX_BYTES;
		return 0;
	}
	if (!page_readable(c, page))
		return -1;
	*p = (const uint8_t *)a;
	room = page + rtl_code_page - a;
	if (room < RTL_INSN_MAX_BYTES && page_readable(c, page + rtl_code_page))
		room = RTL_INSN_MAX_BYTES;
	*n = room < RTL_INSN_MAX_BYTES ? room : RTL_INSN_MAX_BYTES;
	return 0;
}
