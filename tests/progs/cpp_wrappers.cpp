// Allocations through wrappers, for the sites the report charges them to
// (tests/bats/report_names.bats): ns::K::fill pushes N strings into a
// vector (std::string's and the vector's allocations, made in libstdc++ and
// in std:: templates instantiated here, all through operator new), and
// ns::use_mine takes N blocks from my_alloc, a wrapper of malloc that a
// policy names in site_skip. Each block is written once after it is made.
// Built twice: cpp_wrappers with fill a function of its own, and
// cpp_wrappers_inlined (FILL_INLINED) with fill inlined into main, where
// only the debug information names it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" __attribute__((noinline)) void *my_alloc(size_t n)
{
	void *volatile p = malloc(n); // volatile: a call returning here
	return p;
}

namespace ns {

struct K {
	std::vector<std::string> v;

#ifdef FILL_INLINED
	__attribute__((always_inline)) void fill(int n)
#else
	__attribute__((noinline)) void fill(int n)
#endif
	{
		for (int i = 0; i < n; i++)
			v.push_back(std::string(40 + i % 20, 'a' + i % 26));
	}
};

__attribute__((noinline)) char **use_mine(int n)
{
	char **b = static_cast<char **>(calloc(n, sizeof(char *)));

	for (int i = 0; i < n; i++)
		b[i] = static_cast<char *>(my_alloc(72));
	return b;
}

} // namespace ns

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	ns::K k;
	char **b;
	size_t sum = 0;

	k.fill(n);
	b = ns::use_mine(n);
	for (auto &s : k.v) {
		s[0] = 'z';
		sum += s.size();
	}
	for (int i = 0; i < n; i++) {
		memset(b[i], 1, 72);
		free(b[i]);
	}
	free(b);
	printf("%zu strings, %zu bytes\n", k.v.size(), sum);
	return 0;
}
