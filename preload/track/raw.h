/* Writing the raw record (raw.c; format in preload/track/format.h): records
 * assembled in a static buffer, gathered in another and written with
 * write(2) as it fills and at close. Async-signal-safe:
 * no malloc, no stdio, no locks. One writer at a time (the caller claims
 * the record first). */
#ifndef RTL_RAW_H
#define RTL_RAW_H

#include <stddef.h>
#include <stdint.h>

/* Go on writing a record file on fd, its magic (and events) written
 * already (track.c). */
void rtl_raw_open(int fd);
/* A record: start it, add its fields, end it (written then). A record
 * longer than the buffer (64 KiB) has its last strings cut. */
void rtl_raw_start(uint32_t tag);
void rtl_raw_u32(uint32_t v);
void rtl_raw_u64(uint64_t v);
void rtl_raw_str(const char *s);
void rtl_raw_bytes(const void *p, size_t n); /* as a string */
/* A u32 to fill in later (a count of what follows): where it is, for
 * rtl_raw_patch_u32 before the record ends. */
size_t rtl_raw_u32_later(void);
void rtl_raw_patch_u32(size_t at, uint32_t v);
void rtl_raw_end(void);
/* Write what is gathered and close the file: 0 if everything reached it, else -1 with the errno of
 * the first failure. */
int rtl_raw_close(void);

#endif
