/* Stand-in for the MSVC CRT's stdlib.h (README.md): the declarations csrc/oipcodec uses. */
#pragma once
#include <stddef.h>
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *block, size_t size);
void free(void *block);
__declspec(noreturn) void abort(void);
char *getenv(const char *name);
double strtod(const char *text, char **end);
int atoi(const char *text);
