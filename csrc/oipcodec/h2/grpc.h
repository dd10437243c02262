/* The gRPC-over-HTTP/2 pieces of the native gRPC path (issue 47) that are not HTTP/2 itself:
 * the 5-byte message prefix, the grpc-timeout value and the content-type check, each read from
 * a pointer and a length (every read checked against the length first), no allocation.
 * The HTTP/2 framing and HPACK are libnghttp2's (csrc/third_party/nghttp2). */
#ifndef OIPCODEC_H2_GRPC_H
#define OIPCODEC_H2_GRPC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OIP_GRPC_PREFIX 5

/* The message prefix: 1 byte compressed flag (0 or 1), 4 bytes big-endian length.
 * Returns 1 and fills *compressed and *length when n >= 5 and the flag is 0 or 1, 0 when fewer
 * than 5 bytes are there yet, -1 when the flag byte is anything else. */
static inline int oip_grpc_prefix(const unsigned char *p, size_t n, int *compressed,
                                  uint32_t *length) {
    if (n < OIP_GRPC_PREFIX) return 0;
    if (p[0] > 1) return -1;
    *compressed = p[0];
    *length = ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 8) |
              (uint32_t)p[4];
    return 1;
}

static inline void oip_grpc_put_prefix(unsigned char *p, int compressed, uint32_t length) {
    p[0] = (unsigned char)(compressed ? 1 : 0);
    p[1] = (unsigned char)(length >> 24);
    p[2] = (unsigned char)(length >> 16);
    p[3] = (unsigned char)(length >> 8);
    p[4] = (unsigned char)length;
}

/* grpc-timeout = 1*8DIGIT unit, unit one of H M S m u n (the gRPC HTTP/2 protocol spec).
 * Returns 0 and the timeout in nanoseconds in *ns (saturated at INT64_MAX), -1 if malformed. */
static inline int oip_grpc_timeout(const unsigned char *p, size_t n, int64_t *ns) {
    if (n < 2 || n > 9) return -1;
    int64_t value = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        value = value * 10 + (p[i] - '0'); /* at most 8 digits: below 10^8, no overflow */
    }
    int64_t unit;
    switch (p[n - 1]) {
    case 'H': unit = INT64_C(3600000000000); break;
    case 'M': unit = INT64_C(60000000000); break;
    case 'S': unit = INT64_C(1000000000); break;
    case 'm': unit = INT64_C(1000000); break;
    case 'u': unit = INT64_C(1000); break;
    case 'n': unit = 1; break;
    default: return -1;
    }
    *ns = value > INT64_MAX / unit ? INT64_MAX : value * unit;
    return 0;
}

/* content-type "application/grpc", alone or followed by "+" (a subtype such as +proto) or ";"
 * (parameters), compared case-insensitively as grpcio does. Returns 1 if so, else 0. */
static inline int oip_grpc_content_type(const unsigned char *p, size_t n) {
    static const char want[] = "application/grpc";
    const size_t w = sizeof(want) - 1;
    if (n < w) return 0;
    for (size_t i = 0; i < w; i++) {
        unsigned char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)want[i]) return 0;
    }
    return n == w || p[w] == '+' || p[w] == ';';
}

#endif /* OIPCODEC_H2_GRPC_H */
