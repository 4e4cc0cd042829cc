/* Creating the report and the raw record (docs/policy.md, "Report files"):
 * never through a symlink, never over a file that is there, never half
 * written under the final name. A file is written under a temporary name
 * in the same folder and given its name when complete: the name asked for
 * if it is free, else the next free of NAME.1, NAME.2, ...
 * Async-signal-safe (open, renameat2, link, unlink; no stdio, no malloc):
 * the preload writes the raw record from a fatal-signal handler. */
#ifndef RTL_REPORT_FILE_H
#define RTL_REPORT_FILE_H

#include <stddef.h>

/* How many names are tried: NAME, then NAME.1 to NAME.(RTL_FILE_TRIES-1). */
#define RTL_FILE_TRIES 1000

/* Create a new file beside path (.BASE.PID.N.tmp in path's folder) with
 * O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600; its name into tmp (len
 * bytes). The descriptor (write-only), or -1 with errno. */
int rtl_file_temp(const char *path, char *tmp, size_t len);

/* A new file with no name in path's folder (O_TMPFILE), mode 0600: it
 * goes away with its descriptor unless named (rtl_file_name_fd), so a
 * process that ends without naming it (_exit, SIGKILL) leaves nothing. The
 * descriptor, or -1 with errno (EOPNOTSUPP, EISDIR: a file system without
 * them; then rtl_file_temp). */
int rtl_file_unnamed(const char *path);

/* Give the unnamed file fd a temporary name beside path, as
 * rtl_file_temp's, into tmp (through /proc/self/fd). 0, or -1 with errno. */
int rtl_file_name_fd(int fd, const char *path, char *tmp, size_t len);

/* Give the temporary file tmp the name path, or the first free of path.1,
 * path.2, ...; never replaces anything (RENAME_NOREPLACE, else link and
 * unlink). The name it got into got (len bytes). 0, or -1 with errno
 * (EEXIST: every name taken); tmp stays then. */
int rtl_file_publish(const char *tmp, const char *path, char *got, size_t len);

/* path, or path.N for n > 0, into out; -1 if it does not fit. */
int rtl_file_name(const char *path, unsigned n, char *out, size_t len);

#endif
