/* Stand-in for the MSVC CRT's math.h (README.md): the declarations csrc/oipcodec uses. */
#pragma once
double ldexp(double x, int exp);
double floor(double x);
double ceil(double x);
double fabs(double x);
#define HUGE_VAL __builtin_huge_val()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
