/* The HTML pages (report_html.h). The data are embedded as JSON that no
 * string can end early: jansson escapes '/' (JSON_ESCAPE_SLASH, so no
 * "</script"), and every '<' becomes \u003c (so no "<!--" either); d3's
 * file is refused if it holds "</script". Nothing here reads the source
 * tree: the page's script and style are compiled in (html/embed.py). */
#include "tools/report/report_html.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/report_file.h"

#ifndef RTL_VERSION
#define RTL_VERSION "unknown"
#endif

/* The page's script and style, a line each (html/embed.py). */
extern const char *const rtl_html_js[], *const rtl_html_css[];

static void put_lines(const char *const *lines, FILE *f)
{
	for (; *lines; lines++)
		fputs(*lines, f);
}

/* The whole of path, NUL-terminated; NULL with errno. */
static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rbe");
	char *buf = NULL;
	size_t cap = 0;

	*n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (cap - *n < 65536) {
			char *grown = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
			if (!grown) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
		}
		size_t got = fread(buf + *n, 1, cap - *n - 1, f);
		*n += got;
		if (!got)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[*n] = '\0';
	return buf;
}

/* Whether s (n bytes) holds "</script", in any case. */
static int ends_script(const char *s, size_t n)
{
	for (const char *p = s; (p = memchr(p, '<', n - (size_t)(p - s))); p++)
		if ((size_t)(s + n - p) >= 8 && !strncasecmp(p, "</script", 8))
			return 1;
	return 0;
}

static char *d3_source(const char *cmd)
{
	const char *env = getenv("RTL_D3"), *path = env && *env ? env : RTL_D3_DEFAULT;
	size_t n;
	char *js = slurp(path, &n);

	if (!js) {
		fprintf(stderr, "rtlctl %s: no HTML page: cannot read d3 from %s: %s "
		                "(install Debian's node-d3, or set RTL_D3)\n",
		        cmd, path, strerror(errno));
		return NULL;
	}
	if (ends_script(js, n) || strlen(js) != n) {
		fprintf(stderr, "rtlctl %s: no HTML page: %s holds \"</script\" or a NUL "
		                "byte: it cannot be inlined\n",
		        cmd, path);
		free(js);
		return NULL;
	}
	return js;
}

/* s with HTML's special characters escaped, for the title. */
static void put_text(const char *s, FILE *f)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The data as JSON safe inside <script>: '/' escaped by jansson, '<'
 * (only ever inside strings) as \u003c. */
static void put_data(const char *json, FILE *f)
{
	for (const char *s = json; *s; s++) {
		if (*s == '<')
			fputs("\\u003c", f);
		else
			fputc(*s, f);
	}
}

static int page(FILE *f, const char *title, const char *json, const char *d3)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"rtlctl " RTL_VERSION "\">\n<title>",
	      f);
	put_text(title, f);
	fputs("</title>\n<style>\n", f);
	put_lines(rtl_html_css, f);
	fputs("</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
	      "<script type=\"application/json\" id=\"rtl-data\">",
	      f);
	put_data(json, f);
	fprintf(f, "</script>\n<script>\n%s\n</script>\n<script>\n", d3);
	put_lines(rtl_html_js, f);
	fputs("</script>\n</body>\n</html>\n", f);
	return fflush(f) == EOF || ferror(f) ? -1 : 0;
}

int report_html(const char *out, const char *kind, json_t *data, const char *title,
                const char *cmd)
{
	char tmp[RTL_POLICY_PATH_MAX + 4096];
	char *d3 = d3_source(cmd), *json = NULL;
	json_t *all = NULL;
	FILE *f = NULL;
	int fd = -1, rc = -1, e = 0;

	if (!d3)
		return -1;
	all = json_pack("{s:s}", "kind", kind);
	if (!all || json_object_update(all, data) < 0 ||
	    !(json = json_dumps(all, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_PRESERVE_ORDER))) {
		e = ENOMEM;
		goto out;
	}
	if ((fd = rtl_file_temp(out, tmp, sizeof(tmp))) < 0 || !(f = fdopen(fd, "w"))) {
		e = errno;
		goto out;
	}
	fd = -1;
	errno = EIO; /* what a failed write leaves if stdio keeps no errno */
	if (page(f, title, json, d3) < 0) {
		e = errno;
		goto out;
	}
	if (fclose(f) == EOF) {
		e = errno;
		f = NULL;
		unlink(tmp);
		goto out;
	}
	f = NULL;
	if (rename(tmp, out) < 0) {
		e = errno;
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "rtlctl %s: no HTML page written to %s: %s\n", cmd, out,
		        strerror(e ? e : EIO));
	if (f) {
		fclose(f);
		unlink(tmp);
	}
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(json);
	json_decref(all);
	free(d3);
	return rc;
}

json_t *report_html_trim(json_t *r)
{
	json_t *c = json_copy(r);

	if (c)
		json_object_del(c, "events");
	return c;
}
