/* Builds and walks a linked list, a table of strings and a buffer through
 * plain pointers and glibc's string functions. Under a policy whose rules
 * say protect = read or none, the first access to each block traps and is
 * granted, and stale pointers keep trapping: the output must still be the
 * same as without rtl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	long value;
	char name[24];
};

int main(void)
{
	struct node *head = NULL;
	char *words[200], *text;
	long sum = 0;
	size_t len = 0;

	for (long i = 0; i < 500; i++) {
		struct node *n = malloc(sizeof(*n));
		n->next = head;
		n->value = i * 3;
		snprintf(n->name, sizeof(n->name), "node-%ld", i);
		head = n;
	}
	for (struct node *n = head; n; n = n->next)
		sum += n->value + (long)strlen(n->name);
	for (int i = 0; i < 200; i++) {
		char tmp[40];
		snprintf(tmp, sizeof(tmp), "word %d of the table", i);
		words[i] = strdup(tmp);
	}
	text = calloc(1, 200 * 40);
	for (int i = 0; i < 200; i += 7) {
		strcat(text, words[i]);
		strcat(text, "; ");
	}
	len = strlen(text);
	text = realloc(text, len + 1);
	printf("list sum %ld, text %zu bytes, word 123: %s\n", sum, len,
	       words[123]);
	printf("text starts: %.40s\n", text);
	while (head) {
		struct node *n = head->next;
		free(head);
		head = n;
	}
	for (int i = 0; i < 200; i++)
		free(words[i]);
	free(text);
	return 0;
}
