/* Where a process's raw record goes (record_file.c). */
#ifndef RTL_RECORD_FILE_H
#define RTL_RECORD_FILE_H

#include <stddef.h>

/* The pid the report belongs to (RTL_REPORT_PID; 0: this process's). */
void rtl_record_owner(long pid);

/* The report's path and the raw record's, for this process. */
void rtl_record_paths(char *report, size_t rlen, char *raw, size_t len);

/* A new temporary file beside the raw record's name, its magic written,
 * its name in tmp: the record's file at the end. The fd, or -1 with
 * errno. */
int rtl_record_open(char *tmp, size_t len);

/* The record's file for events, opened at start (events.h): a file with
 * no name yet (tmp ""), which a process that ends with _exit or is killed
 * leaves nowhere; where the file system has none, as rtl_record_open. */
int rtl_record_open_unnamed(char *tmp, size_t len);

#endif
