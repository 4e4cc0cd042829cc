/* The travelling salesperson problem on the DSM (the RTL paper's TSP, after
 * TreadMarks' branch and bound): the lock-heavy application. Shared are a
 * pool of partial tours, a priority queue of them (a binary heap on their
 * lower bounds), the pool's free list, and the best tour so far. A rank
 * takes the most promising partial tour under the queue lock, splitting
 * short ones into their extensions (each bounded by a minimum spanning tree
 * of what is left) until it holds one with few cities left; that one it
 * solves alone by depth-first search, pruning against the shared bound,
 * which it reads without a lock (as TreadMarks' TSP does: a stale bound only
 * prunes less) and updates under the bound lock.
 *
 * VM: the four structures are packed in the page heap, as TreadMarks' one
 * block of about 1 MB; RT: each is a region, the pool (720 KB) the largest.
 * Cities are random points (-n cities, -s seed); rank 0 checks the length
 * against a sequential search and the tour against the distances. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "bench/dsm/app.h"

#define MAX_CITIES 32 /* TreadMarks' MAX_TOUR_SIZE */
#define MAX_TOURS 5000
#define TOUR_LOCK 0
#define BOUND_LOCK 1
#define NO_TOUR (-1)

struct tour {
	int prefix[MAX_CITIES];
	int conn;          /* cities in prefix; prefix[0] is city 0 */
	int last;          /* prefix[conn - 1] */
	int prefix_weight; /* of the path so far */
	int lower_bound;   /* of any tour that extends it */
};

struct queue {
	int n; /* a binary heap of pool indices on their lower bounds */
	struct {
		int bound, index;
	} e[MAX_TOURS];
};

struct freelist {
	int top;
	int index[MAX_TOURS];
};

struct best {
	int len;
	int tour[MAX_CITIES];
};

static long ncities = 19, seed = 4, solve_left = 12;
static int dist[MAX_CITIES][MAX_CITIES], minedge[MAX_CITIES];

/* The four structures, through pointer variables that dsm_region_alloc
 * registers (read again at every use: volatile). The sequential check
 * runs the same code on private copies (no locks). */
struct vars {
	struct tour *volatile tours;
	struct queue *volatile queue;
	struct freelist *volatile freelist;
	struct best *volatile best;
	int locks;
};
static struct vars shared = { .locks = 1 }, private;
static struct vars *v = &shared;

static void lock(int l)
{
	if (v->locks)
		dsm_lock_acquire(l);
}

static void unlock(int l)
{
	if (v->locks)
		dsm_lock_release(l);
}

static void make_cities(void)
{
	double x[MAX_CITIES], y[MAX_CITIES];

	srand48(seed);
	for (int i = 0; i < ncities; i++) {
		x[i] = drand48() * 1000;
		y[i] = drand48() * 1000;
	}
	for (int i = 0; i < ncities; i++) {
		minedge[i] = 1 << 30;
		for (int j = 0; j < ncities; j++) {
			dist[i][j] =
			        (int)lrint(hypot(x[i] - x[j], y[i] - y[j]));
			if (i != j && dist[i][j] < minedge[i])
				minedge[i] = dist[i][j];
		}
	}
}

/* ---- the depth-first search, on private memory ---- */

struct search {
	int path[MAX_CITIES];
	unsigned visited;
	int (*bound)(void);              /* the best length known */
	void (*found)(const int *, int); /* a shorter tour */
};

static void dfs(struct search *s, int conn, int weight, int minsum)
{
	int last = s->path[conn - 1];

	if (conn == ncities) {
		int total = weight + dist[last][0];
		if (total < s->bound())
			s->found(s->path, total);
		return;
	}
	/* Every city still to leave (the last and the unvisited) leaves by
	 * one of its edges. */
	if (weight + minedge[last] + minsum >= s->bound())
		return;
	for (int c = 1; c < ncities; c++) {
		if (s->visited & 1u << c)
			continue;
		s->visited |= 1u << c;
		s->path[conn] = c;
		dfs(s, conn + 1, weight + dist[last][c], minsum - minedge[c]);
		s->visited &= ~(1u << c);
	}
}

static void search_from(struct search *s, const struct tour *t)
{
	int minsum = 0;

	memcpy(s->path, t->prefix, sizeof(s->path));
	s->visited = 0;
	for (int k = 0; k < t->conn; k++)
		s->visited |= 1u << t->prefix[k];
	for (int c = 0; c < ncities; c++)
		if (!(s->visited & 1u << c))
			minsum += minedge[c];
	dfs(s, t->conn, t->prefix_weight, minsum);
}

/* ---- the shared structures (callers hold TOUR_LOCK) ---- */

/* Weight of a minimum spanning tree over the cities not in t, its last
 * city and city 0 (Prim's): the rest of any tour extending t spans them. */
static int mst_left(const struct tour *t)
{
	int in[MAX_CITIES], key[MAX_CITIES], n = 0, w = 0;
	unsigned visited = 0;

	for (int k = 0; k < t->conn; k++)
		visited |= 1u << t->prefix[k];
	for (int c = 0; c < ncities; c++)
		if (!(visited & 1u << c) || c == t->last || c == 0)
			in[n++] = c;
	for (int i = 0; i < n; i++)
		key[i] = 1 << 30;
	key[0] = 0;
	for (int done = 0; done < n; done++) {
		int u = -1;
		for (int i = 0; i < n; i++)
			if (key[i] >= 0 && (u < 0 || key[i] < key[u]))
				u = i;
		w += key[u];
		key[u] = -1;
		for (int i = 0; i < n; i++)
			if (key[i] >= 0 && dist[in[u]][in[i]] < key[i])
				key[i] = dist[in[u]][in[i]];
	}
	return w;
}

static void heap_push(int index, int bound)
{
	struct queue *q = v->queue;
	int i = q->n++;

	while (i > 0 && q->e[(i - 1) / 2].bound > bound) {
		q->e[i] = q->e[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->e[i].bound = bound;
	q->e[i].index = index;
}

static int heap_pop(void)
{
	struct queue *q = v->queue;
	int top = q->e[0].index, i = 0, n = --q->n;

	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && q->e[c + 1].bound < q->e[c].bound)
			c++;
		if (q->e[n].bound <= q->e[c].bound)
			break;
		q->e[i] = q->e[c];
		i = c;
	}
	q->e[i] = q->e[n];
	return top;
}

static int take_free(void)
{
	struct freelist *f = v->freelist;

	return f->top ? f->index[--f->top] : NO_TOUR;
}

static void give_free(int index)
{
	struct freelist *f = v->freelist;

	f->index[f->top++] = index;
}

/* Queue every extension of tour i that may beat the best; 0 if the pool
 * had no room (then the caller solves i itself). */
static int split(int i)
{
	struct tour *t = &v->tours[i];
	unsigned visited = 0;

	for (int k = 0; k < t->conn; k++)
		visited |= 1u << t->prefix[k];
	if (v->freelist->top < ncities - t->conn)
		return 0;
	if (v->locks)
		an_write(v->tours);
	for (int c = 1; c < ncities; c++) {
		struct tour *x;
		int j;
		if (visited & 1u << c)
			continue;
		j = take_free();
		x = &v->tours[j];
		*x = *t;
		x->prefix[x->conn++] = c;
		x->last = c;
		x->prefix_weight += dist[t->last][c];
		x->lower_bound = x->prefix_weight + mst_left(x);
		if (x->lower_bound < v->best->len)
			heap_push(j, x->lower_bound);
		else
			give_free(j);
	}
	return 1;
}

/* Give back the tour we solved (or NO_TOUR); take the next one to solve,
 * splitting the most promising ones until one has few cities left. */
static int get_tour(int done)
{
	int i = NO_TOUR;

	lock(TOUR_LOCK);
	if (v->locks) { /* AN: what this critical section may touch */
		an_write(v->queue);
		an_write(v->freelist);
		an_read(v->tours); /* split() writes it */
		an_read(v->best);
	}
	if (done != NO_TOUR)
		give_free(done);
	while (v->queue->n > 0) {
		i = heap_pop();
		if (v->tours[i].lower_bound >= v->best->len) {
			give_free(i);
			i = NO_TOUR;
			continue;
		}
		if (v->tours[i].conn >= ncities - solve_left || !split(i))
			break;
		give_free(i);
		i = NO_TOUR;
	}
	unlock(TOUR_LOCK);
	return i;
}

static int bound(void)
{
	return v->best->len; /* without the lock: stale only prunes less */
}

static void found(const int *path, int len)
{
	lock(BOUND_LOCK);
	if (v->locks)
		an_write(v->best);
	if (len < v->best->len) {
		v->best->len = len;
		for (int k = 0; k < ncities; k++)
			v->best->tour[k] = path[k];
	}
	unlock(BOUND_LOCK);
}

static void start(void)
{
	struct tour *t = &v->tours[0];

	if (v->locks) {
		an_write(v->queue);
		an_write(v->freelist);
		an_write(v->tours);
		an_write(v->best);
	}
	for (int i = 1; i < MAX_TOURS; i++)
		v->freelist->index[v->freelist->top++] = i;
	v->best->len = 1 << 30;
	t->prefix[0] = 0;
	t->conn = 1;
	t->last = 0;
	t->prefix_weight = 0;
	t->lower_bound = mst_left(t);
	heap_push(0, t->lower_bound);
}

/* Every rank, and the sequential check: take tours until none is left. */
static long work(void)
{
	struct search s = { .bound = bound, .found = found };
	int mine = NO_TOUR;
	long solved = 0;

	while ((mine = get_tour(mine)) != NO_TOUR) {
		struct tour t = v->tours[mine];
		search_from(&s, &t);
		solved++;
	}
	return solved;
}

/* The same search on private memory, one rank: the optimal length. */
static double sequential(int *len)
{
	double t0 = app_now();

	private.tours = calloc(MAX_TOURS, sizeof(struct tour));
	private.queue = calloc(1, sizeof(struct queue));
	private.freelist = calloc(1, sizeof(struct freelist));
	private.best = calloc(1, sizeof(struct best));
	if (!private.tours || !private.queue || !private.freelist ||
	    !private.best)
		abort();
	v = &private;
	start();
	work();
	*len = v->best->len;
	v = &shared;
	return app_now() - t0;
}

/* The shared best tour visits every city once and is as long as it says. */
static int valid_tour(void)
{
	unsigned seen = 0;
	int len = 0;

	for (int k = 0; k < ncities; k++) {
		int c = shared.best->tour[k],
		    next = shared.best->tour[(k + 1) % ncities];
		if (c < 0 || c >= ncities || seen & 1u << c)
			return 0;
		seen |= 1u << c;
		len += dist[c][next];
	}
	return len == shared.best->len;
}

int main(int argc, char **argv)
{
	long vals[3] = { ncities, seed, solve_left }, solved;
	double seq = 0;
	int ok = 1, seq_len = 0;
	char params[128];

	app_init(&argc, &argv, "tsp", "nsl", vals);
	ncities = vals[0];
	seed = vals[1];
	solve_left = vals[2];
	if (ncities < 3 || ncities > MAX_CITIES) {
		if (app.rank == 0)
			fprintf(stderr, "tsp: -n between 3 and %d\n",
			        MAX_CITIES);
		dsm_finish();
		return 2;
	}
	make_cities();
	app_alloc(sizeof(struct tour) * MAX_TOURS, (void *)&shared.tours);
	app_alloc(sizeof(struct queue), (void *)&shared.queue);
	app_alloc(sizeof(struct freelist), (void *)&shared.freelist);
	app_alloc(sizeof(struct best), (void *)&shared.best);
	app_start();
	if (app.rank == 0)
		start();
	dsm_barrier();
	solved = work();
	app_stop();
	if (app.rank == 0) {
		seq = sequential(&seq_len);
		an_read(shared.best);
		ok = shared.best->len == seq_len && valid_tour();
		printf("tsp: tour of %d (sequential %d), %ld subtrees solved "
		       "on rank 0\n",
		       shared.best->len, seq_len, solved);
	}
	snprintf(params, sizeof(params),
	         "\"cities\":%ld,\"seed\":%ld,\"solve_left\":%ld", ncities,
	         seed, solve_left);
	app_finish("tsp", ok, seq, params);
}
