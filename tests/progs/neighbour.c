/* A stripped program (built -rdynamic -s: only exported functions have a
 * symbol) whose allocations come from a static function laid out right
 * after an exported one. The nearest symbol below the call site is the
 * exported function, which does not cover it: an honest symboliser names
 * the site neighbour!+0xOFF, never exported_before+0x... (policy_engine.bats).
 * neighbour N: N allocations of 100 bytes, each written; prints their sum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int exported_before(int x)
{
	return x * 3 + 1;
}

static __attribute__((noinline)) char *hidden_alloc(size_t n, int v)
{
	char *p = malloc(n);

	if (p)
		memset(p, v, n);
	return p; /* not a tail call: the site is hidden_alloc */
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long sum = 0;

	for (int i = 0; i < n; i++) {
		char *p = hidden_alloc(100, exported_before(i) & 0x7f);

		if (!p)
			return 1;
		sum += p[99];
		free(p);
	}
	printf("%ld\n", sum);
	return 0;
}
