/* Validating and decoding JSON strings (RFC 8259, section 7): escapes, \u escapes with UTF-16
 * surrogate pairs, and the UTF-8 of the raw bytes. A valid UTF-8 sequence is one of the
 * well-formed byte sequences of the Unicode Standard (Table 3-7; RFC 3629): no overlong forms,
 * no surrogates, nothing above U+10FFFF, as Python's strict decoder. */
#ifndef OIPCODEC_READ_STRINGS_H
#define OIPCODEC_READ_STRINGS_H

#include <stddef.h>
#include <stdint.h>

static inline int oipcodec_hex4(const unsigned char *p) {
    int v = 0, i;
    for (i = 0; i < 4; i++) {
        unsigned char c = p[i];
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            d = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            d = c - 'A' + 10;
        } else {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at p (2..4), or 0 if it is not one (overlong forms,
 * UTF-16 surrogates and code points above U+10FFFF are invalid, as in Python's decoder). */
static inline int oipcodec_utf8_sequence(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    ptrdiff_t left = end - p;
#define OIPCODEC_CONT(x) (((x) & 0xC0) == 0x80)
    if (c >= 0xC2 && c <= 0xDF) {
        return left >= 2 && OIPCODEC_CONT(p[1]) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return left >= 3 && p[1] >= lo && p[1] <= hi && OIPCODEC_CONT(p[2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return left >= 4 && p[1] >= lo && p[1] <= hi && OIPCODEC_CONT(p[2]) &&
                       OIPCODEC_CONT(p[3])
                   ? 4
                   : 0;
    }
    return 0;
#undef OIPCODEC_CONT
}

/* Validate the JSON string whose opening quote is at p. Returns the byte after its closing
 * quote, or NULL if it is unterminated or invalid (raw control character, unknown escape, bad
 * or lone-surrogate \u escape, invalid UTF-8). *escaped is set when it holds any escape. */
static inline const unsigned char *oipcodec_scan_string(const unsigned char *p,
                                                         const unsigned char *end,
                                                         int *escaped) {
    *escaped = 0;
    p++;
    while (p < end) {
        unsigned char c = *p;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            p++;
            continue;
        }
        if (c == '"') {
            return p + 1;
        }
        if (c == '\\') {
            *escaped = 1;
            if (end - p < 2) {
                return NULL;
            }
            c = p[1];
            if (c == 'u') {
                int unit;
                if (end - p < 6 || (unit = oipcodec_hex4(p + 2)) < 0) {
                    return NULL;
                }
                p += 6;
                if (unit >= 0xD800 && unit <= 0xDBFF) {
                    int low;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
                        (low = oipcodec_hex4(p + 2)) < 0xDC00 || low > 0xDFFF) {
                        return NULL;
                    }
                    p += 6;
                } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
                    return NULL;
                }
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else {
            int n = oipcodec_utf8_sequence(p, end);
            if (n == 0) {
                return NULL;
            }
            p += n;
        }
    }
    return NULL;
}

/* Decode the contents of a JSON string already validated by oipcodec_scan_string, from the
 * byte after its opening quote up to (not including) its closing quote at `stop`, into out,
 * which has room for stop - p bytes (decoding never grows the text). Returns the length. */
static inline size_t oipcodec_decode_string(const unsigned char *p, const unsigned char *stop,
                                            unsigned char *out) {
    unsigned char *o = out;
    while (p < stop) {
        unsigned char c = *p;
        if (c != '\\') {
            *o++ = c;
            p++;
            continue;
        }
        c = p[1];
        if (c == 'u') {
            uint32_t cp = (uint32_t)oipcodec_hex4(p + 2);
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)oipcodec_hex4(p + 2) - 0xDC00);
                p += 6;
            }
            if (cp < 0x80) {
                *o++ = (unsigned char)cp;
            } else if (cp < 0x800) {
                *o++ = (unsigned char)(0xC0 | (cp >> 6));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                *o++ = (unsigned char)(0xE0 | (cp >> 12));
                *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                *o++ = (unsigned char)(0xF0 | (cp >> 18));
                *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *o++ = (unsigned char)(0x80 | (cp & 0x3F));
            }
            continue;
        }
        switch (c) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        default: *o++ = c; break; /* '"', '\\', '/' */
        }
        p += 2;
    }
    return (size_t)(o - out);
}

#endif
