// Table 2, column 4: the same program with the C++ region pointer. Declaring
// x as rtl::region_ptr<char> registers it (its constructor calls region_ptr,
// its destructor region_ptr_free); everything else reads as with char *.
#include <rtl/region.hpp>

#include "examples/step.h"

#define N 1000

extern "C" void column4(void)
{
	rtl::region_ptr<char> x;
	int a;

	x = static_cast<char *>(region_alloc(N, nullptr));
	region_handler(x, reg_handler);
	region_protect(x, PROT_READ);
	STEP(a = x[0]); /* no trap */
	STEP(x[1] = 1); /* trap */
	STEP(x[2] = 2); /* no trap */
	(void)a;
	if (x[1] != 1 || x[2] != 2)
		printf("  WRONG VALUES");
}
