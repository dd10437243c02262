# Declarations of csrc/oipcodec/read/json.h: JSON number tokens to correctly rounded binary
# values (Clinger's fast path, Eisel-Lemire, midpoint detection for narrower formats) and JSON
# string validation/decoding. The header comment documents the algorithms.
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint64_t

cdef extern from "oipcodec/read/json.h" nogil:
    ctypedef struct oipcodec_decimal:
        uint64_t w
        int64_t q
        int negative
        int truncated

    const unsigned char oipcodec_json_delim[256]
    bint oipcodec_is_ws(unsigned char c)
    const unsigned char *oipcodec_skip_ws(const unsigned char *p, const unsigned char *end)
    const unsigned char *oipcodec_scan_number(
        const unsigned char *p, const unsigned char *end, oipcodec_decimal *out, int *integer)
    const unsigned char *oipcodec_scan_integer(
        const unsigned char *p, const unsigned char *end, int *negative, uint64_t *magnitude,
        int *overflow)
    int oipcodec_eisel_lemire(uint64_t w, int64_t q, uint64_t *bits)
    int oipcodec_decimal_to_f64bits(const oipcodec_decimal *d, uint64_t *bits)
    bint oipcodec_is_midpoint(uint64_t bits, int p, int emin, int emax)
    const unsigned char *oipcodec_scan_string(
        const unsigned char *p, const unsigned char *end, int *escaped)
    ptrdiff_t oipcodec_float_run(
        const unsigned char **pp, const unsigned char *end, unsigned char *out, ptrdiff_t limit,
        int format)
    ptrdiff_t oipcodec_int_run(
        const unsigned char **pp, const unsigned char *end, unsigned char *out, ptrdiff_t limit,
        int itemsize, uint64_t max_positive, uint64_t max_negative)
    size_t oipcodec_decode_string(
        const unsigned char *p, const unsigned char *stop, unsigned char *out)
