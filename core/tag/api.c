/* The API's side of tag regions: region_alloc_tagged, region_mechanism,
 * region_tag_backend, and what the other region_* calls do when their
 * address lies in the tag arena (api.h). */
#include "core/tag/api.h"

#include <errno.h>

#include "core/start/init.h"
#include "core/start/stats.h"
#include "core/tag/tagged.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* Whether this thread asked for tag checks itself: one started before
 * rtl did does not inherit them. */
static TLS int thread_checks;

static int have_tags(const char **why)
{
	int have = rtl_mte_probe(why);

	if (have && !thread_checks) {
		rtl_mte_thread_enable();
		thread_checks = 1;
	}
	return have;
}

int region_tag_backend(const char **why)
{
	if (rtl_ensure_init() < 0)
		return -1;
	return have_tags(why) ? RTL_ON_TAGS : RTL_ON_VIEWS;
}

void *region_alloc_tagged(size_t size, void *bptr, int read_only)
{
	void *p;

	if (rtl_ensure_init() < 0)
		return NULL;
	if (size == 0) {
		errno = EINVAL;
		return NULL;
	}
	/* Tags give none and read-write: read-only lives on the views. */
	if (read_only || !have_tags(NULL))
		return region_alloc(size, bptr);
	p = rtl_tag_alloc(size);
	if (p && bptr)
		*(void **)bptr = p; /* never moves: nothing to register */
	return p;
}

int region_mechanism(const void *addr)
{
	struct rtl_tag_found f;
	struct region_info info;

	if (!addr) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_tag_owns((uintptr_t)addr)) {
		if (rtl_tag_find((uintptr_t)addr, &f) < 0) {
			errno = ENOENT;
			return -1;
		}
		return RTL_ON_TAGS;
	}
	return region_find(addr, &info) < 0 ? -1 : RTL_ON_VIEWS;
}

static int found(const void *addr, struct rtl_tag_found *f)
{
	if (rtl_tag_find((uintptr_t)addr, f) < 0) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

int rtl_tag_api_free(void *addr)
{
	struct rtl_tag_found f;

	return found(addr, &f) < 0 ? -1 : rtl_tag_free(&f);
}

int rtl_tag_api_protect(void *addr, int prot)
{
	struct rtl_tag_found f;

	if (found(addr, &f) < 0 || rtl_tag_protect(&f, prot) < 0)
		return -1;
	RTL_COUNT(protects);
	return 0;
}

int rtl_tag_api_handler(void *addr, region_handler_t h)
{
	struct rtl_tag_found f;

	if (found(addr, &f) < 0)
		return -1;
	atomic_store(&f.r->handler, h);
	return rtl_tag_still(&f) ? 0 : (errno = ENOENT, -1);
}

int rtl_tag_api_set_data(void *addr, void *data)
{
	struct rtl_tag_found f;

	if (found(addr, &f) < 0)
		return -1;
	atomic_store(&f.r->data, data);
	return rtl_tag_still(&f) ? 0 : (errno = ENOENT, -1);
}

int rtl_tag_api_find(const void *addr, struct region_info *out)
{
	struct rtl_tag_found f;
	struct rtl_tag_region *r;
	uintptr_t a = (uintptr_t)addr;

	if (found(addr, &f) < 0)
		return -1;
	r = f.r;
	/* In the tag addr carries, as a view's address is in its view. */
	out->base = (void *)rtl_mte_with_tag(r->lo, rtl_mte_tag_of(a) ? rtl_mte_tag_of(a) : r->tag);
	out->size = r->size;
	out->offset = rtl_mte_untag(a) - r->lo;
	out->prot = atomic_load(&r->prot);
	out->data = atomic_load(&r->data);
	return rtl_tag_still(&f) ? 0 : (errno = ENOENT, -1);
}
