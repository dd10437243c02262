/* BYTES elements as JSON strings: valid
 * UTF-8 copied as is, only '"', '\\' and control characters escaped. UTF-8 validity: the
 * well-formed byte sequences of the Unicode Standard (Table 3-7). */
#ifndef OIPCODEC_WRITE_STRINGS_H
#define OIPCODEC_WRITE_STRINGS_H

#include <stddef.h>
#include <string.h>

#include "oipcodec/common/compiler.h"

/* Length of the longest valid UTF-8 prefix of s[0:n] (n if all of it is valid). Rejects what
 * Python's strict UTF-8 codec rejects: overlong forms, surrogates, code points above
 * U+10FFFF, truncated sequences. */
OIPCODEC_MAYBE_UNUSED
static ptrdiff_t oipcodec_utf8_valid_prefix(const unsigned char *s, ptrdiff_t n) {
    ptrdiff_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) {
                return i;
            }
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (i + 2 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80) {
                return i;
            }
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (i + 3 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xC0) != 0x80 ||
                (s[i + 3] & 0xC0) != 0x80) {
                return i;
            }
            i += 4;
        } else {
            return i;
        }
    }
    return n;
}

/* Bytes each input byte takes inside a JSON string: 1, 2 for the short escapes, 6 for
 * \u00XX. */
static const unsigned char oipcodec_escape_len[256] = {
    6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Size of s[0:n] as the contents of a JSON string (quotes not counted). */
OIPCODEC_MAYBE_UNUSED
static size_t oipcodec_escaped_size(const unsigned char *s, ptrdiff_t n) {
    size_t size = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        size += oipcodec_escape_len[s[i]];
    }
    return size;
}

/* Writes s[0:n] as a JSON string, quotes included. */
OIPCODEC_MAYBE_UNUSED
static char *oipcodec_write_string(char *out, const unsigned char *s, ptrdiff_t n) {
    static const char hex[] = "0123456789abcdef";
    ptrdiff_t i = 0, run = 0;
    *out++ = '"';
    while (i < n) {
        unsigned char c;
        /* Copy the run of bytes that need no escape in one go. */
        run = i;
        while (i < n && oipcodec_escape_len[s[i]] == 1) {
            i++;
        }
        memcpy(out, s + run, (size_t)(i - run));
        out += i - run;
        if (i >= n) {
            break;
        }
        c = s[i++];
        *out++ = '\\';
        switch (c) {
        case '"': *out++ = '"'; break;
        case '\\': *out++ = '\\'; break;
        case '\b': *out++ = 'b'; break;
        case '\f': *out++ = 'f'; break;
        case '\n': *out++ = 'n'; break;
        case '\r': *out++ = 'r'; break;
        case '\t': *out++ = 't'; break;
        default:
            memcpy(out, "u00", 3);
            out[3] = hex[c >> 4];
            out[4] = hex[c & 15];
            out += 5;
        }
    }
    *out++ = '"';
    return out;
}

/* A BYTES element: its bytes (valid UTF-8, checked by the caller) and their count. */
typedef struct {
    const unsigned char *data;
    ptrdiff_t size;
} oipcodec_piece;

OIPCODEC_MAYBE_UNUSED
static char *oipcodec_row_strings(const void *data, ptrdiff_t n, char *out, const void *ctx) {
    const oipcodec_piece *pieces = (const oipcodec_piece *)data;
    ptrdiff_t i;
    (void)ctx;
    for (i = 0; i < n; i++) {
        if (i) {
            *out++ = ',';
        }
        out = oipcodec_write_string(out, pieces[i].data, pieces[i].size);
    }
    return out;
}

#endif
