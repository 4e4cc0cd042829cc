/* The preload demo's target: an ordinary program, built without rtl, that
 * allocates a table of 56-byte records (the built-in policy's 48..64 size
 * class), fills them, updates a few later through the table, and prints a
 * checksum. Under `rtlctl run` with the built-in policy each record is a
 * read-only region: its first write (the fill) traps, is counted and
 * granted; the table still holds the pointers malloc returned, so each
 * later update through it is a stale trap, healed by swizzling alone.
 * Usage: objects [RECORDS [UPDATES]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record {
	long id;
	long value;
	char name[32];
	struct record *next;
}; /* 56 bytes */

__attribute__((noinline)) struct record *new_record(void)
{
	struct record *r = malloc(sizeof(*r));

	if (!r)
		exit(1);
	return r;
}

__attribute__((noinline)) void fill_record(struct record *r, long id,
                                           struct record *next)
{
	r->id = id;
	r->value = id * 7 + 3;
	snprintf(r->name, sizeof(r->name), "record-%ld", id);
	r->next = next;
}

__attribute__((noinline)) char *make_label(long id)
{
	char *s = malloc(24); /* outside the size class: not a region */

	if (!s)
		exit(1);
	snprintf(s, 24, "label %ld", id);
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4000;
	long updates = argc > 2 ? atol(argv[2]) : 200;
	struct record **all = malloc((size_t)n * sizeof(*all)), *list = NULL;
	unsigned long sum = 0;
	long labels = 0;

	if (!all || n < 1 || updates < 0 || updates > n)
		return 2;
	for (long i = 0; i < n; i++)
		all[i] = new_record();
	for (long i = 0; i < n; i++) {
		fill_record(all[i], i, list);
		list = all[i];
	}
	for (long i = 0; i < n; i += 10) {
		char *label = make_label(i);
		labels += (long)strlen(label);
		free(label);
	}
	/* Update a few records, spread over the table. */
	for (long k = 0; k < updates; k++)
		all[k * (n / (updates ? updates : 1))]->value += 1000;
	for (struct record *r = list; r; r = r->next)
		sum = sum * 31 + (unsigned long)r->value + strlen(r->name);
	printf("%ld records, %ld updated, %ld label bytes, checksum %lu\n", n,
	       updates, labels, sum);
	for (long i = 0; i < n; i++)
		free(all[i]);
	free(all);
	return 0;
}
