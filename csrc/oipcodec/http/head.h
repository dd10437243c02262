/* The request head of the native HTTP/1.1 front end: a strict subset of RFC 9112, read in one
 * pass from a pointer and a length (every read checked against the length first).
 *
 * The subset is what the fast path serves; anything outside it is "other" and goes to the
 * Python protocol (oipcodec/server/http11), which decides framing as llhttp does. So this
 * parser never refuses: it only has to be sure that, on every head it calls "fast", llhttp
 * reads the same method, target, version, Content-Length, keep-alive and head end
 * (tools/http11_fuzz.py checks that against httptools). After the style of llhttp and
 * picohttpparser (https://github.com/h2o/picohttpparser, MIT): one cursor, no allocation.
 *
 * fast:   ("GET" | "POST") SP "/" *safe SP "HTTP/1." ("0" | "1") CRLF
 *         *( token ":" *(SP / HTAB) *(VCHAR / SP / HTAB) CRLF ) CRLF
 *         safe = ALPHA / DIGIT / "-._~/!$&'()*+,;=:@" (no "?", "%", "#": those go to Python)
 * and of the fields: at most one Content-Length and one Inference-Header-Content-Length, each
 * 1 to 18 digits; at most one Connection, "close" or "keep-alive" (not keep-alive in HTTP/1.0,
 * where the Python path closes anyway); no Transfer-Encoding, Expect, Content-Encoding,
 * Upgrade or Proxy-Connection (llhttp reads it as Connection); Accept-Encoding only "identity". No empty line before the request line. */
#ifndef OIPCODEC_HTTP_HEAD_H
#define OIPCODEC_HTTP_HEAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OIP_HTTP_PARTIAL 0 /* no empty line yet, and nothing outside the subset so far */
#define OIP_HTTP_FAST 1    /* a complete head in the subset */
#define OIP_HTTP_OTHER 2   /* outside the subset: the Python protocol decides */

typedef struct oip_http_head {
    size_t head_length;     /* through the CRLF of the empty line */
    size_t line_length;     /* METHOD SP TARGET, from the first byte */
    int64_t content_length; /* -1: absent */
    int64_t header_length;  /* Inference-Header-Content-Length, -1: absent */
    int keep_alive;         /* as llhttp's should_keep_alive */
    int v10;                /* HTTP/1.0 */
} oip_http_head;

/* RFC 9110 5.6.2 tchar. */
static inline int oip_http_is_tchar(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
    return memchr("!#$%&'*+-.^_`|~", c, 15) != NULL;
}

/* The target bytes served fast (RFC 3986 pchar and "/", without pct-encoded). */
static inline int oip_http_is_safe(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
    return memchr("-._~/!$&'()*+,;=:@", c, 18) != NULL;
}

/* Whether name[0:len] is `lower` (lower case, NUL-terminated), ignoring ASCII case. */
static inline int oip_http_name_is(const unsigned char *name, size_t len, const char *lower) {
    size_t i;
    if (strlen(lower) != len) return 0;
    for (i = 0; i < len; i++) {
        unsigned char c = name[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)lower[i]) return 0;
    }
    return 1;
}

/* A count of 1 to 18 digits (never overflows), or -1. */
static inline int64_t oip_http_digits(const unsigned char *v, size_t len) {
    int64_t n = 0;
    size_t i;
    if (len == 0 || len > 18) return -1;
    for (i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        n = n * 10 + (v[i] - '0');
    }
    return n;
}

/* Reads the head at p[0:n] into *h; returns OIP_HTTP_PARTIAL, OIP_HTTP_FAST or OIP_HTTP_OTHER. */
static inline int oip_http_parse_head(const unsigned char *p, size_t n, oip_http_head *h) {
    size_t i = 0;
    int connection = 0; /* 0 none, 1 close, 2 keep-alive */
    h->head_length = 0;
    h->line_length = 0;
    h->content_length = -1;
    h->header_length = -1;
    h->keep_alive = 0;
    h->v10 = 0;
    /* The request line. */
    if (n == 0) return OIP_HTTP_PARTIAL; /* (p may be NULL then, which memcmp may not take) */
    if (n >= 4 && memcmp(p, "GET ", 4) == 0) {
        i = 4;
    } else if (n >= 5 && memcmp(p, "POST ", 5) == 0) {
        i = 5;
    } else {
        if (n < 5 && (memcmp(p, "GET ", n < 4 ? n : 4) == 0 || memcmp(p, "POST ", n) == 0))
            return OIP_HTTP_PARTIAL;
        return OIP_HTTP_OTHER;
    }
    if (i >= n) return OIP_HTTP_PARTIAL;
    if (p[i] != '/') return OIP_HTTP_OTHER;
    while (i < n && oip_http_is_safe(p[i])) i++;
    if (i >= n) return OIP_HTTP_PARTIAL;
    if (p[i] != ' ') return OIP_HTTP_OTHER;
    h->line_length = i;
    i++;
    {
        static const char version[] = "HTTP/1.";
        size_t k;
        for (k = 0; k < 7; k++, i++) {
            if (i >= n) return OIP_HTTP_PARTIAL;
            if (p[i] != (unsigned char)version[k]) return OIP_HTTP_OTHER;
        }
        if (i >= n) return OIP_HTTP_PARTIAL;
        if (p[i] != '0' && p[i] != '1') return OIP_HTTP_OTHER;
        h->v10 = p[i] == '0';
        i++;
    }
    if (i + 1 >= n) return i < n && p[i] != '\r' ? OIP_HTTP_OTHER : OIP_HTTP_PARTIAL;
    if (p[i] != '\r' || p[i + 1] != '\n') return OIP_HTTP_OTHER;
    i += 2;
    /* The field lines, up to the empty line. */
    for (;;) {
        size_t name, name_len, value, value_end;
        if (i >= n) return OIP_HTTP_PARTIAL;
        if (p[i] == '\r') {
            if (i + 1 >= n) return OIP_HTTP_PARTIAL;
            if (p[i + 1] != '\n') return OIP_HTTP_OTHER;
            i += 2;
            break;
        }
        name = i;
        while (i < n && oip_http_is_tchar(p[i])) i++;
        if (i >= n) return OIP_HTTP_PARTIAL;
        if (p[i] != ':' || i == name) return OIP_HTTP_OTHER;
        name_len = i - name;
        i++;
        while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
        value = i;
        while (i < n && ((p[i] >= 0x21 && p[i] <= 0x7e) || p[i] == ' ' || p[i] == '\t')) i++;
        if (i + 1 >= n) return i < n && p[i] != '\r' ? OIP_HTTP_OTHER : OIP_HTTP_PARTIAL;
        if (p[i] != '\r' || p[i + 1] != '\n') return OIP_HTTP_OTHER;
        value_end = i;
        while (value_end > value && (p[value_end - 1] == ' ' || p[value_end - 1] == '\t'))
            value_end--;
        i += 2;
        if (name_len < 6 || name_len > 31) continue; /* none of the names below */
        {
            const unsigned char *nm = p + name, *v = p + value;
            size_t len = value_end - value;
            if (oip_http_name_is(nm, name_len, "content-length")) {
                if (h->content_length >= 0) return OIP_HTTP_OTHER;
                h->content_length = oip_http_digits(v, len);
                if (h->content_length < 0) return OIP_HTTP_OTHER;
            } else if (oip_http_name_is(nm, name_len, "inference-header-content-length")) {
                if (h->header_length >= 0) return OIP_HTTP_OTHER;
                h->header_length = oip_http_digits(v, len);
                if (h->header_length < 0) return OIP_HTTP_OTHER;
            } else if (oip_http_name_is(nm, name_len, "connection")) {
                if (connection) return OIP_HTTP_OTHER;
                if (oip_http_name_is(v, len, "close")) {
                    connection = 1;
                } else if (oip_http_name_is(v, len, "keep-alive") && !h->v10) {
                    connection = 2;
                } else {
                    return OIP_HTTP_OTHER;
                }
            } else if (oip_http_name_is(nm, name_len, "accept-encoding")) {
                if (!oip_http_name_is(v, len, "identity")) return OIP_HTTP_OTHER;
            } else if (oip_http_name_is(nm, name_len, "transfer-encoding") ||
                       oip_http_name_is(nm, name_len, "expect") ||
                       oip_http_name_is(nm, name_len, "content-encoding") ||
                       oip_http_name_is(nm, name_len, "upgrade") ||
                       oip_http_name_is(nm, name_len, "proxy-connection")) {
                return OIP_HTTP_OTHER;
            }
        }
    }
    h->head_length = i;
    h->keep_alive = !h->v10 && connection != 1;
    return OIP_HTTP_FAST;
}

#endif /* OIPCODEC_HTTP_HEAD_H */
