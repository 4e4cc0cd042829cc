/* What capstone.c (Capstone handles, arenas, the cache) asks of the one
 * architecture backend built in (x86_64.c or aarch64.c), and where every
 * backend reads code from. Internal to decoder/; runs in the trap handler
 * like the rest of the decoder (no malloc, no locks). */
#ifndef RTL_DECODER_BACKEND_H
#define RTL_DECODER_BACKEND_H

#include <capstone/capstone.h>

#include "decoder/cs.h"

#include "decoder/decoder.h"

/* Code to decode from: a buffer at a given address, or (buf NULL) this
 * process's own memory, read only where it is known to be readable. */
struct rtl_code {
	const uint8_t *buf;
	size_t len;
	uint64_t pc;          /* address of buf[0] */
	uint64_t readable[4]; /* pages checked readable (process memory) */
	int nreadable;
};

/* The page size, read once by rtl_code_init (sysconf is not
 * async-signal-safe). */
extern uint64_t rtl_code_page;
void rtl_code_init(void);

/* Point *p at up to RTL_INSN_MAX_BYTES bytes of code at a; *n how many may
 * be read. -1 if none can (code.c). */
int rtl_code_at(struct rtl_code *c, uint64_t a, const uint8_t **p, size_t *n);

/* Open a Capstone handle for this architecture, detail on. 0 or -1. */
int rtl_backend_open(csh *h);

/* Decode one instruction of each kind whose tables Capstone builds on
 * first use, so that this happens at start, not in a signal handler. */
void rtl_backend_warmup(csh h, cs_insn *ci);

/* Decode the instruction at pc from code into out, then look ahead (ci is
 * the slot's buffer). 0, or -1 if it cannot be decoded. */
int rtl_backend_decode(csh h, cs_insn *ci, struct rtl_code *code, uint64_t pc,
                       struct rtl_insn *out);

#endif
