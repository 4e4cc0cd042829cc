/* Two regions that revoke each other (source and destination), between two
 * live neighbours, for the checks that copy and compare across them. The
 * handler grants the region touched and revokes the other: traps land in
 * the middle of loops, as in a DSM. Uses the public API only. */
#ifndef RTL_SELFTEST_PAIR_H
#define RTL_SELFTEST_PAIR_H

#include <stddef.h>

struct st_report;

/* How the four regions lie: sizes one byte under their span (the
 * neighbour's bytes begin right after a one-past-end) or with padding;
 * source first or destination first. */
struct st_layout {
	size_t size;
	int dst_first;
};

extern const struct st_layout st_layouts[];
extern const int st_nlayouts;

/* Allocate nb0, source, destination, nb1 back to back; the neighbours are
 * PROT_NONE with a handler that counts (nothing touches them). -1 if
 * region_alloc failed: then said in r, and nothing is left. */
int st_pair_setup(const struct st_layout *l, struct st_report *r);
void st_pair_teardown(void);

/* The source and destination as their bound pointers hold them now. */
char *st_src(void);
char *st_dst(void);

/* Copy o0 into the source and o1 into the destination ([0, len)), then
 * revoke both. */
void st_pair_load(const char *o0, const char *o1, size_t len);

/* After the call: which of source and destination differ from o0 and o1
 * over [0, len): NULL if neither, else "source" or "destination". */
const char *st_pair_differs(const char *o0, const char *o1, size_t len);

/* Traps on the neighbours since setup, and whether their bytes are as
 * setup left them. */
int st_pair_neighbour_traps(void);
const char *st_pair_neighbour_trap(void); /* the first, in words, or NULL */
int st_pair_neighbours_intact(void);

#endif
