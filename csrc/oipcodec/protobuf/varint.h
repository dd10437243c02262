/* Protobuf varint loops for the ModelInfer wire kernel (src/oipcodec/_native/pbwire.pyx).
 *
 * "Varints are encoded as little-endian base-128 groups of 7 bits, the high bit of each byte
 * set when more bytes follow; at most 10 bytes encode a 64-bit value" (protobuf encoding
 * guide). int32 fields keep the low 32 bits of the decoded value, bool fields mean "not
 * zero"; a negative int32 or int64 is written as its 64-bit two's complement (10 bytes).
 *
 * The callers check every length first; these loops never read outside [p, end). */
#ifndef OIPCODEC_PROTOBUF_VARINT_H
#define OIPCODEC_PROTOBUF_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OIPCODEC_PB_OK 0
#define OIPCODEC_PB_TRUNCATED 1
#define OIPCODEC_PB_OVERLONG 2

/* One varint at *p; advances *p past it. */
static inline int oipcodec_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    const uint8_t *q = *p;
    uint64_t value = 0;
    int shift;
    for (shift = 0;; shift += 7) {
        uint8_t byte;
        if (q >= end) return OIPCODEC_PB_TRUNCATED;
        byte = *q++;
        if (shift == 63 && (byte & 0x80)) return OIPCODEC_PB_OVERLONG;
        value |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) break;
    }
    *out = value;
    *p = q;
    return OIPCODEC_PB_OK;
}

/* Counts the varints of a packed field after checking each is well formed. On error,
 * *bad is the offset (from p) of the varint at fault. */
static inline int oipcodec_pb_count_packed(const uint8_t *p, const uint8_t *end,
                                           ptrdiff_t *count, ptrdiff_t *bad) {
    const uint8_t *start = p;
    ptrdiff_t n = 0;
    while (p < end) {
        const uint8_t *first = p;
        int length = 0;
        /* A run of continuation bytes ends at a byte below 0x80; the 10th byte may not
         * continue. */
        while (p < end && (*p & 0x80)) {
            if (++length == 10) {
                *bad = first - start;
                return OIPCODEC_PB_OVERLONG;
            }
            p++;
        }
        if (p == end) {
            *bad = first - start;
            return OIPCODEC_PB_TRUNCATED;
        }
        p++;
        n++;
    }
    *count = n;
    return OIPCODEC_PB_OK;
}

/* Decodes well-formed packed varints (checked by oipcodec_pb_count_packed) into out, whose
 * element type follows the InferTensorContents field: 1 bool (1 byte), 2 int32, 3 int64,
 * 4 uint32, 5 uint64. Returns the number decoded. */
static inline ptrdiff_t oipcodec_pb_decode_packed(const uint8_t *p, const uint8_t *end,
                                                  void *out, int field) {
    ptrdiff_t n = 0;
    while (p < end) {
        uint64_t value = 0;
        int shift = 0;
        uint8_t byte;
        do {
            byte = *p++;
            if (shift < 64) value |= (uint64_t)(byte & 0x7F) << shift;
            shift += 7;
        } while (byte & 0x80);
        switch (field) {
        case 1: ((uint8_t *)out)[n] = value != 0; break;
        case 2: ((int32_t *)out)[n] = (int32_t)(uint32_t)value; break;
        case 3: ((int64_t *)out)[n] = (int64_t)value; break;
        case 4: ((uint32_t *)out)[n] = (uint32_t)value; break;
        default: ((uint64_t *)out)[n] = value; break;
        }
        n++;
    }
    return n;
}

static inline int oipcodec_pb_varint_size(uint64_t v) {
    int n = 1;
    while (v > 0x7F) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Encoded size of n 64-bit patterns stored (native order, any alignment) at values. */
static inline size_t oipcodec_pb_varints_size(const uint8_t *values, size_t n) {
    size_t total = 0, i;
    for (i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, values + 8 * i, 8);
        total += (size_t)oipcodec_pb_varint_size(v);
    }
    return total;
}

static inline uint8_t *oipcodec_pb_write_varint(uint8_t *out, uint64_t v) {
    while (v > 0x7F) {
        *out++ = (uint8_t)((v & 0x7F) | 0x80);
        v >>= 7;
    }
    *out++ = (uint8_t)v;
    return out;
}

static inline uint8_t *oipcodec_pb_write_varints(uint8_t *out, const uint8_t *values,
                                                 size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, values + 8 * i, 8);
        out = oipcodec_pb_write_varint(out, v);
    }
    return out;
}

#endif
