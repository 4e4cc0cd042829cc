/* The raw record's writer: one record at a time in a static buffer, the
 * finished ones gathered in a second and written with write(2) when it
 * fills and at close: a process's whole record is a write or two, where a
 * write per record header and body cost some forty calls. Runs in signal handlers (a fatal signal, rtl's own death over
 * a trap): nothing here allocates, locks or uses stdio. */
#include "preload/track/raw.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "preload/track/format.h"

#define CAP (64u << 10)

static int fd = -1;
static int failed; /* an errno, once a write failed */
static uint32_t tag;
static size_t n;
static unsigned char buf[CAP];
static size_t nout;
static unsigned char out[CAP]; /* finished records, not yet written */

static void put(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len) {
		ssize_t w = write(fd, b, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			failed = w < 0 ? errno : EIO;
			return;
		}
		b += w;
		len -= (size_t)w;
	}
}

static void flush(void)
{
	if (nout && !failed)
		put(out, nout);
	nout = 0;
}

static void queue(const void *p, size_t len)
{
	if (len > CAP - nout)
		flush();
	if (len > CAP) {
		put(p, len);
		return;
	}
	memcpy(out + nout, p, len);
	nout += len;
}

void rtl_raw_open(int file)
{
	fd = file;
	nout = 0;
	failed = file < 0 ? EBADF : 0;
}

void rtl_raw_start(uint32_t t)
{
	tag = t;
	n = 0;
}

size_t rtl_raw_u32_later(void)
{
	size_t at = n;

	rtl_raw_u32(0);
	return at;
}

void rtl_raw_patch_u32(size_t at, uint32_t v)
{
	if (at + sizeof(v) <= n)
		memcpy(buf + at, &v, sizeof(v));
}

static void add(const void *p, size_t len)
{
	if (len > CAP - n)
		len = CAP - n;
	memcpy(buf + n, p, len);
	n += len;
}

void rtl_raw_u32(uint32_t v)
{
	add(&v, sizeof(v));
}

void rtl_raw_u64(uint64_t v)
{
	add(&v, sizeof(v));
}

void rtl_raw_bytes(const void *p, size_t len)
{
	uint32_t l;

	if (CAP - n < sizeof(l))
		return;
	if (len > CAP - n - sizeof(l))
		len = CAP - n - sizeof(l); /* cut: the record stays well-formed */
	l = (uint32_t)len;
	add(&l, sizeof(l));
	add(p, len);
}

void rtl_raw_str(const char *s)
{
	rtl_raw_bytes(s, s ? strlen(s) : 0);
}

void rtl_raw_end(void)
{
	uint32_t hdr[2] = { tag, (uint32_t)n };

	if (fd < 0 || failed)
		return;
	if (sizeof(hdr) + n > CAP - nout)
		flush();
	queue(hdr, sizeof(hdr));
	queue(buf, n);
}

int rtl_raw_close(void)
{
	if (fd >= 0)
		flush();
	if (fd >= 0 && close(fd) < 0 && !failed)
		failed = errno; /* a file system that says so only now */
	fd = -1;
	if (!failed)
		return 0;
	errno = failed;
	return -1;
}
