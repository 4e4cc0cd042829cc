/* Short names for tables: a C++ name's template arguments run to hundreds
 * of characters (std::vector<std::__cxx11::basic_string<...>>::...), and a
 * table needs the function; the JSON report, the CSV, the collapsed stacks
 * and the trace keep the whole name. */
#include "tools/report/report_names.h"

#include "tools/interpret/demangle.h"
#include "tools/util/text.h"

static void shorten(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	char buf[RTL_NAME_SHOWN_MAX];

	if (json_is_string(v))
		json_object_set_new(o, key,
		                    rtl_json_text(rtl_short_name(json_string_value(v), buf,
		                                                 sizeof(buf))));
}

static void shorten_all(json_t *names)
{
	json_t *f;
	size_t k;

	json_array_foreach(names, k, f) if (json_is_string(f))
	{
		char buf[RTL_NAME_SHOWN_MAX];

		json_array_set_new(names, k,
		                   rtl_json_text(rtl_short_name(json_string_value(f), buf,
		                                                sizeof(buf))));
	}
}

void report_shorten_names(json_t *r)
{
	static const char *const lists[] = { "sites", "top_regions" };
	json_t *e;
	size_t i, k;

	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++)
		json_array_foreach(json_object_get(r, lists[l]), i, e) shorten(e, "demangled");
	json_array_foreach(json_object_get(r, "backtraces"), i, e)
	{
		json_t *names = json_object_get(e, "demangled"), *in;

		shorten_all(names);
		json_array_foreach(json_object_get(e, "inlined"), k, in) shorten_all(in);
	}
}
