/* Loops for the compiler to vectorise (vectorised.c): built twice, as
 * vec_avx2.c (-O3 -mavx2) and vec_avx512.c (-O3 -mavx512f), with K()
 * naming each build's copy. No indirect indexing: that would make gathers,
 * which rtl refuses. */
#include <stddef.h>
#include <stdint.h>

long K(sum_i32)(const int *a, size_t n)
{
	long s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i];
	return s;
}

void K(saxpy)(float *restrict y, const float *restrict x, float a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] += a * x[i];
}

void K(add3)(int *restrict d, const int *restrict a, const int *restrict b,
             size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = a[i] + b[i] * 3;
}

void K(xor_bytes)(uint8_t *restrict d, const uint8_t *restrict s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] ^= s[i];
}

void K(inplace)(int *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = a[i] * 5 + 1;
}
