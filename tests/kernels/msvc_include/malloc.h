/* Stand-in for the MSVC CRT's malloc.h (README.md), which clang's mm_malloc.h includes. */
#pragma once
#include <stddef.h>
void *_aligned_malloc(size_t size, size_t alignment);
void _aligned_free(void *block);
