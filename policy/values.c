/* Values of policy keys: sizes, durations, ranges, action lists, words.
 * Pure functions of a string; no state. */
#include "policy/values.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

static int parse_scaled(const char *s, uint64_t *out, const char *const *units,
                        const uint64_t *scale, int nunits)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	while (*end == ' ')
		end++;
	for (int i = 0; i < nunits; i++) {
		if (strcasecmp(end, units[i]) == 0) {
			if (scale[i] && v > UINT64_MAX / scale[i])
				return -1;
			*out = v * scale[i];
			return 0;
		}
	}
	return -1;
}

int rtl_policy_parse_size(const char *s, size_t *out)
{
	static const char *const units[] = { "", "B", "K", "KB", "KiB", "M",
		                             "MB", "MiB", "G", "GB", "GiB" };
	static const uint64_t scale[] = { 1, 1, 1ull << 10, 1ull << 10, 1ull << 10,
		                          1ull << 20, 1ull << 20, 1ull << 20,
		                          1ull << 30, 1ull << 30, 1ull << 30 };
	uint64_t v;
	if (parse_scaled(s, &v, units, scale, 11) < 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

int rtl_policy_parse_duration(const char *s, uint64_t *ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	static const uint64_t scale[] = { 1, 1000, 1000000, 1000000000 };
	return parse_scaled(s, ns, units, scale, 4);
}

/* "A..B", "A..", "..B" or "A". */
int rtl_policy_parse_range(const char *v, size_t *lo, size_t *hi)
{
	const char *dots = strstr(v, "..");
	char left[64];

	if (!dots)
		return rtl_policy_parse_size(v, lo) < 0 ? -1 : (*hi = *lo, 0);
	if ((size_t)(dots - v) >= sizeof(left))
		return -1;
	memcpy(left, v, (size_t)(dots - v));
	left[dots - v] = '\0';
	*lo = 0;
	*hi = SIZE_MAX;
	if (left[0] && rtl_policy_parse_size(left, lo) < 0)
		return -1;
	if (dots[2] && rtl_policy_parse_size(dots + 2, hi) < 0)
		return -1;
	return left[0] || dots[2] ? 0 : -1;
}

static const struct {
	const char *name;
	unsigned bit;
} actions[] = {
	{ "count", RTL_ACT_COUNT },
	{ "log", RTL_ACT_LOG },
	{ "backtrace", RTL_ACT_BACKTRACE },
	{ "grant-read", RTL_ACT_GRANT_READ },
	{ "grant-rw", RTL_ACT_GRANT_RW },
	{ "dirty", RTL_ACT_DIRTY },
	{ "abort", RTL_ACT_ABORT },
};

/* A comma list of actions; the first unknown word goes to *bad. */
int rtl_policy_parse_actions(const char *v, unsigned *out, char *bad, size_t badlen)
{
	unsigned set = 0;

	while (*v) {
		const char *end = strchr(v, ',');
		size_t n = end ? (size_t)(end - v) : strlen(v);
		size_t i, k;

		while (n && isspace((unsigned char)*v))
			v++, n--;
		while (n && isspace((unsigned char)v[n - 1]))
			n--;
		for (k = 0; k < sizeof(actions) / sizeof(actions[0]); k++)
			if (strlen(actions[k].name) == n &&
			    strncmp(actions[k].name, v, n) == 0)
				break;
		if (k == sizeof(actions) / sizeof(actions[0])) {
			i = n < badlen - 1 ? n : badlen - 1;
			memcpy(bad, v, i);
			bad[i] = '\0';
			return -1;
		}
		set |= actions[k].bit;
		if (!end)
			break;
		v = end + 1;
	}
	if (!set) {
		bad[0] = '\0';
		return -1;
	}
	*out = set;
	return 0;
}

int rtl_policy_parse_word(const char *v, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v, words[i]) == 0)
			return i;
	return -1;
}

const char *const rtl_policy_mechanisms[] = { "swizzle", "alias", "auto",
	                                      "page", "tag" };
const char *const rtl_policy_protects[] = { "none", "read", "rw" };
const int rtl_policy_protect_values[] = { PROT_NONE, PROT_READ,
	                                  PROT_READ | PROT_WRITE };
