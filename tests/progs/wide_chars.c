/* mbstowcs and wcstombs between small malloc'd buffers, as CPython
 * decodes its arguments: the lengths glibc returns must be the lengths of
 * the strings (under swizzle they came out 0x800000010: two pointers into
 * one buffer subtracted across views). */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int main(void)
{
	static const char *const words[] = { "python3", "-c", "print(1)",
		                             "héllo wörld", "" };
	setlocale(LC_ALL, "C.UTF-8");
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(words[i]) + 1;
		char *src = malloc(n), *back = malloc(4 * n);
		wchar_t *w = malloc(n * sizeof(wchar_t));
		size_t got, again;

		memcpy(src, words[i], n);
		got = mbstowcs(w, src, n);
		again = wcstombs(back, w, 4 * n);
		printf("'%s': %zu wide, %zu back, %s\n", src, got, again,
		       strcmp(src, back) ? "differs" : "same");
		free(src);
		free(back);
		free(w);
	}
	return 0;
}
