/* The C kernels' entry points over their edge cases, printed as text: tools/windows_abi_check.sh
 * builds this for Linux and, with mingw-w64, for Windows x64 (run under wine), and requires the
 * two outputs to be the same bytes.
 *
 * Windows is LLP64: long is 32 bits there while pointers, size_t and ptrdiff_t are 64, so a
 * kernel that counts, sizes or offsets through long is right on Linux and wrong on Windows.
 * The cases are the ones where that shows: offsets and counts near 2**31 and 2**32 (computed,
 * not allocated: oipcodec_write_nested's row offsets with a row writer that only records them),
 * values at each integer type's limits, every datatype's writer and reader, the varints of
 * protobuf's 32- and 64-bit fields, the half-float conversions. Each case also checks itself
 * where the answer is known here, so a wrong answer on both platforms fails too. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/common/endian.h"
#include "oipcodec/common/half.h"
#include "oipcodec/protobuf/varint.h"
#include "oipcodec/read/json.h"
#include "oipcodec/write/json.h"

static int failures;

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            printf("FAIL line %d: %s\n", __LINE__, what);                                  \
        }                                                                                  \
    } while (0)

/* ---- oipcodec_write_nested: row offsets past 2**31 and 2**32 ---- */

static uintptr_t nested_base;
static int64_t nested_offsets[8];
static int64_t nested_lengths[8];
static int nested_rows;

/* Records the row's offset from the start and its length; writes one byte. The data pointer
 * is never read: the offsets point far past the small buffer the driver passes. */
static char *record_row(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    (void)ctx;
    if (nested_rows < 8) {
        nested_offsets[nested_rows] = (int64_t)((uintptr_t)data - nested_base);
        nested_lengths[nested_rows] = (int64_t)n;
    }
    nested_rows++;
    *out++ = 'x';
    return out;
}

static void nested_case(const ptrdiff_t *shape, int ndim, ptrdiff_t itemsize,
                        const int64_t *expected, int rows, const char *text) {
    static char data[16];
    char out[256];
    char *end;
    int r;
    nested_base = (uintptr_t)data;
    nested_rows = 0;
    end = oipcodec_write_nested(data, itemsize, shape, ndim, out, record_row, NULL);
    *end = 0;
    printf("nested itemsize=%lld rows=%d text=%s", (long long)itemsize, nested_rows, out);
    for (r = 0; r < nested_rows && r < 8; r++) {
        printf(" %lld/%lld", (long long)nested_offsets[r], (long long)nested_lengths[r]);
        CHECK(nested_offsets[r] == expected[r], "row offset");
        CHECK(nested_lengths[r] == (int64_t)shape[ndim - 1], "row length");
    }
    printf("\n");
    CHECK(nested_rows == rows, "row count");
    CHECK(strcmp(out, text) == 0, "nested text");
}

static void nested_cases(void) {
    const int64_t two31 = INT64_C(2147483648), two32 = INT64_C(4294967296);
    {
        const ptrdiff_t shape[2] = {3, (ptrdiff_t)(two32 + 5)};
        const int64_t expected[3] = {0, (two32 + 5) * 8, 2 * (two32 + 5) * 8};
        nested_case(shape, 2, 8, expected, 3, "[[x],[x],[x]]");
    }
    {
        const ptrdiff_t shape[2] = {2, (ptrdiff_t)two31};
        const int64_t expected[2] = {0, two31};
        nested_case(shape, 2, 1, expected, 2, "[[x],[x]]");
    }
    {
        const ptrdiff_t shape[2] = {2, (ptrdiff_t)(two31 - 1)};
        const int64_t expected[2] = {0, (two31 - 1) * 2};
        nested_case(shape, 2, 2, expected, 2, "[[x],[x]]");
    }
    {
        const ptrdiff_t shape[3] = {2, 2, (ptrdiff_t)(two32 - 1)};
        const int64_t expected[4] = {0, (two32 - 1) * 4, (two32 - 1) * 8, (two32 - 1) * 12};
        nested_case(shape, 3, 4, expected, 4, "[[[x],[x]],[[x],[x]]]");
    }
    {
        /* a row count near 2**16 and a last dimension of 2**16 + 1: nrows * rowlen > 2**32 */
        const ptrdiff_t shape[2] = {65537, 65537};
        const int64_t expected[4] = {0, 65537 * INT64_C(2), 2 * 65537 * INT64_C(2),
                                     3 * 65537 * INT64_C(2)};
        static char out[65537 * 4 + 16];
        char *end;
        int r;
        nested_base = (uintptr_t)out;
        nested_rows = 0;
        end = oipcodec_write_nested(out, 2, shape, 2, out, record_row, NULL);
        printf("nested 65537x65537 rows=%d bytes=%lld", nested_rows, (long long)(end - out));
        for (r = 0; r < 4; r++) {
            printf(" %lld", (long long)nested_offsets[r]);
            CHECK(nested_offsets[r] == expected[r], "row offset");
        }
        printf("\n");
        CHECK(nested_rows == 65537, "row count");
        CHECK(end - out == 65537 * 4 + 1, "nested bytes");
    }
}

/* ---- the row writers of every datatype ---- */

static uint64_t lcg_state = 0x9E3779B97F4A7C15ull;

static uint64_t lcg(void) {
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return lcg_state ^ (lcg_state >> 29);
}

#define ROWS 300
static char row_text[ROWS * 40 + 64];

static void print_row(const char *name, oipcodec_row_fn row, const void *data, ptrdiff_t n,
                      const void *ctx, const char *expected) {
    char *end = row(data, n, row_text, ctx);
    *end = 0;
    printf("row %s n=%lld %s\n", name, (long long)n, row_text);
    if (expected) {
        CHECK(strcmp(row_text, expected) == 0, name);
    }
}

/* Each integer type: its limits and the values next to 2**31 and 2**32 that fit, then ROWS
 * values of every magnitude (long rows take the vector paths). */
#define INT_CASE(CTYPE, ROW, EXPECTED, ...)                                                \
    do {                                                                                   \
        static const CTYPE edge[] = {__VA_ARGS__};                                         \
        CTYPE many[ROWS];                                                                  \
        int i;                                                                             \
        print_row(#ROW " edges", ROW, edge, sizeof edge / sizeof edge[0], NULL, EXPECTED); \
        for (i = 0; i < ROWS; i++) {                                                       \
            many[i] = (CTYPE)(lcg() >> (lcg() & 63));                                      \
        }                                                                                  \
        print_row(#ROW, ROW, many, ROWS, NULL, NULL);                                      \
    } while (0)

static void row_cases(void) {
    INT_CASE(uint8_t, oipcodec_row_u8, "0,1,127,128,255", 0, 1, 127, 128, 255);
    INT_CASE(int8_t, oipcodec_row_i8, "-128,-1,0,127", -128, -1, 0, 127);
    INT_CASE(uint16_t, oipcodec_row_u16, "0,32768,65535", 0, 32768, 65535);
    INT_CASE(int16_t, oipcodec_row_i16, "-32768,-1,32767", -32768, -1, 32767);
    INT_CASE(uint32_t, oipcodec_row_u32, "0,2147483647,2147483648,4294967295", 0, 2147483647u,
             2147483648u, 4294967295u);
    INT_CASE(int32_t, oipcodec_row_i32, "-2147483648,-1,0,2147483647", INT32_MIN, -1, 0,
             INT32_MAX);
    INT_CASE(uint64_t, oipcodec_row_u64,
             "2147483648,4294967295,4294967296,9223372036854775808,18446744073709551615",
             2147483648ull, 4294967295ull, 4294967296ull, 9223372036854775808ull,
             18446744073709551615ull);
    INT_CASE(int64_t, oipcodec_row_i64,
             "-9223372036854775808,-4294967297,-2147483649,2147483648,4294967296,"
             "9223372036854775807",
             INT64_MIN, -INT64_C(4294967297), -INT64_C(2147483649), INT64_C(2147483648),
             INT64_C(4294967296), INT64_MAX);
    {
        static const uint8_t b[] = {0, 1, 1, 0, 0, 0, 1, 1, 1};
        print_row("oipcodec_row_bool", oipcodec_row_bool, b, 9, NULL,
                  "false,true,true,false,false,false,true,true,true");
    }
    {
        static const float f[] = {0.0f, -0.0f, 1.5f, 2147483648.0f, 4294967296.0f,
                                  1e-45f, 3.4028235e38f, 0.1f};
        float many[ROWS];
        int i;
        print_row("oipcodec_row_f32 edges", oipcodec_row_f32, f, 8, NULL,
                  "0.0,-0.0,1.5,2147483600.0,4294967300.0,1e-45,3.4028235e+38,0.1");
        for (i = 0; i < ROWS; i++) {
            uint32_t u = (uint32_t)lcg();
            memcpy(&many[i], &u, 4);
            if (oipcodec_f32_nonfinite(u)) {
                many[i] = 1.0f;
            }
        }
        print_row("oipcodec_row_f32", oipcodec_row_f32, many, ROWS, NULL, NULL);
    }
    {
        static const double d[] = {0.0, -0.0, 2147483648.0, 4294967296.0, 5e-324, 1e300, 0.1};
        double many[ROWS];
        int i;
        print_row("oipcodec_row_f64 edges", oipcodec_row_f64, d, 7, NULL,
                  "0.0,-0.0,2147483648.0,4294967296.0,5e-324,1e+300,0.1");
        for (i = 0; i < ROWS; i++) {
            uint64_t u = lcg();
            memcpy(&many[i], &u, 8);
            if (oipcodec_f64_nonfinite(u)) {
                many[i] = 1.0;
            }
        }
        print_row("oipcodec_row_f64", oipcodec_row_f64, many, ROWS, NULL, NULL);
    }
    {
        static const uint16_t h[] = {0x0000, 0x8000, 0x3C00, 0x7BFF, 0x0001, 0x3555};
        char *table = malloc((size_t)65536 * (OIPCODEC_HALF_SLOT + 1));
        int bf16;
        CHECK(table != NULL, "half table");
        for (bf16 = 0; bf16 < 2 && table; bf16++) {
            CHECK(oipcodec_build_half_table(table, bf16) == 0, "half table built");
            print_row(bf16 ? "oipcodec_row_half bf16" : "oipcodec_row_half fp16",
                      oipcodec_row_half, h, 6, table,
                      bf16 ? "0.0,-0.0,0.0078,2.65e+36,9e-41,7.93e-7"
                           : "0.0,-0.0,1.0,65500.0,6e-8,0.3333");
        }
        free(table);
    }
    {
        static const unsigned char s0[] = "plain", s1[] = "quote\" back\\ nl\n", s2[] = "\xc3\xa9";
        oipcodec_piece p[3] = {{s0, 5}, {s1, 16}, {s2, 2}};
        print_row("oipcodec_row_strings", oipcodec_row_strings, p, 3, NULL,
                  "\"plain\",\"quote\\\" back\\\\ nl\\n\",\"\xc3\xa9\"");
        CHECK(oipcodec_escaped_size(s1, 16) == 19, "escaped size");
        CHECK(oipcodec_utf8_valid_prefix((const unsigned char *)"ab\xff", 3) == 2, "utf8");
    }
    {
        static const double d[] = {1.0, 0.0 / 0.0, 2.0, -1.0 / 0.0};
        ptrdiff_t first = -1, count = oipcodec_count_nonfinite(d, 4, 1, &first);
        printf("nonfinite count=%lld first=%lld\n", (long long)count, (long long)first);
        CHECK(count == 2 && first == 1, "nonfinite");
    }
}

/* ---- the JSON readers: integer limits of each width, floats ---- */

static void read_ints(int itemsize, uint64_t max_positive, uint64_t max_negative) {
    static const char text[] =
        "127,128,-128,-129,32767,32768,-32768,-32769,2147483647,2147483648,-2147483648,"
        "-2147483649,4294967295,4294967296,9223372036854775807,9223372036854775808,"
        "-9223372036854775808,-9223372036854775809,18446744073709551615,18446744073709551616,";
    const unsigned char *start = (const unsigned char *)text, *end = start + sizeof text - 1;
    const unsigned char *p = start;
    unsigned char out[8 * 32];
    ptrdiff_t total = 0;
    printf("int_run itemsize=%d:", itemsize);
    while (p < end) {
        ptrdiff_t n = oipcodec_int_run(&p, end, out + itemsize * total, 32 - total, itemsize,
                                       max_positive, max_negative);
        int negative, overflow;
        uint64_t magnitude;
        ptrdiff_t k;
        for (k = total; k < total + n; k++) {
            int64_t v;
            if (itemsize == 1) v = (int8_t)out[k];
            else if (itemsize == 2) v = (int16_t)oipcodec_load_le16(out + 2 * k);
            else if (itemsize == 4) v = (int32_t)oipcodec_load_le32(out + 4 * k);
            else v = (int64_t)oipcodec_load_le64(out + 8 * k);
            printf(" %lld", (long long)v);
        }
        total += n;
        /* the lane stops before what it does not take: the general reader says why */
        p = oipcodec_scan_integer(p, end, &negative, &magnitude, &overflow);
        CHECK(p != NULL, "scan_integer");
        if (!p) {
            break;
        }
        printf(" [%s%llu%s]", negative ? "-" : "", (unsigned long long)magnitude,
               overflow ? " overflow" : "");
        if (p < end && *p == ',') {
            p++;
        }
    }
    printf("\n");
}

static void read_cases(void) {
    static const char floats[] =
        "0.1,2147483648,4294967296.5,1e-45,3.4028235e38,5e-324,1.7976931348623157e308,-0.0,";
    /* 128 bytes before the text: the FP32 lane computes end - 128 (its last full block) */
    static unsigned char text[128 + sizeof floats];
    const unsigned char *start = text + 128;
    const unsigned char *end = start + sizeof floats - 1;
    static const int formats[] = {OIPCODEC_OUT_FP16, OIPCODEC_OUT_FP32, OIPCODEC_OUT_FP64,
                                  OIPCODEC_OUT_BF16};
    int f;
    memcpy(text + 128, floats, sizeof floats);
    read_ints(1, 127, 128);
    read_ints(2, 32767, 32768);
    read_ints(4, 2147483647, 2147483648ull);
    read_ints(8, 9223372036854775807ull, 9223372036854775808ull);
    for (f = 0; f < 4; f++) {
        const unsigned char *p = start;
        unsigned char out[8 * 16];
        ptrdiff_t n = oipcodec_float_run(&p, end, out, 16, formats[f]), k;
        ptrdiff_t width = formats[f] == OIPCODEC_OUT_FP64   ? 8
                          : formats[f] == OIPCODEC_OUT_FP32 ? 4
                                                            : 2;
        printf("float_run format=%d n=%lld consumed=%lld:", formats[f], (long long)n,
               (long long)(p - start));
        for (k = 0; k < n * width; k++) {
            printf("%02x", out[k]);
        }
        printf("\n");
    }
    {
        const unsigned char *p = start;
        while (p < end) {
            oipcodec_decimal d;
            int integer;
            uint64_t bits = 0;
            int ok;
            p = oipcodec_scan_number(p, end, &d, &integer);
            CHECK(p != NULL, "scan_number");
            if (!p) {
                break;
            }
            ok = oipcodec_decimal_to_f64bits(&d, &bits);
            printf("number w=%llu q=%lld neg=%d ok=%d bits=%016llx\n", (unsigned long long)d.w,
                   (long long)d.q, d.negative, ok, (unsigned long long)bits);
            p++; /* the comma */
        }
    }
}

/* ---- protobuf varints of 32- and 64-bit fields ---- */

static void varint_cases(void) {
    static const uint64_t values[] = {0, 127, 128, 2147483647ull, 2147483648ull,
                                      4294967295ull, 4294967296ull, 9223372036854775808ull,
                                      18446744073709551615ull};
    static const int sizes[] = {1, 1, 2, 5, 5, 5, 5, 10, 10};
    uint8_t buf[16 * 10], decoded[16 * 8];
    uint8_t *end = buf;
    ptrdiff_t count = -1, bad = -1;
    size_t i, n = sizeof values / sizeof values[0];
    for (i = 0; i < n; i++) {
        CHECK(oipcodec_pb_varint_size(values[i]) == sizes[i], "varint size");
    }
    end = oipcodec_pb_write_varints(buf, (const uint8_t *)values, n);
    printf("varints bytes=%lld size=%llu:", (long long)(end - buf),
           (unsigned long long)oipcodec_pb_varints_size((const uint8_t *)values, n));
    CHECK((size_t)(end - buf) == oipcodec_pb_varints_size((const uint8_t *)values, n), "size");
    for (i = 0; i < (size_t)(end - buf); i++) {
        printf("%02x", buf[i]);
    }
    printf("\n");
    CHECK(oipcodec_pb_count_packed(buf, end, &count, &bad) == OIPCODEC_PB_OK, "count_packed");
    CHECK(count == (ptrdiff_t)n, "packed count");
    {
        int field;
        for (field = 1; field <= 5; field++) {
            ptrdiff_t got = oipcodec_pb_decode_packed(buf, end, decoded, field), k;
            printf("packed field=%d n=%lld:", field, (long long)got);
            for (k = 0; k < got; k++) {
                if (field == 1) printf(" %d", decoded[k]);
                else if (field == 2) printf(" %d", (int)((int32_t *)(void *)decoded)[k]);
                else if (field == 3) printf(" %lld", (long long)((int64_t *)(void *)decoded)[k]);
                else if (field == 4) printf(" %u", (unsigned)((uint32_t *)(void *)decoded)[k]);
                else printf(" %llu", (unsigned long long)((uint64_t *)(void *)decoded)[k]);
            }
            printf("\n");
        }
    }
    {
        /* a negative int32 is its 64-bit two's complement: 10 bytes, read back as -1 */
        uint8_t neg[10];
        const uint8_t *p = neg;
        uint64_t v = 0;
        uint8_t *stop = oipcodec_pb_write_varint(neg, (uint64_t)(int64_t)-1);
        CHECK(stop - neg == 10, "negative int32 size");
        CHECK(oipcodec_pb_varint(&p, stop, &v) == OIPCODEC_PB_OK && (int32_t)v == -1, "neg");
    }
}

/* ---- half floats and byte order ---- */

static void half_cases(void) {
    static const double d[] = {0.0, 65504.0, 65520.0, 5.960464477539063e-08, 1e-8,
                               3.3895313892515355e38, 2147483648.0, 4294967296.0};
    uint8_t bytes[8];
    size_t i;
    printf("half:");
    for (i = 0; i < sizeof d / sizeof d[0]; i++) {
        printf(" %04x/%04x/%04x/%04x", oipcodec_f64_to_fp16(d[i]), oipcodec_f64_to_bf16(d[i]),
               oipcodec_f32_to_fp16((float)d[i]), oipcodec_f32_to_bf16((float)d[i]));
    }
    printf("\n");
    CHECK(oipcodec_f64_to_fp16(65520.0) == 0x7C00, "fp16 overflow to infinity");
    CHECK(oipcodec_fp16_to_f32bits(0x3C00) == 0x3F800000u, "fp16 one");
    oipcodec_store_le64(bytes, 0x0102030405060708ull);
    CHECK(bytes[0] == 8 && oipcodec_load_le64(bytes) == 0x0102030405060708ull, "le64");
    oipcodec_store_le32(bytes, 0x80000000u);
    CHECK(oipcodec_load_le32(bytes) == 0x80000000u && bytes[3] == 0x80, "le32");
}

int main(void) {
    /* Not compared between the platforms: this line says which data model the build has. */
    fprintf(stderr, "model: long %d, pointer %d, size_t %d, ptrdiff_t %d; simd features %d\n",
            (int)sizeof(long), (int)sizeof(void *), (int)sizeof(size_t), (int)sizeof(ptrdiff_t),
            oipcodec_simd_features());
    nested_cases();
    row_cases();
    read_cases();
    varint_cases();
    half_cases();
    printf("failures %d\n", failures);
    return failures != 0;
}
