/* The paper's Table 6: red-black successive over-relaxation with each row of
 * the red and the black matrix a region, as the DSM case study wrote it (the
 * only change from the page-based program: Tmk_malloc became region_alloc).
 *
 * Every row is tracked (region_track): at each iteration's start it is
 * read-only, so the first write to a row traps once, whatever the row's size;
 * the handler records the row and makes it writable. At the iteration's end
 * region_dirty lists the rows written, region_diff says how many bytes
 * really changed (what a DSM would send), and region_checkpoint re-arms
 * them. This process computes rows begin..end, like one DSM node: rows it
 * only reads (its neighbours') never trap. The top edge is hot (1.0), the
 * rest starts cold, so the changed rows show the heat moving down. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rtl/region.h>

#define M 12                   /* interior rows per colour: 1..M */
#define N 2048                 /* floats per row */
#define NS (N * sizeof(float)) /* 8 KiB rows, as in the paper's Table 7 */
#define ITERATIONS 5
#define PAGE 4096

static float **red, **black;
static int begin = 1, end = 8; /* the rows this node computes */
static int trapped[2][M + 2];  /* [colour][row]: trapped this iteration */

/* Rows carry "colour * (M + 2) + row" as their user data. */
static void row_trap(rtl_trap_t *t)
{
	intptr_t id = (intptr_t)t->data;

	trapped[id / (M + 2)][id % (M + 2)] = 1;
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

/* Print rows as ranges: "1-3 5". */
static void print_rows(const int *rows)
{
	for (int j = 0; j <= M + 1; j++) {
		if (!rows[j])
			continue;
		int k = j;
		while (k + 1 <= M + 1 && rows[k + 1])
			k++;
		printf(k > j ? " %d-%d" : " %d", j, k);
		j = k;
	}
}

/* Which rows changed against their twins; adds up the bytes changed. */
static void changed_rows(float **rows, int *changed, size_t *bytes)
{
	static rtl_run_t runs[NS / 2]; /* the most a row can have */

	for (int j = 0; j <= M + 1; j++) {
		ssize_t n = region_diff(rows[j], runs, NS / 2);
		changed[j] = n > 0;
		for (ssize_t i = 0; i < n; i++)
			*bytes += runs[i].len;
	}
}

int main(void)
{
	void *dirty[2 * (M + 2)];
	int ever[2][M + 2] = { { 0 } };

	setvbuf(stdout, NULL, _IOLBF, 0);
	red = calloc(M + 2, sizeof(*red));
	black = calloc(M + 2, sizeof(*black));
	for (int i = 0; i < M + 2; i++) {
		red[i] = region_alloc(NS, &red[i]);
		black[i] = region_alloc(NS, &black[i]);
		if (!red[i] || !black[i])
			return 1;
		if (i == 0)
			for (int k = 0; k < N; k++)
				red[0][k] = black[0][k] = 1.0f; /* the hot edge */
		region_set_data(red[i], (void *)(intptr_t)i);
		region_set_data(black[i], (void *)(intptr_t)(M + 2 + i));
		region_handler(red[i], row_trap);
		region_handler(black[i], row_trap);
		region_track(red[i], 1); /* from now on: read-only until written */
		region_track(black[i], 1);
	}
	printf("red-black SOR: %d+2 rows of %zu bytes per colour, each a region;"
	       " this node computes rows %d-%d\n",
	       M, NS, begin, end);

	for (int it = 1; it <= ITERATIONS; it++) {
		int changed[2][M + 2], ntraps = 0;
		size_t bytes = 0, ndirty;

		/* Table 6, RT column: black from red, then red from black. */
		for (int j = begin; j <= end; j++)
			for (int k = 0; k < N - 1; k++)
				black[j][k] = (red[j - 1][k] + red[j + 1][k] + red[j][k] +
				               red[j][k + 1]) /
				              4.0f;
		for (int j = begin; j <= end; j++)
			for (int k = 1; k < N; k++)
				red[j][k] = (black[j - 1][k] + black[j + 1][k] +
				             black[j][k - 1] + black[j][k]) /
				            4.0f;

		for (int c = 0; c < 2; c++)
			for (int j = 0; j <= M + 1; j++) {
				ntraps += trapped[c][j];
				ever[c][j] |= trapped[c][j];
			}
		printf("iteration %d: write traps: red", it);
		print_rows(trapped[0]);
		printf(", black");
		print_rows(trapped[1]);
		printf(" (%d traps; 4 KiB pages would take %d)\n", ntraps,
		       ntraps * (int)(NS / PAGE));

		changed_rows(red, changed[0], &bytes);
		changed_rows(black, changed[1], &bytes);
		printf("             rows changed: red");
		print_rows(changed[0]);
		printf(", black");
		print_rows(changed[1]);
		printf(" (%zu bytes changed)\n", bytes);

		/* DIRTY agrees with the handler; then a new epoch for each. */
		ndirty = region_dirty(dirty, 2 * (M + 2), 1);
		if (ndirty != (size_t)ntraps)
			printf("region_dirty found %zu rows, the handler %d\n", ndirty,
			       ntraps);
		for (size_t i = 0; i < ndirty; i++)
			region_checkpoint(dirty[i]);
		for (int c = 0; c < 2; c++)
			for (int j = 0; j <= M + 1; j++)
				trapped[c][j] = 0;
	}
	/* Rows begin - 1 and end + 1 were read every iteration, never written. */
	printf("rows %d and %d (read, not written): %s\n", begin - 1, end + 1,
	       ever[0][begin - 1] || ever[1][begin - 1] || ever[0][end + 1] ||
	                       ever[1][end + 1]
	               ? "trapped"
	               : "never trapped");
	return 0;
}
