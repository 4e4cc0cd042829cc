/* Chrome trace-event JSON out of a report (report_trace.h). Each process
 * of the run is a track (its pid, named by its program); each trap is an
 * instant event on it, at the time the preload took it, set on one clock
 * with the other processes' (their start_ns; a record from before 0.4.0
 * has none, and its process starts at 0); the epochs are instant events
 * of the root process, and the timeline's intervals counters there, one
 * per rule. Times are microseconds (the format's unit), to the
 * nanosecond. Events are written one at a time, as read. */
#include "tools/report/report_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/report/report_read.h"

struct trace {
	FILE *f;
	int any;       /* an event written: the next needs a comma */
	json_int_t t0; /* the earliest process start */
};

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Open an event: the fields every kind has. ts < 0: none (metadata). */
static void begin(struct trace *t, const char *ph, const char *name, json_int_t pid,
                  json_int_t ts_ns)
{
	fputs(t->any ? ",\n" : "\n", t->f);
	t->any = 1;
	fprintf(t->f, "{\"ph\":\"%s\",\"name\":", ph);
	put_str(t->f, name);
	fprintf(t->f, ",\"pid\":%" JSON_INTEGER_FORMAT ",\"tid\":%" JSON_INTEGER_FORMAT, pid,
	        pid);
	if (ts_ns >= 0)
		fprintf(t->f, ",\"ts\":%" JSON_INTEGER_FORMAT ".%03d", ts_ns / 1000,
		        (int)(ts_ns % 1000));
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

static void traps(struct trace *t, json_t *r, json_int_t root)
{
	json_t *procs = json_object_get(r, "processes"), *e;
	json_int_t pid = -1, at = 0;
	size_t i;

	json_array_foreach(json_object_get(r, "events"), i, e)
	{
		json_int_t p = json_is_integer(json_object_get(e, "pid")) ? report_num(e, "pid") : root;

		if (p != pid) { /* events come process by process */
			pid = p;
			at = start_of(t, procs, pid);
		}
		begin(t, "i", !strcmp(report_str(e, "kind", ""), "write") ? "write trap" : "read trap",
		      pid, at + report_num(e, "t_ns"));
		fputs(",\"cat\":\"trap\",\"s\":\"t\",\"args\":{\"site\":", t->f);
		put_str(t->f, report_str(e, "site", "?"));
		fputs(",\"rule\":", t->f);
		put_str(t->f, report_str(e, "rule", "?"));
		fprintf(t->f, ",\"offset\":%" JSON_INTEGER_FORMAT ",\"size\":%" JSON_INTEGER_FORMAT "}}",
		        report_num(e, "offset"), report_num(e, "size"));
	}
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

int report_trace(json_t *r, const char *out)
{
	struct trace t = { .f = strcmp(out, "-") ? fopen(out, "w") : stdout };
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
	at = start_of(&t, procs, root);
	fputs("{\"traceEvents\":[", t.f);
	json_array_foreach(procs, i, p)
	{
		process_name(&t, p);
	}
	traps(&t, r, root);
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
