/* Report reading: JSON by jansson, then the checks that let every reader
 * index fields without crashing. Malformed input is an error with a reason. */
#include "tools/report/report_read.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static json_t *check(json_t *r, const char *name, char *why, size_t len)
{
	static const char *const objects[] = { "run", "totals" };
	static const char *const arrays[] = { "rules", "sites", "top_regions",
		                              "epochs", "events", "backtraces",
		                              "processes", "notes" }; /* notes last */
	const size_t notes = sizeof(arrays) / sizeof(arrays[0]) - 1;
	json_t *v;

	if (!json_is_object(r) || !json_is_integer(v = json_object_get(r, "rtl_report")) ||
	    json_integer_value(v) != 1) {
		snprintf(why, len, "%s: not an rtl report (no \"rtl_report\": 1)", name);
		goto bad;
	}
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		if (!json_is_object(json_object_get(r, objects[i]))) {
			snprintf(why, len, "%s: \"%s\" is missing or not an object", name,
			         objects[i]);
			goto bad;
		}
	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		json_t *a = json_object_get(r, arrays[i]), *e;
		size_t k;
		if (!a)
			continue;
		if (!json_is_array(a)) {
			snprintf(why, len, "%s: \"%s\" is not an array", name, arrays[i]);
			goto bad;
		}
		json_array_foreach(a, k, e) if (!json_is_object(e) && !(i == notes && json_is_string(e)))
		{
			snprintf(why, len, "%s: \"%s\"[%zu] is not an %s", name,
			         arrays[i], k, i == notes ? "object or string" : "object");
			goto bad;
		}
	}
	if ((v = json_object_get(r, "timeline")) &&
	    (!json_is_object(v) || !json_is_array(json_object_get(v, "rules")))) {
		snprintf(why, len, "%s: \"timeline\" is not an object with a \"rules\" array",
		         name);
		goto bad;
	}
	return r;
bad:
	json_decref(r);
	return NULL;
}

json_t *rtl_report_load(const char *path, char *why, size_t len)
{
	json_error_t err;
	json_t *r = json_load_file(path, JSON_REJECT_DUPLICATES, &err);

	if (!r) {
		snprintf(why, len, "%s:%d: %s", path, err.line, err.text);
		return NULL;
	}
	return check(r, path, why, len);
}

json_t *rtl_report_parse(const char *data, size_t size, const char *name,
                         char *why, size_t len)
{
	json_error_t err;
	json_t *r = json_loadb(data, size, JSON_REJECT_DUPLICATES, &err);

	if (!r) {
		snprintf(why, len, "%s:%d: %s", name, err.line, err.text);
		return NULL;
	}
	return check(r, name, why, len);
}

json_int_t report_num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

const char *report_str(json_t *obj, const char *key, const char *dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

json_int_t report_sat_add(json_int_t a, json_int_t b)
{
	json_int_t s;

	if (!__builtin_add_overflow(a, b, &s))
		return s;
	return b > 0 ? LLONG_MAX : LLONG_MIN;
}

json_int_t report_traps(json_t *e)
{
	return report_sat_add(report_num(e, "read_traps"),
	                      report_num(e, "write_traps"));
}

static int most_traps_first(const void *a, const void *b)
{
	json_int_t x = report_traps(*(json_t *const *)a),
	           y = report_traps(*(json_t *const *)b);

	return x < y ? 1 : x > y ? -1
	                         : 0;
}

json_t **report_by_traps(json_t *r, const char *key, size_t *n)
{
	json_t *array = json_object_get(r, key), *e, **sorted;
	size_t i;

	*n = json_array_size(array);
	if (!*n || !(sorted = calloc(*n, sizeof(*sorted)))) {
		*n = 0;
		return NULL;
	}
	json_array_foreach(array, i, e)
	        sorted[i] = e;
	qsort(sorted, *n, sizeof(*sorted), most_traps_first);
	return sorted;
}
