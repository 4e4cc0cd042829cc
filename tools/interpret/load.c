/* Reading what a run left (load.h): the file whole, then a raw record made
 * into a report or a JSON report checked; several made into one. */
#include "tools/interpret/load.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/interpret/merge.h"
#include "tools/interpret/raw_read.h"
#include "tools/report/report_read.h"

/* The whole file; NULL with the reason in why. */
static char *slurp(FILE *f, const char *path, size_t *size, char *why, size_t len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;

	for (;;) {
		if (n == cap) {
			char *grown = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!grown) {
				free(buf);
				snprintf(why, len, "%s: out of memory", path);
				return NULL;
			}
			buf = grown;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	*size = n;
	return buf;
}

int rtl_file_map(struct rtl_file *m, const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	*m = (struct rtl_file){ 0 };
	if (!f) {
		snprintf(why, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	/* A regular file is mapped: a raw record of a long run holds every
	 * trap, and only the pages read are in memory, for a while. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);

		if (p != MAP_FAILED) {
			madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
			fclose(f);
			m->data = p;
			m->size = (size_t)st.st_size;
			m->mapped = 1;
			return 0;
		}
	}
	m->data = slurp(f, path, &m->size, why, len);
	fclose(f);
	return m->data ? 0 : -1;
}

void rtl_file_unmap(struct rtl_file *m)
{
	if (m->mapped)
		munmap(m->data, m->size);
	else
		free(m->data);
	*m = (struct rtl_file){ 0 };
}

char *rtl_raw_instead(const char *path)
{
	size_t n = strlen(path);
	char *raw;

	if (n < 5 || strcmp(path + n - 5, ".json") || access(path, F_OK) == 0 ||
	    !(raw = strdup(path)))
		return NULL;
	memcpy(raw + n - 5, ".raw", 5);
	if (access(raw, F_OK) == 0)
		return raw;
	free(raw);
	return NULL;
}

json_t *rtl_load_report(const char *path, int *is_raw, char *why, size_t len)
{
	char *raw = rtl_raw_instead(path);
	struct rtl_file m;
	json_t *r;

	if (rtl_file_map(&m, raw ? raw : path, why, len) < 0) {
		free(raw);
		return NULL;
	}
	*is_raw = rtl_raw_is(m.data, m.size);
	if (*is_raw)
		r = rtl_raw_report(m.data, m.size, m.mapped, path, why, len);
	else
		r = rtl_report_parse(m.data, m.size, path, why, len);
	rtl_file_unmap(&m);
	free(raw);
	return r;
}

json_t *rtl_load_reports(char *const *paths, size_t n, long root_pid,
                         int *is_raw, char *why, size_t len)
{
	json_t **all, *r = NULL;
	size_t i;

	if (n == 1 && root_pid <= 0)
		return rtl_load_report(paths[0], is_raw, why, len);
	all = calloc(n ? n : 1, sizeof(*all));
	if (!all) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	*is_raw = 1;
	for (i = 0; i < n; i++) {
		int raw;

		if (!(all[i] = rtl_load_report(paths[i], &raw, why, len)))
			break;
		*is_raw &= raw;
	}
	if (i == n && !(r = rtl_report_merge(all, n, root_pid)))
		snprintf(why, len, n ? "out of memory" : "no report given");
	while (i-- > 0)
		json_decref(all[i]);
	free(all);
	return r;
}

/* The records in dir (NAME.PID.raw, and NAME.PID.raw.N where a pid came
 * back), their paths in *paths; how many, or -1. */
ssize_t rtl_run_records(const char *dir, char ***paths)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, cap = 0;

	*paths = NULL;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char **grown;

		if (e->d_name[0] == '.' || !strstr(e->d_name, ".raw"))
			continue; /* a record still being written is .NAME...tmp */
		if (n == cap) {
			grown = realloc(*paths, (cap = cap ? 2 * cap : 64) * sizeof(**paths));
			if (!grown)
				break;
			*paths = grown;
		}
		if (asprintf(&(*paths)[n], "%s/%s", dir, e->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	return (ssize_t)n;
}

json_t *rtl_load_run(const char *dir, long root_pid, char *why, size_t len)
{
	char **paths;
	ssize_t n = rtl_run_records(dir, &paths);
	int is_raw;
	json_t *r = NULL;

	if (n < 0)
		snprintf(why, len, "%s: %s", dir, strerror(errno));
	else if (n == 0)
		snprintf(why, len, "%s: no process of the run left a record", dir);
	else
		r = rtl_load_reports(paths, (size_t)n, root_pid, &is_raw, why, len);
	for (ssize_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return r;
}
