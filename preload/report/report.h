/* The report (report.c), written once: at exit, or for a fatal signal by
 * the writer thread (fatal.c). */
#ifndef RTL_REPORT_H
#define RTL_REPORT_H

/* status: exit status, or -(signal number), or RTL_STATUS_UNKNOWN. */
#define RTL_STATUS_UNKNOWN (-1000)

/* Write the report now. Not from a signal handler. */
void rtl_report_write(int status);
int rtl_report_claim(void);        /* the one writer: 1 if it is us */
void rtl_report_emit(int status);  /* write it (claimed) */
void rtl_report_forked(void);
void rtl_report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
