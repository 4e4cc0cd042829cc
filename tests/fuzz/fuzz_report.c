/* Fuzz target: the report reader of `rtlctl report`, then its printers on
 * what the reader accepts. A report anyone may craft must print without a
 * crash, an overflow (UBSan) or a control character other than the line
 * ends the tables are made of. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "tools/report/report_print.h"
#include "tools/report/report_read.h"

static void check_printable(const char *text, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if ((c < 0x20 && c != '\n') || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)text[i + 1] >= 0x80 &&
		     (unsigned char)text[i + 1] <= 0x9f))
			abort(); /* a control character reached the terminal */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256], *text = NULL;
	size_t n = 0;
	json_t *r = rtl_report_parse((const char *)data, size, "fuzz.json", why,
	                             sizeof(why));
	FILE *out;

	if (!r)
		return 0;
	out = open_memstream(&text, &n);
	if (out) {
		report_print_summary(r, out);
		report_print_tables(r, out);
		fclose(out);
		check_printable(text, n);
		free(text);
	}
	json_decref(r);
	return 0;
}
