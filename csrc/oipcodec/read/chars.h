/* The byte classes of JSON text (RFC 8259): the bytes that end a bare token, and white space.
 * Shared by oipcodec._native.jsondecode and the array lanes (read/float_lane.h,
 * read/int_lane.h). */
#ifndef OIPCODEC_READ_CHARS_H
#define OIPCODEC_READ_CHARS_H

/* 1 for the bytes that end a bare token (number, true, false, null, NaN, Infinity): JSON white
 * space and structural characters, and '"'. Every other byte belongs to the token, so "1x" is
 * one (invalid) token rather than "1" followed by garbage. */
static const unsigned char oipcodec_json_delim[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [' '] = 1, ['"'] = 1, [','] = 1,
    [':'] = 1,  ['['] = 1,  [']'] = 1,  ['{'] = 1, ['}'] = 1,
};

static inline int oipcodec_is_ws(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline const unsigned char *oipcodec_skip_ws(const unsigned char *p,
                                                     const unsigned char *end) {
    while (p < end && oipcodec_is_ws(*p)) {
        p++;
    }
    return p;
}

#endif
