/* events = traps (events.c): every trap of the run, streamed into the
 * process's raw record as the run goes (format.h, RTL_TRACK_EVENTS), in
 * a bounded ring. */
#ifndef RTL_EVENTS_H
#define RTL_EVENTS_H

#include <stddef.h>
#include <stdint.h>

/* The ring, when the policy records events; -1 if it cannot be mapped. */
int rtl_events_init(void);

/* A trap of the region of site slot site (size bytes) at offset.
 * Signal-handler code: no malloc, no lock it could wait on, no stdio. */
void rtl_events_add(uint32_t site, size_t offset, size_t size, int write);

/* How the record file is opened (track.c): a new temporary file of the
 * process's record with the magic written, its temporary name in tmp;
 * the fd, or -1 with errno. Async-signal-safe. */
typedef int (*rtl_events_open_fn)(char *tmp, size_t len);
void rtl_events_set_opener(rtl_events_open_fn open_record);

/* Open the record's file now, out of any signal handler: at start (once
 * the ring and the opener are both there: whichever comes second calls
 * it), and again after a failed exec. A forked child
 * opens its own (rtl_events_forked). */
void rtl_events_start(void);

/* At the end of the process: the rest of the ring written into the record
 * file (opened now if no flush opened it), which the caller then
 * finishes and publishes under tmp's name. The fd, or -1 with errno; after
 * it, traps are counted and not recorded. Async-signal-safe. */
int rtl_events_finish(char *tmp, size_t len);

/* Traps seen, and those not recorded (the ring full while the file was
 * written, or the file lost), in this process. */
void rtl_events_counts(uint64_t *seen, uint64_t *lost);

/* exec: the record file of the image that is going away is removed
 * (its events counted as lost); a process whose exec fails starts a new
 * one (rtl_events_start). fork, in the child: the parent's file and ring
 * are the parent's, the child opens its own. */
void rtl_events_exec(void);
void rtl_events_forked(void);

#endif
