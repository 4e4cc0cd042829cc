/* The libFuzzer entry point every target defines. Built two ways: with
 * clang's -fsanitize=fuzzer for `make fuzz`, and with replay.c's main() for
 * `make test`, which runs each target once over its corpus. */
#ifndef RTL_FUZZ_H
#define RTL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
