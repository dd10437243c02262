/* Stand-in for the MSVC CRT's stdio.h (README.md): the declarations csrc/oipcodec uses. */
#pragma once
#include <stddef.h>
typedef struct _iobuf FILE;
FILE *__acrt_iob_func(unsigned index);
#define stderr (__acrt_iob_func(2))
int fprintf(FILE *stream, const char *format, ...);
int snprintf(char *buf, size_t size, const char *format, ...);
