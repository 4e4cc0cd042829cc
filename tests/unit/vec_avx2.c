/* The vectorised loops built for AVX2 (-O3 -mavx2). */
#define K(x) avx2_##x
#include "tests/unit/vec_kernels.h"
