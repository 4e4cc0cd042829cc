/* What the minimal policy does with a trap (count, grant) and at exit (a
 * one-line JSON report, only if [rtl] report asks for one). The trap
 * handler runs in the SIGSEGV handler: relaxed counters and region_protect,
 * nothing else. The report is raw counts; anything heavier belongs to the
 * policy engine and rtlctl, outside the program. */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"
#include "rtl/ext.h"

void rtl_rule_trap(rtl_trap_t *t)
{
	struct rtl_rule *r = t->data;
	int act;

	if (!r)
		return;
	act = t->write ? r->on_write : r->on_read;
	if (act & RTL_ACT_COUNT)
		atomic_fetch_add_explicit(t->write ? &r->write_traps
		                                   : &r->read_traps,
		                          1, memory_order_relaxed);
	if (act & RTL_ACT_GRANT_RW)
		region_protect(t->addr, PROT_READ | PROT_WRITE);
	else if ((act & RTL_ACT_GRANT_READ) && !t->write)
		region_protect(t->addr, PROT_READ);
}

void rtl_select_forked(void)
{
	for (int i = 0; i < rtl_policy.nrules; i++) {
		struct rtl_rule *r = &rtl_policy.rules[i];
		atomic_store(&r->choice.allocs, 0);
		atomic_store(&r->read_traps, 0);
		atomic_store(&r->write_traps, 0);
	}
	atomic_store(&rtl_heap_stats.selected, 0);
	atomic_store(&rtl_heap_stats.bytes, 0);
	atomic_store(&rtl_heap_stats.fallback, 0);
}

/* The report's path: %e program name, %p pid, %% a percent sign. */
static void expand(char *out, size_t size, const char *pat)
{
	size_t n = 0;

	for (; *pat && n + 1 < size; pat++) {
		char tmp[24];
		const char *ins = tmp;

		if (*pat != '%' || !pat[1]) {
			out[n++] = *pat;
			continue;
		}
		pat++;
		if (*pat == 'e')
			ins = program_invocation_short_name;
		else if (*pat == 'p')
			snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
		else
			tmp[0] = *pat, tmp[1] = '\0';
		while (*ins && n + 1 < size)
			out[n++] = *ins++;
	}
	out[n] = '\0';
}

/* s as the inside of a JSON string (quotes, backslashes and control
 * characters dropped: names and paths only). */
static const char *json_safe(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; s && *s && n + 1 < size; s++)
		if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
			buf[n++] = *s;
	buf[n] = '\0';
	return buf;
}

static size_t put(char *buf, size_t n, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t put(char *buf, size_t n, size_t size, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (n >= size)
		return n;
	va_start(ap, fmt);
	w = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return w < 0 ? n : n + (size_t)w;
}

void rtl_select_report(void)
{
	struct rtl_ext_stats st;
	char path[512], buf[8192], prog[64], file[256];
	size_t n = 0;
	int fd;

	if (!rtl_policy.report[0])
		return;
	memset(&st, 0, sizeof(st));
	if (rtl_ext_started())
		rtl_ext_stats(&st);
	n = put(buf, n, sizeof(buf),
	        "{\"program\":\"%s\",\"pid\":%d,\"policy\":\"%s\","
	        "\"selected\":%llu,\"selected_bytes\":%llu,\"live\":%llu,"
	        "\"fallbacks\":%llu,\"extents\":%llu,\"traps\":%llu,"
	        "\"stale_traps\":%llu,\"foreign\":%llu,\"rules\":[",
	        json_safe(program_invocation_short_name, prog, sizeof(prog)),
	        (int)getpid(), json_safe(rtl_policy.file, file, sizeof(file)),
	        (unsigned long long)rtl_heap_stats.selected,
	        (unsigned long long)rtl_heap_stats.bytes,
	        (unsigned long long)rtl_heap_stats.live,
	        (unsigned long long)rtl_heap_stats.fallback,
	        (unsigned long long)rtl_arena_extents,
	        (unsigned long long)st.traps,
	        (unsigned long long)st.stale_traps,
	        (unsigned long long)st.foreign);
	for (int i = 0; i < rtl_policy.nrules; i++) {
		struct rtl_rule *r = &rtl_policy.rules[i];
		char name[sizeof(r->name)];
		n = put(buf, n, sizeof(buf),
		        "%s{\"name\":\"%s\",\"selected\":%llu,"
		        "\"read_traps\":%llu,\"write_traps\":%llu}",
		        i ? "," : "", json_safe(r->name, name, sizeof(name)),
		        (unsigned long long)r->choice.allocs,
		        (unsigned long long)r->read_traps,
		        (unsigned long long)r->write_traps);
	}
	n = put(buf, n, sizeof(buf), "]}\n");
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;

	if (!strcmp(rtl_policy.report, "-")) {
		fd = 2;
	} else {
		expand(path, sizeof(path), rtl_policy.report);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return;
	}
	write(fd, buf, n);
	if (fd != 2)
		close(fd);
}
