/* The raw record of a run (docs/policy.md, "Report"): what the preload
 * writes as the traced program ends (its events as it runs), with
 * async-signal-safe code, and
 * rtlctl turns into the JSON report, then or any time later, also on
 * another machine with the same binaries (heaptrack's split: track in the
 * program, analyse outside it). Shared by the preload's writer
 * (preload/track/) and rtlctl's reader (tools/interpret/raw_read.c).
 *
 * The file: the 8-byte magic, then records of a 32-bit tag, a 32-bit
 * payload length and the payload, in the byte order of the machine that
 * wrote it (x86-64: little-endian). Numbers are u64 unless said; a string
 * is a u32 length and its bytes (no NUL). A reader skips tags it does not
 * know, so records may be added without a new magic. */
#ifndef RTL_TRACK_FORMAT_H
#define RTL_TRACK_FORMAT_H

#define RTL_TRACK_MAGIC "RTLRAW\0\1"
#define RTL_TRACK_MAGIC_LEN 8

enum rtl_track_tag {
	/* status (i64: exit status, -signal, or RTL_TRACK_STATUS_UNKNOWN),
	 * pid, duration_ns; program name (string); argv (string: the
	 * NUL-separated bytes of /proc/self/cmdline); since 0.2.0 ppid,
	 * root_pid; since 0.4.0 start_ns (the preload's start, on
	 * CLOCK_MONOTONIC). */
	RTL_TRACK_RUN = 1,
	/* source (string), effective text (string). */
	RTL_TRACK_POLICY = 2,
	/* count (u32), then count pairs: name (string), value: the report's
	 * totals, in the report's order. */
	RTL_TRACK_TOTALS = 3,
	/* name (string), mechanism (string), selected, bytes, read_traps,
	 * write_traps; since 0.3.0 false_sharing, grants, granted_bytes,
	 * touched_bytes, prot_changes. One per rule, in the policy's order: a
	 * rule's index elsewhere is its position among these. */
	RTL_TRACK_RULE = 4,
	/* bias (load address), lo, hi (the module's text spans [lo, hi)), path
	 * of its file (string), name to show (string: the program's for the
	 * executable). */
	RTL_TRACK_MODULE = 5,
	/* slot (u32), ip (the allocating call's return address; 0 for "(other
	 * sites)"), rule (i32, -1 for any), regions, bytes, read_traps,
	 * write_traps; since 0.3.0 false_sharing, grants, granted_bytes,
	 * touched_bytes; later dirty_regions, object_bytes, diff_bytes, and
	 * card_bytes of 128, 512 and 4096 bytes. */
	RTL_TRACK_SITE = 6,
	/* slot (u32), size, read_traps, write_traps: a region among those with
	 * the most traps, freed ones included. */
	RTL_TRACK_TOP = 7,
	/* t_ns, dirty_regions, diff_bytes, page_bytes; later fields
	 * object_bytes, card_bytes of 128, 512 and 4096 bytes, written_bytes
	 * (docs/compare.md). */
	RTL_TRACK_EPOCH = 8,
	/* t_ns, slot (u32), write (u32), offset, size. */
	RTL_TRACK_EVENT = 9,
	/* rule (u32), write (u32), count, n (u32), n frames (ip each; the
	 * first is the faulting instruction, the rest return addresses). */
	RTL_TRACK_STACK = 10,
	/* count (u32), then count pairs: name (string), value: what the notes
	 * are made of (RTL_TRACK_LIMIT_*). */
	RTL_TRACK_LIMITS = 11,
	/* Since 0.3.0, one per rule, in the policy's order: rule (u32),
	 * interval_ns (the width of every interval), live_at_start (the
	 * rule's regions live at the first interval's start: a forked
	 * child's inherited ones), n (u32), then n intervals from the
	 * preload's start, each traps, grants, made, freed (u64). */
	RTL_TRACK_TIMELINE = 12,
	/* How dirty rules see writes: way (string: "written bits" or
	 * "traps"), why (string). Only when a rule tracks writes. */
	RTL_TRACK_DIRTY = 13,
	/* How protection changed outside rtl's views: backend (string: "page
	 * tables" or "mprotect"), why (string). Only when a rule of the auto,
	 * alias or page mechanism can trap. */
	RTL_TRACK_PROTECTION = 14,
	/* Since 0.4.0, events = traps as the run goes (preload/track/
	 * events.c), any number of them anywhere in the file, in the order
	 * the traps were taken: n (u32), bytes per event (u32: 24; a later
	 * version may add fields after these), then n events, each t_ns (from
	 * the process's start), site_write (u32: the site's slot, bit 31 set
	 * for a write), tid (u32), offset and size (u32 each, saturating at
	 * 2^32 - 1). A file may hold EVENT records instead (before 0.4.0). */
	RTL_TRACK_EVENTS = 15,
	/* Since 0.4.0, where mechanism = tag rules' blocks went: placed
	 * (string: "tags" or "auto"), why (string). Only when a rule asks
	 * for tags. */
	RTL_TRACK_TAG = 16,
};
#define RTL_TRACK_EVENT_BYTES 24

#define RTL_TRACK_STATUS_UNKNOWN (-1000)

/* The exit status of `rtlctl report -o OUT RAW` when it could not write
 * OUT: it has said why in one line (and that RAW stays), so the preload
 * that ran it adds nothing and keeps RAW. */
#define RTL_EXIT_NOT_WRITTEN 3

/* Names in RTL_TRACK_LIMITS. */
#define RTL_TRACK_LIMIT_MAX_REGIONS "max_regions"           /* the policy's */
#define RTL_TRACK_LIMIT_FALLBACK_MAX "fallback_max_regions" /* left over it */
#define RTL_TRACK_LIMIT_FALLBACK_FULL "fallback_full"       /* views or records full */
#define RTL_TRACK_LIMIT_FALLBACK_MAPS "fallback_maps"       /* the mapping budget full */
#define RTL_TRACK_LIMIT_FALLBACK_SLOTS "fallback_slots"     /* every copy of a page taken */
#define RTL_TRACK_LIMIT_FALLBACK_TAGS "fallback_tags"       /* tags could not take it */
#define RTL_TRACK_LIMIT_ALIAS_HIT "alias_budget_hit"
#define RTL_TRACK_LIMIT_IN_PLACE_HIT "in_place_budget_hit"
#define RTL_TRACK_LIMIT_BUDGET "maps_budget"
#define RTL_TRACK_LIMIT_MAX_MAPS "max_map_count"
#define RTL_TRACK_LIMIT_MAPS_AT_START "maps_at_start"
#define RTL_TRACK_LIMIT_SITE_OVERFLOW "site_overflow"
#define RTL_TRACK_LIMIT_EPOCHS_DROPPED "epochs_dropped"
#define RTL_TRACK_LIMIT_EVENTS "events"           /* traps the ring saw */
#define RTL_TRACK_LIMIT_EVENTS_LOST "events_lost" /* of those, not recorded */
#define RTL_TRACK_LIMIT_STACKS_DROPPED "stacks_dropped"
#define RTL_TRACK_LIMIT_EPOCH_OPEN "last_epoch_open"      /* died before closing it */
#define RTL_TRACK_LIMIT_SECCOMP_REFUSED "seccomp_refused" /* the errno, or 0 */
#define RTL_TRACK_LIMIT_COPIES_OPENED "copies_opened"     /* grants out of mappings */
#define RTL_TRACK_LIMIT_KEPT_PINNED "kept_pinned"         /* freed while a signal stack */

#endif
