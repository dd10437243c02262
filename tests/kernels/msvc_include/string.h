/* Stand-in for the MSVC CRT's string.h (README.md): the declarations csrc/oipcodec uses. */
#pragma once
#include <stddef.h>
void *memcpy(void *dst, const void *src, size_t size);
void *memmove(void *dst, const void *src, size_t size);
void *memset(void *dst, int value, size_t size);
int memcmp(const void *a, const void *b, size_t size);
void *memchr(const void *buf, int value, size_t size);
size_t strlen(const char *text);
