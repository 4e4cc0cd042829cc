/* rtlctl's HTML pages (docs/report.md): `report --html`, `report --diff
 * --html`, `compare --html`. One self-contained file: the run's data as
 * JSON in a <script type="application/json">, d3 (Debian's node-d3) read
 * from its installed file when the page is written and inlined, and the
 * page's own script and style (html/page.js, html/page.css, built in). */
#ifndef RTL_REPORT_HTML_H
#define RTL_REPORT_HTML_H

#include <jansson.h>

/* Where d3 is read from: $RTL_D3, else Debian's node-d3. */
#define RTL_D3_DEFAULT "/usr/share/nodejs/d3/dist/d3.min.js"

/* Write the page of kind ("report", "diff", "compare") over data (an
 * object the page reads: report, diff, compare, ...) to out, titled
 * title; cmd names the command in messages ("report"). Made under a
 * temporary name beside out (mode 0600) and renamed over it when whole.
 * 0, or -1 after one line on stderr: d3 missing or unsafe to inline, out
 * not written. */
int report_html(const char *out, const char *kind, json_t *data, const char *title,
                const char *cmd);

/* A copy of report r for a page: without its events (a page draws none;
 * there may be 65536). */
json_t *report_html_trim(json_t *r);

#endif
