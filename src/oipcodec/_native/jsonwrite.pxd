# Declarations of csrc/oipcodec/write/json.h: JSON text of tensor elements.

from libc.stddef cimport ptrdiff_t


cdef extern from "oipcodec/write/json.h" nogil:
    int OIPCODEC_HALF_SLOT
    int OIPCODEC_F32_MAX
    int OIPCODEC_F32_SLACK
    int OIPCODEC_F64_MAX
    int OIPCODEC_F64_SLACK

    ctypedef char *(*oipcodec_row_fn)(const void *data, ptrdiff_t n, char *out,
                                      const void *ctx) noexcept nogil

    char *oipcodec_row_u8(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_u16(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_u32(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_u64(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_i8(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_i16(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_i32(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_i64(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_bool(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_half(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_f32(const void *data, ptrdiff_t n, char *out, const void *ctx)
    char *oipcodec_row_f64(const void *data, ptrdiff_t n, char *out, const void *ctx)

    char *oipcodec_write_nested(const char *data, ptrdiff_t itemsize, const ptrdiff_t *shape,
                                int ndim, char *out, oipcodec_row_fn row, const void *ctx)

    int oipcodec_build_half_table(char *table, int bf16)

    ptrdiff_t oipcodec_count_nonfinite(const void *data, ptrdiff_t n, int wide,
                                        ptrdiff_t *first)
    const char *oipcodec_nonfinite_token(const void *data, ptrdiff_t i, int wide, size_t *len)

    ctypedef struct oipcodec_piece:
        const unsigned char *data
        ptrdiff_t size

    char *oipcodec_row_strings(const void *data, ptrdiff_t n, char *out, const void *ctx)
    ptrdiff_t oipcodec_utf8_valid_prefix(const unsigned char *s, ptrdiff_t n)
    size_t oipcodec_escaped_size(const unsigned char *s, ptrdiff_t n)
    char *oipcodec_write_string(char *out, const unsigned char *s, ptrdiff_t n)
