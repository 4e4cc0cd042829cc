/* The vectorised loops built for AVX-512F (-O3 -mavx512f): run only where
 * the CPU has it, decoded everywhere. */
#define K(x) avx512_##x
#include "tests/unit/vec_kernels.h"
