/* What the region_* calls do for an address in the tag arena (api.c):
 * each call checks rtl_tag_owns first and hands the address here. The
 * same errno contract as the calls themselves. */
#ifndef RTL_TAG_API_H
#define RTL_TAG_API_H

#include <rtl/region.h>

int rtl_tag_api_free(void *addr);
int rtl_tag_api_protect(void *addr, int prot);
int rtl_tag_api_handler(void *addr, region_handler_t h);
int rtl_tag_api_set_data(void *addr, void *data);
int rtl_tag_api_find(const void *addr, struct region_info *out);

#endif
