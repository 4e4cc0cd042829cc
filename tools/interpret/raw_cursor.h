/* A cursor over one record's payload of the raw record (raw_read.c,
 * raw_events.c): every field read checked against the record's end. */
#ifndef RTL_RAW_CURSOR_H
#define RTL_RAW_CURSOR_H

#include <stdint.h>
#include <string.h>

struct cur {
	const unsigned char *p, *end;
	int bad;
};

static inline uint64_t u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static inline uint32_t u32(struct cur *c)
{
	uint32_t v = 0;

	if (c->end - c->p < 4) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

#endif
