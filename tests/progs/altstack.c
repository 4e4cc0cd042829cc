/* An alternate signal stack in malloc'd memory, as libsigsegv (gawk) sets
 * one: a signal delivered on it must run its handler, and the program
 * reads back the stack it set. Prints what it saw; exit 0 if all held.
 * altstack [SIZE [ROUNDS [freed]]]: a stack of SIZE bytes (65536), and
 * ROUNDS signals 3 ms apart (1), for a policy's epoch to re-protect the
 * block in between. freed: the stack is freed while it is still the stack
 * (ruby frees its own so at exit) and 64 blocks of its size are made and
 * written before the signals: one may be handed its address. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t ran;
static char *stack_mem;
static size_t stack_size = 65536;

static void on_usr1(int sig)
{
	char here;

	(void)sig;
	/* The handler runs on an alternate stack (ours, or rtl's stand-in). */
	stack_t now;
	sigaltstack(NULL, &now);
	ran = (now.ss_flags & SS_ONSTACK) ? 2 : 1;
	(void)here;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	stack_t ss, back;
	long rounds = argc > 2 ? strtol(argv[2], NULL, 0) : 1, on_stack = 0;
	int freed = argc > 3 && !strcmp(argv[3], "freed");
	char *others[64];

	if (argc > 1)
		stack_size = strtoul(argv[1], NULL, 0);
	stack_mem = malloc(stack_size);
	memset(stack_mem, 1, stack_size);
	ss.ss_sp = stack_mem;
	ss.ss_size = stack_size;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) < 0) {
		perror("sigaltstack");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	if (freed) {
		free(stack_mem);
		for (int k = 0; k < 64; k++) {
			others[k] = malloc(stack_size);
			memset(others[k], 2, stack_size);
		}
	}
	for (long i = 0; i < rounds; i++) {
		if (i)
			usleep(3000);
		ran = 0;
		raise(SIGUSR1);
		on_stack += ran == 2;
	}
	sigaltstack(NULL, &back);
	if (freed) {
		/* The stack's bytes are not the program's any more: only the
		 * signals are told. */
		printf("%ld of %ld signals on the freed alternate stack\n", on_stack, rounds);
		ss.ss_flags = SS_DISABLE;
		sigaltstack(&ss, NULL);
		for (int k = 0; k < 64; k++)
			free(others[k]);
		return on_stack == rounds ? 0 : 1;
	}
	printf("handler %s, stack read back %s\n",
	       ran == 2 ? "ran on the alternate stack" : ran ? "ran"
	                                                     : "did not run",
	       back.ss_sp == stack_mem && back.ss_size == stack_size ? "as set" : "changed");
	if (rounds > 1)
		printf("%ld of %ld signals on the alternate stack\n", on_stack, rounds);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(stack_mem);
	return ran == 2 && on_stack == rounds && back.ss_sp == stack_mem ? 0 : 1;
}
