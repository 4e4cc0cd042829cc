/* rtlctl run --no-children (children.c). */
#ifndef RTL_PRELOAD_CHILDREN_H
#define RTL_PRELOAD_CHILDREN_H

/* With RTL_NO_CHILDREN=1: take the preload out of LD_PRELOAD and every
 * RTL_* variable out of the environment. Call once, at the end of the
 * preload's start, after everything that reads them. */
void rtl_children_start(void);

#endif
