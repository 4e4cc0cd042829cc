/* Parsing the values of policy keys (values.c), shared by the parser. The
 * public ones (sizes, durations) are declared in policy.h. */
#ifndef RTL_POLICY_VALUES_H
#define RTL_POLICY_VALUES_H

#include <stddef.h>

#include "policy/policy.h"

/* "A..B", "A..", "..B" or "A", both ends included; -1 if malformed. */
int rtl_policy_parse_range(const char *v, size_t *lo, size_t *hi);

/* A comma list of actions into a bit set; on error -1, and the first
 * unknown word in bad ("" if the list was empty). */
int rtl_policy_parse_actions(const char *v, unsigned *out, char *bad,
                             size_t badlen);

/* Index of v in words[0..n), or -1. */
int rtl_policy_parse_word(const char *v, const char *const *words, int n);

extern const char *const rtl_policy_mechanisms[RTL_MECH_COUNT]; /* enum order */
extern const char *const rtl_policy_protects[3];                /* none, read, rw */
extern const int rtl_policy_protect_values[3];

#endif
