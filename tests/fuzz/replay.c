/* Runs a fuzz target over files given on the command line, once each: the
 * corpus as a regression test without a fuzzing engine. Prints TAP. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"

int main(int argc, char **argv)
{
	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;

		if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0) {
			printf("not ok %d - %s # cannot read\n", i, argv[i]);
			continue;
		}
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			printf("not ok %d - %s # cannot read\n", i, argv[i]);
			fclose(f);
			free(buf);
			continue;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
		printf("ok %d - %s\n", i, argv[i]);
		fflush(stdout);
	}
	return 0;
}
