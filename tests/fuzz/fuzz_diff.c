/* Fuzz target: region_diff_apply on arbitrary bytes, against a tracked
 * region of a size the input picks. Accepted or refused, the call must not
 * crash; refused, it must leave the region exactly as it was. */
#include <stdlib.h>
#include <string.h>

#include <rtl/region.h>
#include "tests/fuzz/fuzz.h"

#define MAX_REGION 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *r[3], before[MAX_REGION];
	static const size_t sizes[3] = { 1, 100, MAX_REGION };
	size_t which;

	if (!r[0])
		for (int i = 0; i < 3; i++) {
			r[i] = region_alloc(sizes[i], &r[i]);
			if (!r[i] || region_track(r[i], 1) < 0)
				abort();
		}
	if (size == 0)
		return 0;
	which = data[0] % 3; /* first byte: which region; the rest: the diff */
	memcpy(before, r[which], sizes[which]);
	if (region_diff_apply(r[which], data + 1, size - 1) < 0 &&
	    memcmp(before, r[which], sizes[which]) != 0)
		abort(); /* refused, yet changed */
	return 0;
}
