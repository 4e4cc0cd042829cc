/* Writing and checking DSM messages. The reader never reads outside
 * [p, end): every field read is bounds-checked, counts are checked against
 * the bytes left before anything is allocated from them, and r_end refuses a
 * message with trailing bytes. Never trust a peer's lengths. */
#include "dsm/wire.h"

#include <stdlib.h>
#include <string.h>

static void w_grow(struct wbuf *w, size_t more)
{
	size_t cap = w->cap ? w->cap : 256;

	if (w->n + more <= w->cap)
		return;
	while (cap < w->n + more)
		cap *= 2;
	w->p = realloc(w->p, cap);
	if (!w->p)
		dsm_die("out of memory for a %zu-byte message", cap);
	w->cap = cap;
}

void w_u32(struct wbuf *w, uint32_t v)
{
	w_grow(w, 4);
	for (int i = 0; i < 4; i++)
		w->p[w->n++] = (uint8_t)(v >> (8 * i));
}

void w_u64(struct wbuf *w, uint64_t v)
{
	w_u32(w, (uint32_t)v);
	w_u32(w, (uint32_t)(v >> 32));
}

void w_bytes(struct wbuf *w, const void *p, size_t n)
{
	w_grow(w, n);
	if (n)
		memcpy(w->p + w->n, p, n);
	w->n += n;
}

void w_vt(struct wbuf *w, const uint32_t *vt)
{
	for (int i = 0; i < dsm.nprocs; i++)
		w_u32(w, vt[i]);
}

void w_vt_delta(struct wbuf *w, const uint32_t *vt, const uint32_t *base)
{
	uint32_t k = 0;

	for (int i = 0; i < dsm.nprocs; i++)
		k += vt[i] != base[i];
	w_u32(w, k);
	for (int i = 0; i < dsm.nprocs; i++)
		if (vt[i] != base[i]) {
			w_u32(w, (uint32_t)i);
			w_u32(w, vt[i]);
		}
}

void w_init(struct wbuf *w, int kind)
{
	w->p = NULL;
	w->n = w->cap = 0;
	w_u32(w, DSM_MAGIC);
	w_u32(w, (uint32_t)kind);
	w_u32(w, (uint32_t)dsm.rank);
}

void w_free(struct wbuf *w)
{
	free(w->p);
	w->p = NULL;
	w->n = w->cap = 0;
}

void r_fail(struct rbuf *r, const char *why)
{
	if (!r->err)
		r->err = why;
	r->p = r->end;
}

const uint8_t *r_bytes(struct rbuf *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->err || (size_t)(r->end - r->p) < n) {
		r_fail(r, "truncated");
		return NULL;
	}
	r->p += n;
	return p;
}

uint32_t r_u32(struct rbuf *r)
{
	const uint8_t *p = r_bytes(r, 4);

	if (!p)
		return 0;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t r_u64(struct rbuf *r)
{
	uint64_t lo = r_u32(r);

	return lo | (uint64_t)r_u32(r) << 32;
}

uint32_t r_count(struct rbuf *r, size_t item)
{
	uint32_t n = r_u32(r);

	if (!r->err && item && n > (size_t)(r->end - r->p) / item) {
		r_fail(r, "count larger than the message");
		return 0;
	}
	return n;
}

uint32_t r_rank(struct rbuf *r)
{
	uint32_t v = r_u32(r);

	if (!r->err && v >= (uint32_t)dsm.nprocs) {
		r_fail(r, "rank out of range");
		return 0;
	}
	return v;
}

uint32_t r_unit(struct rbuf *r)
{
	uint32_t v = r_u32(r);

	if (!r->err && v >= dsm.nunits) {
		r_fail(r, "unknown unit (were allocations made in the same "
		          "order on every rank?)");
		return 0;
	}
	return v;
}

void r_vt(struct rbuf *r, uint32_t *vt)
{
	for (int i = 0; i < dsm.nprocs; i++)
		vt[i] = r_u32(r);
}

void r_vt_delta(struct rbuf *r, uint32_t *vt, const uint32_t *base)
{
	uint32_t k = r_count(r, 8);
	int last = -1;

	memcpy(vt, base, (size_t)dsm.nprocs * sizeof(*vt));
	for (uint32_t i = 0; i < k && !r->err; i++) {
		int p = (int)r_rank(r);
		if (!r->err && p <= last) {
			r_fail(r, "vector time entries out of order");
			return;
		}
		vt[p] = r_u32(r);
		last = p;
	}
}

void r_init(struct rbuf *r, const struct msg *m)
{
	r->p = m->buf;
	r->end = m->buf + m->len;
	r->err = NULL;
	if (r_u32(r) != DSM_MAGIC)
		r_fail(r, "bad magic");
	else if (r_u32(r) != (uint32_t)m->tag)
		r_fail(r, "kind does not match the tag");
	else if (r_u32(r) != (uint32_t)m->src)
		r_fail(r, "sender does not match the source");
}

void r_end(struct rbuf *r, const struct msg *m, const char *what)
{
	if (!r->err && r->p != r->end)
		r->err = "trailing bytes";
	if (r->err)
		dsm_die("malformed %s message (%zu bytes) from rank %d: %s; "
		        "rejected",
		        what, m->len, m->src, r->err);
}
