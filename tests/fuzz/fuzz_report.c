/* Fuzz target: the report reader of `rtlctl report`. */
#include "fuzz.h"
#include "report_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	json_t *r = rtl_report_parse((const char *)data, size, "fuzz.json", why,
	                             sizeof(why));
	json_decref(r);
	return 0;
}
