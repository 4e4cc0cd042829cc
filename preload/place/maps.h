/* The mapping budget (maps.c): alias objects and blocks protected in place
 * share what the preload may add to the process's mappings before
 * vm.max_map_count. */
#ifndef RTL_MAPS_H
#define RTL_MAPS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

void rtl_maps_init(void);
/* Objects that can trap rtl may have live at their worst (two mappings
 * each), for sizing tables. */
uint64_t rtl_maps_budget(void);
/* Whether another alias object, or block protected in place, fits under
 * vm.max_map_count; the live counts the budget is checked against. */
int rtl_alias_room(void);
int rtl_in_place_room(void);
extern _Atomic uint64_t rtl_alias_live, rtl_in_place_live;
/* What the report's notes about the budget are made of. Signal-safe. */
struct rtl_maps_state {
	int alias_hit, in_place_hit; /* a selection found no room */
	uint64_t budget;             /* live objects when one found no room */
	long max_maps, maps_at_start;
};
void rtl_maps_state(struct rtl_maps_state *out);

#endif
