// C++ sites and frames for the report's names (tests/bats/report_names.bats):
// nodes made by operator new in a function of a namespace, then written
// once each by a function template (the node's first write: it traps), so that the report's sites and
// backtraces hold mangled symbols with their demangled forms beside them,
// and, built with -g, the source line of each.
#include <cstdio>
#include <cstdlib>

namespace shapes {

struct node {
	long value[13];
}; // 104 bytes: the policy's size

__attribute__((noinline)) node *make_node()
{
	node *volatile n = new node; // the allocating site (volatile: a
	return n;                    // call returning here, not a jump)
}

template <typename T>
__attribute__((noinline)) void touch(T *t, long v)
{
	t->value[1] = v; // the write that traps
}

} // namespace shapes

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	shapes::node **all = new shapes::node *[n];
	long sum = 0;

	for (int i = 0; i < n; i++)
		all[i] = shapes::make_node();
	for (int i = 0; i < n; i++) {
		shapes::touch(all[i], i);
		sum += all[i]->value[1];
	}
	for (int i = 0; i < n; i++)
		delete all[i];
	delete[] all;
	printf("%d nodes, sum %ld\n", n, sum);
	return 0;
}
