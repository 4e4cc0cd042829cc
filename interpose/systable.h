/* What each system call does with user memory, for the SIGSYS handler
 * (sigsys.c): generated from the kernel's own prototypes by
 * scripts/gen-systable.py into systable_<arch>.c. */
#ifndef RTL_SYSTABLE_H
#define RTL_SYSTABLE_H

#include <stdint.h>

#define RTL_NSYSCALLS 512
#define RTL_SC_UNKNOWN 7 /* no prototype: every argument may be a pointer */

/* Arguments that lead to more pointers. */
enum {
	RTL_NEST_NONE,
	RTL_NEST_IOV,  /* struct iovec[count]: count is the next argument */
	RTL_NEST_MSG,  /* struct msghdr: name, iov, control */
	RTL_NEST_MMSG, /* struct mmsghdr[count] */
	RTL_NEST_STRV, /* char *[]: NULL-terminated, each a string */
};

struct rtl_syscall {
	const char *name; /* NULL: no such call */
	uint8_t nargs;    /* RTL_SC_UNKNOWN: not known */
	uint8_t ptr;      /* bit i: argument i is a user pointer */
	uint8_t write;    /* bit i: the kernel may write through it */
	uint8_t nest[6];  /* RTL_NEST_* per argument */
	uint8_t len[6];   /* argument (plus one) holding its length, or 0 */
};

extern const struct rtl_syscall rtl_systable[RTL_NSYSCALLS];

#endif
