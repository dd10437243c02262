/* Little-endian loads and stores at any alignment.
 *
 * The OIP wire is little-endian everywhere (binary tensor data, BYTES length prefixes,
 * protobuf fixed-width fields). memcpy makes unaligned access defined behaviour and compiles
 * to a single move on x86 and ARM; the byte swap only exists on big-endian hosts. */
#ifndef OIPCODEC_COMMON_ENDIAN_H
#define OIPCODEC_COMMON_ENDIAN_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define OIPCODEC_BIG_ENDIAN 1
#else
#define OIPCODEC_BIG_ENDIAN 0
#endif

#if defined(_MSC_VER)
#include <stdlib.h>
#define OIPCODEC_BSWAP16(x) _byteswap_ushort(x)
#define OIPCODEC_BSWAP32(x) _byteswap_ulong(x)
#define OIPCODEC_BSWAP64(x) _byteswap_uint64(x)
#elif defined(__GNUC__) || defined(__clang__)
#define OIPCODEC_BSWAP16(x) __builtin_bswap16(x)
#define OIPCODEC_BSWAP32(x) __builtin_bswap32(x)
#define OIPCODEC_BSWAP64(x) __builtin_bswap64(x)
#else
static inline uint16_t OIPCODEC_BSWAP16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }
static inline uint32_t OIPCODEC_BSWAP32(uint32_t x) {
    return ((x & 0xFF000000u) >> 24) | ((x & 0x00FF0000u) >> 8) | ((x & 0x0000FF00u) << 8) |
           ((x & 0x000000FFu) << 24);
}
static inline uint64_t OIPCODEC_BSWAP64(uint64_t x) {
    return ((uint64_t)OIPCODEC_BSWAP32((uint32_t)x) << 32) | OIPCODEC_BSWAP32((uint32_t)(x >> 32));
}
#endif

static inline uint16_t oipcodec_load_le16(const void *p) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP16(v);
#endif
    return v;
}

static inline uint32_t oipcodec_load_le32(const void *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP32(v);
#endif
    return v;
}

static inline uint64_t oipcodec_load_le64(const void *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP64(v);
#endif
    return v;
}

static inline void oipcodec_store_le16(void *p, uint16_t v) {
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP16(v);
#endif
    memcpy(p, &v, sizeof v);
}

static inline void oipcodec_store_le32(void *p, uint32_t v) {
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP32(v);
#endif
    memcpy(p, &v, sizeof v);
}

static inline void oipcodec_store_le64(void *p, uint64_t v) {
#if OIPCODEC_BIG_ENDIAN
    v = OIPCODEC_BSWAP64(v);
#endif
    memcpy(p, &v, sizeof v);
}

#endif
