/* Stand-in for the MSVC CRT's setjmp.h (README.md), which clang's intrin.h includes. */
#pragma once
typedef struct { unsigned __int64 part[2]; } _SETJMP_FLOAT128;
typedef _SETJMP_FLOAT128 jmp_buf[16];
