/* fork (fork.c): the handlers init.c registers with pthread_atfork, which
 * give a child its own copy of the views. */
#ifndef RTL_FORK_H
#define RTL_FORK_H

void rtl_fork_prepare(void);
void rtl_fork_parent(void);
void rtl_fork_child(void);

#endif
