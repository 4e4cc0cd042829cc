/* Chrome trace-event JSON out of a report (report_trace.h). Each process
 * of the run is a track (its pid, named by its program); each trap is an
 * instant event on it, at the time the preload took it, set on one clock
 * with the other processes' (their start_ns; a record from before 0.4.0
 * has none, and its process starts at 0); the epochs are instant events
 * of the root process, and the timeline's intervals counters there, one
 * per rule. Times are microseconds (the format's unit), to the
 * nanosecond. Events are written one at a time, as read: from raw
 * records, every trap of the run (rtl_raw_each_event), in the memory of
 * one event; from a JSON report, the traps it lists. */
#include "tools/report/report_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/interpret/load.h"
#include "tools/interpret/raw_read.h"
#include "tools/report/report_read.h"
#include "tools/util/text.h"

struct trace {
	FILE *f;
	int any;            /* an event written: the next needs a comma */
	json_int_t t0;      /* the earliest process start */
	json_t *procs;      /* the report's processes */
	json_int_t pid, at; /* the process of the last trap, and its start */
};

/* A JSON string: quotes, backslashes and control characters escaped, and
 * each byte that is not part of well-formed UTF-8 written as the four
 * characters \xNN, as the report has it (text.h): names come from files
 * anyone may craft. */
static void put_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		size_t k = rtl_utf8_len(p);

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (!k)
			fprintf(f, "\\\\x%02x", c);
		else
			fwrite(p, 1, k, f);
		p += k ? k : 1;
	}
	fputc('"', f);
}

/* Open an event: the fields every kind has. ts < 0: none (metadata). */
static void begin_tid(struct trace *t, const char *ph, const char *name, json_int_t pid,
                      json_int_t tid, json_int_t ts_ns)
{
	fputs(t->any ? ",\n" : "\n", t->f);
	t->any = 1;
	fprintf(t->f, "{\"ph\":\"%s\",\"name\":", ph);
	put_str(t->f, name);
	fprintf(t->f, ",\"pid\":%" JSON_INTEGER_FORMAT ",\"tid\":%" JSON_INTEGER_FORMAT, pid,
	        tid);
	if (ts_ns >= 0)
		fprintf(t->f, ",\"ts\":%" JSON_INTEGER_FORMAT ".%03d", ts_ns / 1000,
		        (int)(ts_ns % 1000));
}

static void begin(struct trace *t, const char *ph, const char *name, json_int_t pid,
                  json_int_t ts_ns)
{
	begin_tid(t, ph, name, pid, pid, ts_ns);
}

static void process_name(struct trace *t, json_t *p)
{
	json_int_t pid = report_num(p, "pid");
	char name[600];

	snprintf(name, sizeof(name), "%s (pid %" JSON_INTEGER_FORMAT ")",
	         report_str(p, "program", "?"), pid);
	begin(t, "M", "process_name", pid, -1);
	fputs(",\"args\":{\"name\":", t->f);
	put_str(t->f, name);
	fputs("}}", t->f);
}

/* The start of process pid on the trace's clock, in ns. */
static json_int_t start_of(const struct trace *t, json_t *procs, json_int_t pid)
{
	json_t *p;
	size_t i;

	json_array_foreach(procs, i, p)
	{
		json_int_t s = report_num(p, "start_ns");

		if (report_num(p, "pid") == pid)
			return s > t->t0 ? s - t->t0 : 0;
	}
	return 0;
}

/* A name as a JSON string, quoted and escaped, kept per name pointer: a
 * run's traps name a few hundred sites at most, and a trace of 10^7
 * traps writes each name millions of times. */
#define NAMES 256
struct name {
	const char *key;
	char *json;
	size_t len;
};
static struct name names[NAMES];

static const struct name *quoted(const char *s)
{
	struct name *n = &names[((uintptr_t)s >> 4) % NAMES];
	char *buf;
	size_t len = 0;
	FILE *f;

	if (n->key == s && n->json)
		return n;
	free(n->json);
	*n = (struct name){ 0 };
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	put_str(f, s);
	if (fclose(f) != 0)
		return NULL;
	*n = (struct name){ s, buf, len };
	return n;
}

/* Forget the names: the next file's may reuse the addresses. */
static void names_clear(void)
{
	for (size_t i = 0; i < NAMES; i++)
		free(names[i].json);
	memset(names, 0, sizeof(names));
}

static char *put_u64(char *p, uint64_t v)
{
	char d[20];
	int n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = d[--n];
	return p;
}

static char *put_lit(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* name's quoted form at p, if it fits before end; else NULL. */
static char *put_name(char *p, const char *end, const struct name *n)
{
	if (!n || p > end || (size_t)(end - p) < n->len)
		return NULL;
	memcpy(p, n->json, n->len);
	return p + n->len;
}

/* One trap: tid 0 is the process's own (a record from before 0.4.0).
 * Formatted by hand into one buffer, written with one unlocked fwrite: a
 * long run's trace is mostly these (a name too long for the buffer is
 * the one rarity written apart). */
static void trap(struct trace *t, json_int_t pid, json_int_t tid, json_int_t t_ns, int write,
                 const char *site, const char *rule, json_int_t offset, json_int_t size)
{
	char buf[2048], *p = buf, *q;
	const char *end = buf + sizeof(buf) - 128; /* room for the numbers */
	uint64_t ts;

	if (pid != t->pid) { /* events come process by process */
		t->pid = pid;
		t->at = start_of(t, t->procs, pid);
	}
	ts = (uint64_t)(t->at + t_ns);
	p = put_lit(p, t->any ? ",\n{\"ph\":\"i\",\"name\":\"" : "\n{\"ph\":\"i\",\"name\":\"");
	t->any = 1;
	p = put_lit(p, write ? "write trap\",\"pid\":" : "read trap\",\"pid\":");
	p = put_u64(p, (uint64_t)pid);
	p = put_lit(p, ",\"tid\":");
	p = put_u64(p, (uint64_t)(tid ? tid : pid));
	p = put_lit(p, ",\"ts\":");
	p = put_u64(p, ts / 1000);
	*p++ = '.';
	*p++ = (char)('0' + ts % 1000 / 100);
	*p++ = (char)('0' + ts % 100 / 10);
	*p++ = (char)('0' + ts % 10);
	p = put_lit(p, ",\"cat\":\"trap\",\"s\":\"t\",\"args\":{\"site\":");
	if (!(q = put_name(p, end, quoted(site)))) {
		fwrite_unlocked(buf, 1, (size_t)(p - buf), t->f);
		put_str(t->f, site);
		q = p = buf;
	}
	p = put_lit(q, ",\"rule\":");
	if (!(q = put_name(p, end, quoted(rule)))) {
		fwrite_unlocked(buf, 1, (size_t)(p - buf), t->f);
		put_str(t->f, rule);
		q = buf;
	}
	p = put_lit(q, ",\"offset\":");
	p = put_u64(p, (uint64_t)offset);
	p = put_lit(p, ",\"size\":");
	p = put_u64(p, (uint64_t)size);
	p = put_lit(p, "}}");
	fwrite_unlocked(buf, 1, (size_t)(p - buf), t->f);
}

static void traps(struct trace *t, json_t *r, json_int_t root)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(r, "events"), i, e)
	{
		json_int_t p = json_is_integer(json_object_get(e, "pid")) ? report_num(e, "pid") : root;

		trap(t, p, report_num(e, "tid"), report_num(e, "t_ns"),
		     !strcmp(report_str(e, "kind", ""), "write"), report_str(e, "site", "?"),
		     report_str(e, "rule", "?"), report_num(e, "offset"), report_num(e, "size"));
	}
}

static int raw_trap(void *arg, int64_t pid, const struct rtl_raw_event *e)
{
	struct trace *t = arg;

	trap(t, pid, e->tid, (json_int_t)e->t_ns, e->write, e->site, e->rule,
	     (json_int_t)e->offset, (json_int_t)e->size);
	return ferror(t->f) ? -1 : 0;
}

/* Every trap of the raw records, file by file. */
static int raw_traps(struct trace *t, char *const *raws, size_t n)
{
	char why[600];

	for (size_t i = 0; i < n; i++) {
		char *instead = rtl_raw_instead(raws[i]); /* NAME.json read as NAME.raw */
		struct rtl_file m;
		int rc;

		rc = rtl_file_map(&m, instead ? instead : raws[i], why, sizeof(why));
		free(instead);
		if (rc < 0) {
			fprintf(stderr, "rtlctl report: %s\n", why);
			return -1;
		}
		rc = rtl_raw_each_event(m.data, m.size, m.mapped, raws[i], raw_trap, t, why, sizeof(why));
		names_clear();
		rtl_file_unmap(&m);
		if (rc < 0 && !ferror(t->f)) {
			fprintf(stderr, "rtlctl report: %s\n", why);
			return -1;
		}
	}
	return 0;
}

static void epochs(struct trace *t, json_t *r, json_int_t root, json_int_t at)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(r, "epochs"), i, e)
	{
		begin(t, "i", "epoch", root, at + report_num(e, "t_ns"));
		fprintf(t->f,
		        ",\"cat\":\"epoch\",\"s\":\"p\",\"args\":{\"dirty_regions\":%" JSON_INTEGER_FORMAT
		        ",\"diff_bytes\":%" JSON_INTEGER_FORMAT "}}",
		        report_num(e, "dirty_regions"), report_num(e, "diff_bytes"));
	}
}

/* One counter track per timeline series, a value per rule. */
static void timeline(struct trace *t, json_t *r, json_int_t root, json_int_t at)
{
	static const char *const series[] = { "traps", "grants", "live" };
	json_t *tl = json_object_get(r, "timeline"), *rules = json_object_get(tl, "rules"), *e;
	json_int_t width = report_num(tl, "interval_ns"), n = report_num(tl, "intervals");

	if (width <= 0 || !json_is_array(rules))
		return;
	for (size_t s = 0; s < sizeof(series) / sizeof(*series); s++)
		for (json_int_t k = 0; k < n; k++) {
			size_t i;

			begin(t, "C", series[s], root, at + k * width);
			fputs(",\"cat\":\"timeline\",\"args\":{", t->f);
			json_array_foreach(rules, i, e)
			{
				json_t *v = json_array_get(json_object_get(e, series[s]), (size_t)k);

				if (i)
					fputc(',', t->f);
				put_str(t->f, report_str(e, "rule", "?"));
				fprintf(t->f, ":%" JSON_INTEGER_FORMAT,
				        json_is_integer(v) ? json_integer_value(v) : 0);
			}
			fputs("}}", t->f);
		}
}

int report_trace(json_t *r, const char *out, char *const *raws, size_t nraws)
{
	struct trace t = { .f = strcmp(out, "-") ? fopen(out, "w") : stdout, .pid = -1 };
	json_t *procs = json_object_get(r, "processes"), *run = json_object_get(r, "run"), *p;
	json_int_t root = report_num(run, "pid"), at;
	size_t i;
	int failed;

	if (!t.f) {
		fprintf(stderr, "rtlctl report: cannot write %s: %s\n", out, strerror(errno));
		return -1;
	}
	json_array_foreach(procs, i, p)
	{
		json_int_t s = report_num(p, "start_ns");

		if (s > 0 && (t.t0 == 0 || s < t.t0))
			t.t0 = s;
	}
	t.procs = procs;
	setvbuf(t.f, NULL, _IOFBF, 1 << 20); /* a long run's trace is GBs */
	at = start_of(&t, procs, root);
	fputs("{\"traceEvents\":[", t.f);
	json_array_foreach(procs, i, p)
	{
		process_name(&t, p);
	}
	if (nraws && raw_traps(&t, raws, nraws) < 0) {
		if (t.f != stdout)
			fclose(t.f);
		return -1;
	}
	if (!nraws)
		traps(&t, r, root);
	names_clear();
	epochs(&t, r, root, at);
	timeline(&t, r, root, at);
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"program\":", t.f);
	put_str(t.f, report_str(run, "program", "?"));
	fputs(",\"rtl_version\":", t.f);
	put_str(t.f, report_str(r, "rtl_version", "?"));
	fputs("}}\n", t.f);
	failed = ferror(t.f);
	if (t.f != stdout ? fclose(t.f) != 0 : fflush(t.f) != 0)
		failed = 1;
	if (failed) {
		fprintf(stderr, "rtlctl report: cannot write %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}
