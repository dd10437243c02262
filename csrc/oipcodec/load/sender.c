/* The HTTP/1.1 load generator (interface and behaviour: sender.h): POSIX sockets and poll.
 *
 * Its own translation unit, so that the feature macros below come before every system header:
 * ppoll (nanosecond waits for the open-loop schedule) is a GNU extension, clock_gettime POSIX. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE /* SO_NOSIGPIPE, beside POSIX */
#endif
#if !defined(_GNU_SOURCE) && !defined(_DARWIN_C_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809
#endif

#include "oipcodec/load/sender.h"
#include "oipcodec/load/loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OIPCODEC_SENDER_RECV_BUFFER 65536
#define OIPCODEC_SENDER_MAX_LINE 1024
/* A connection that fails to connect this many times in a row is given up. */
#define OIPCODEC_SENDER_CONNECT_TRIES 3
/* The longest wait in poll: the timeouts are checked after each wait. */
#define OIPCODEC_SENDER_TICK_NS 100000000

enum oip_phase { PH_IDLE, PH_CONNECTING, PH_SENDING, PH_HEADER, PH_BODY, PH_CHUNK_SIZE,
                 PH_CHUNK_DATA, PH_CHUNK_CRLF, PH_TRAILER, PH_DEAD };

typedef struct {
    int fd;
    enum oip_phase phase;
    int tries;              /* consecutive failed connects */
    int busy;               /* a request is out: its answer pending */
    int close_after;        /* Connection: close seen */
    const char *out;        /* request being sent */
    size_t out_len, out_off;
    int64_t start_ns;       /* the latency's origin: send time, or the due time in open loop */
    uint64_t received;      /* bytes of the current answer */
    uint64_t remaining;     /* body or chunk bytes still to come */
    uint64_t body;          /* body bytes so far */
    int status;
    int chunked;
    size_t hlen;            /* bytes in hbuf */
    char hbuf[OIPCODEC_SENDER_MAX_HEADER];
} oip_conn;

int64_t oip_load_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double oip_load_cpu_seconds(void) {
    struct timespec ts;
#ifdef CLOCK_THREAD_CPUTIME_ID
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
    return (double)clock() / CLOCKS_PER_SEC;
}

void oip_load_fail(oip_sender_run *run, int conn, enum oip_sender_error kind, const char *fmt,
                   ...) {
    run->errors[kind]++;
    if (run->first_error[0]) return;
    int n = snprintf(run->first_error, sizeof run->first_error, "connection %d: ", conn);
    if (n < 0 || (size_t)n >= sizeof run->first_error) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(run->first_error + n, sizeof run->first_error - (size_t)n, fmt, args);
    va_end(args);
}

static void oip_close(oip_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->busy = 0;
    c->phase = PH_IDLE;
}

/* Starts a non-blocking connect; PH_CONNECTING until the socket is writable. */
static void oip_connect(oip_sender_run *run, oip_conn *c, int index, const struct sockaddr *addr,
                        socklen_t addrlen) {
    oip_close(c);
    if (c->tries >= OIPCODEC_SENDER_CONNECT_TRIES) {
        c->phase = PH_DEAD;
        return;
    }
    c->tries++;
    int fd = socket(run->family, SOCK_STREAM, 0);
    if (fd < 0) {
        oip_load_fail(run, index, OIP_ERR_CONNECT, "socket(): %s", strerror(errno));
        c->phase = PH_DEAD;
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
    c->fd = fd;
    if (connect(fd, addr, addrlen) == 0) {
        c->phase = PH_IDLE;
        c->tries = 0;
    } else if (errno == EINPROGRESS) {
        c->phase = PH_CONNECTING;
    } else {
        oip_load_fail(run, index, OIP_ERR_CONNECT, "connect to %s port %u: %s", run->address,
                 (unsigned)run->port, strerror(errno));
        oip_close(c);
        if (c->tries >= OIPCODEC_SENDER_CONNECT_TRIES) c->phase = PH_DEAD;
    }
}

static int oip_lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch + 32 : ch; }

static int oip_name_is(const char *name, size_t len, const char *want) {
    size_t i = 0;
    for (; i < len && want[i]; i++)
        if (oip_lower((unsigned char)name[i]) != want[i]) return 0;
    return i == len && want[i] == 0;
}

/* Parses the complete header in c->hbuf[0..c->hlen) (ending in CRLF CRLF). Returns 0, or -1
 * after counting the error. */
static int oip_parse_header(oip_sender_run *run, oip_conn *c, int index) {
    const char *h = c->hbuf;
    size_t n = c->hlen;
    if (n < 17 || memcmp(h, "HTTP/1.", 7) != 0 || (h[7] != '0' && h[7] != '1') || h[8] != ' ') {
        oip_load_fail(run, index, OIP_ERR_MALFORMED,
                 "answer byte 0: expected a status line 'HTTP/1.x NNN', got %.12s", h);
        return -1;
    }
    int status = 0;
    for (int i = 9; i < 12; i++) {
        if (h[i] < '0' || h[i] > '9') {
            oip_load_fail(run, index, OIP_ERR_MALFORMED,
                     "answer byte %d: expected a digit of the status code, got 0x%02x", i,
                     (unsigned char)h[i]);
            return -1;
        }
        status = status * 10 + (h[i] - '0');
    }
    if (status < 100 || status > 599 || (h[12] != ' ' && h[12] != '\r')) {
        oip_load_fail(run, index, OIP_ERR_MALFORMED,
                 "answer byte 9: expected a status code 100-599 and a space, got %.4s", h + 9);
        return -1;
    }
    c->status = status;
    c->chunked = 0;
    c->close_after = h[7] == '0'; /* HTTP/1.0: closes unless told otherwise (we never ask) */
    int have_length = 0;
    uint64_t length = 0;
    size_t pos = 0;
    while (pos < n && h[pos] != '\n') pos++;
    pos++; /* the first header line */
    while (pos < n) {
        size_t end = pos;
        while (end < n && h[end] != '\n') end++;
        if (end >= n || end == pos || h[end - 1] != '\r') {
            oip_load_fail(run, index, OIP_ERR_MALFORMED,
                     "answer byte %zu: expected a header line ending in CRLF", pos);
            return -1;
        }
        size_t line_end = end - 1; /* the CR */
        if (line_end == pos) break;  /* the empty line */
        size_t colon = pos;
        while (colon < line_end && h[colon] != ':') colon++;
        if (colon == line_end || colon == pos) {
            oip_load_fail(run, index, OIP_ERR_MALFORMED,
                     "answer byte %zu: expected a header 'name: value'", pos);
            return -1;
        }
        size_t v = colon + 1, ve = line_end;
        while (v < ve && (h[v] == ' ' || h[v] == '\t')) v++;
        while (ve > v && (h[ve - 1] == ' ' || h[ve - 1] == '\t')) ve--;
        if (oip_name_is(h + pos, colon - pos, "content-length")) {
            uint64_t value = 0;
            if (v == ve || ve - v > 19) {
                oip_load_fail(run, index, OIP_ERR_MALFORMED,
                         "answer byte %zu: expected 1 to 19 digits of Content-Length", v);
                return -1;
            }
            for (size_t i = v; i < ve; i++) {
                if (h[i] < '0' || h[i] > '9') {
                    oip_load_fail(run, index, OIP_ERR_MALFORMED,
                             "answer byte %zu: expected a digit of Content-Length, got 0x%02x", i,
                             (unsigned char)h[i]);
                    return -1;
                }
                value = value * 10 + (uint64_t)(h[i] - '0');
            }
            if (have_length && value != length) {
                oip_load_fail(run, index, OIP_ERR_MALFORMED,
                         "answer byte %zu: a second Content-Length differs from the first", pos);
                return -1;
            }
            have_length = 1;
            length = value;
        } else if (oip_name_is(h + pos, colon - pos, "transfer-encoding")) {
            if (!oip_name_is(h + v, ve - v, "chunked")) {
                oip_load_fail(run, index, OIP_ERR_MALFORMED,
                         "answer byte %zu: expected Transfer-Encoding 'chunked', got '%.*s'", v,
                         (int)(ve - v > 40 ? 40 : ve - v), h + v);
                return -1;
            }
            c->chunked = 1;
        } else if (oip_name_is(h + pos, colon - pos, "connection")) {
            if (oip_name_is(h + v, ve - v, "close")) c->close_after = 1;
            if (oip_name_is(h + v, ve - v, "keep-alive")) c->close_after = 0;
        }
        pos = end + 1;
    }
    if (have_length && c->chunked) {
        oip_load_fail(run, index, OIP_ERR_MALFORMED,
                 "answer has both Content-Length and Transfer-Encoding (RFC 9112 6.3)");
        return -1;
    }
    int bodiless = status < 200 || status == 204 || status == 304;
    if (!bodiless && !have_length && !c->chunked) {
        oip_load_fail(run, index, OIP_ERR_MALFORMED,
                 "status %d answer has neither Content-Length nor chunked coding: its end is "
                 "the connection's close, which a keep-alive sender cannot use",
                 status);
        return -1;
    }
    if (have_length && length > run->max_answer) {
        oip_load_fail(run, index, OIP_ERR_TOO_LARGE,
                 "Content-Length %llu is past the bound of %llu bytes",
                 (unsigned long long)length, (unsigned long long)run->max_answer);
        return -1;
    }
    c->remaining = bodiless ? 0 : length;
    return 0;
}

/* The request on c is answered: record it and free the connection. */
static void oip_complete(oip_sender_run *run, oip_conn *c, int64_t now, int64_t origin) {
    run->completed++;
    run->status_counts[c->status]++;
    if (run->recorded < run->capacity) {
        run->done_ns[run->recorded] = now - origin;
        run->latency_ns[run->recorded] = now - c->start_ns;
        run->status[run->recorded] = (uint16_t)c->status;
        run->recorded++;
    }
    c->busy = 0;
    c->tries = 0;
    c->phase = PH_IDLE;
}

/* Feeds received bytes to c's answer parser. Returns the bytes used, or -1 after an error;
 * sets *done when the answer is complete. */
static ptrdiff_t oip_feed(oip_sender_run *run, oip_conn *c, int index, const char *p, size_t n,
                     int *done) {
    size_t i = 0;
    *done = 0;
    while (i < n && !*done) {
        switch (c->phase) {
        case PH_HEADER: {
            char ch = p[i++];
            if (c->hlen >= OIPCODEC_SENDER_MAX_HEADER) {
                oip_load_fail(run, index, OIP_ERR_TOO_LARGE,
                         "answer header past %d bytes without an empty line",
                         OIPCODEC_SENDER_MAX_HEADER);
                return -1;
            }
            c->hbuf[c->hlen++] = ch;
            if (ch == '\n' && c->hlen >= 4 && memcmp(c->hbuf + c->hlen - 4, "\r\n\r\n", 4) == 0) {
                if (oip_parse_header(run, c, index) < 0) return -1;
                c->hlen = 0;
                if (c->status < 200) { /* interim answer (100 Continue): the real one follows */
                    continue;
                }
                if (c->chunked) {
                    c->phase = PH_CHUNK_SIZE;
                } else if (c->remaining) {
                    c->phase = PH_BODY;
                } else {
                    *done = 1;
                }
            }
            break;
        }
        case PH_BODY:
        case PH_CHUNK_DATA: {
            size_t take = n - i;
            if (take > c->remaining) take = (size_t)c->remaining;
            i += take;
            c->remaining -= take;
            if (c->remaining == 0) {
                if (c->phase == PH_BODY) {
                    *done = 1;
                } else {
                    c->phase = PH_CHUNK_CRLF;
                    c->hlen = 0;
                }
            }
            break;
        }
        case PH_CHUNK_SIZE:
        case PH_CHUNK_CRLF:
        case PH_TRAILER: {
            char ch = p[i++];
            if (c->hlen >= OIPCODEC_SENDER_MAX_LINE) {
                oip_load_fail(run, index, OIP_ERR_TOO_LARGE,
                         "chunked answer: a line past %d bytes", OIPCODEC_SENDER_MAX_LINE);
                return -1;
            }
            c->hbuf[c->hlen++] = ch;
            if (ch != '\n') break;
            if (c->hlen < 2 || c->hbuf[c->hlen - 2] != '\r') {
                oip_load_fail(run, index, OIP_ERR_MALFORMED,
                         "chunked answer byte %llu: expected CRLF, got a bare LF",
                         (unsigned long long)c->received + i - 1);
                return -1;
            }
            size_t len = c->hlen - 2;
            c->hlen = 0;
            if (c->phase == PH_CHUNK_CRLF) {
                if (len != 0) {
                    oip_load_fail(run, index, OIP_ERR_MALFORMED,
                             "chunked answer byte %llu: expected CRLF after the chunk's data",
                             (unsigned long long)c->received + i - len - 2);
                    return -1;
                }
                c->phase = PH_CHUNK_SIZE;
            } else if (c->phase == PH_TRAILER) {
                if (len == 0) *done = 1;
            } else {
                uint64_t size = 0;
                size_t k = 0;
                for (; k < len && c->hbuf[k] != ';'; k++) {
                    int ch2 = oip_lower((unsigned char)c->hbuf[k]), digit;
                    if (ch2 >= '0' && ch2 <= '9') digit = ch2 - '0';
                    else if (ch2 >= 'a' && ch2 <= 'f') digit = ch2 - 'a' + 10;
                    else if (ch2 == ' ' || ch2 == '\t') continue;
                    else {
                        oip_load_fail(run, index, OIP_ERR_MALFORMED,
                                 "chunked answer: expected a hexadecimal chunk size, got 0x%02x",
                                 (unsigned char)c->hbuf[k]);
                        return -1;
                    }
                    if (size >> 60) {
                        oip_load_fail(run, index, OIP_ERR_TOO_LARGE, "chunk size past 2^64");
                        return -1;
                    }
                    size = size * 16 + (uint64_t)digit;
                }
                if (k == 0) {
                    oip_load_fail(run, index, OIP_ERR_MALFORMED,
                             "chunked answer: expected a chunk size, got an empty line");
                    return -1;
                }
                if (size > run->max_answer - c->body) {
                    oip_load_fail(run, index, OIP_ERR_TOO_LARGE,
                             "chunked answer past the bound of %llu bytes",
                             (unsigned long long)run->max_answer);
                    return -1;
                }
                c->body += size;
                c->remaining = size;
                c->phase = size ? PH_CHUNK_DATA : PH_TRAILER;
            }
            break;
        }
        default:
            return -1;
        }
    }
    c->received += i;
    return (ptrdiff_t)i;
}

unsigned oip_load_address(const oip_sender_run *run, struct sockaddr_storage *storage) {
    memset(storage, 0, sizeof *storage);
    if (run->family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)storage;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(run->port);
        return inet_pton(AF_INET6, run->address, &a->sin6_addr) == 1 ? sizeof *a : 0;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)storage;
    a->sin_family = AF_INET;
    a->sin_port = htons(run->port);
    return inet_pton(AF_INET, run->address, &a->sin_addr) == 1 ? sizeof *a : 0;
}

int oip_load_wait(struct pollfd *fds, int nfds, int64_t wait_ns) {
    if (wait_ns < 0) wait_ns = 0;
#ifdef __linux__
    struct timespec ts;
    ts.tv_sec = (time_t)(wait_ns / 1000000000);
    ts.tv_nsec = wait_ns % 1000000000;
    return ppoll(fds, (nfds_t)nfds, &ts, NULL);
#else
    return poll(fds, (nfds_t)nfds, (int)((wait_ns + 999999) / 1000000));
#endif
}

int oip_sender_run_load(oip_sender_run *run) {
    struct sockaddr_storage storage;
    socklen_t addrlen = (socklen_t)oip_load_address(run, &storage);
    if (!addrlen || run->connections < 1 || run->n_requests < 1 ||
        (run->duration <= 0 && run->count == 0) || run->timeout <= 0) {
        run->setup_failed = 1;
        snprintf(run->first_error, sizeof run->first_error,
                 "bad arguments: a numeric address, connections >= 1, one request or more, a "
                 "duration or a count, a positive timeout");
        return 0;
    }
    const struct sockaddr *addr = (const struct sockaddr *)&storage;
    int nc = run->connections;
    oip_conn *conns = calloc((size_t)nc, sizeof *conns);
    struct pollfd *fds = calloc((size_t)nc, sizeof *fds);
    int *fd_conn = calloc((size_t)nc, sizeof *fd_conn);
    char *buffer = malloc(OIPCODEC_SENDER_RECV_BUFFER);
    if (!conns || !fds || !fd_conn || !buffer) {
        free(conns), free(fds), free(fd_conn), free(buffer);
        run->setup_failed = 1;
        snprintf(run->first_error, sizeof run->first_error, "out of memory");
        return 0;
    }
    double cpu0 = oip_load_cpu_seconds();
    int64_t origin = oip_load_now_ns();
    int64_t timeout_ns = (int64_t)(run->timeout * 1e9);
    int64_t end_ns = run->duration > 0 ? origin + (int64_t)(run->duration * 1e9) : INT64_MAX;
    /* Open loop: request i is due at origin + i * 1e9 / rate (computed, not accumulated). */
    double interval_ns = run->rate > 0 ? 1e9 / run->rate : 0;
    uint64_t next = 0; /* the next request's number (cycles the bodies; open loop: its due) */
    int64_t last = origin;
    for (int i = 0; i < nc; i++) {
        conns[i].fd = -1;
        oip_connect(run, &conns[i], i, addr, addrlen);
    }
    for (;;) {
        int64_t now = oip_load_now_ns();
        int issuing = now < end_ns && (run->count == 0 || next < run->count);
        /* Timeouts, and send on idle connections what is due. */
        int alive = 0, busy = 0;
        for (int i = 0; i < nc; i++) {
            oip_conn *c = &conns[i];
            if (c->phase == PH_DEAD) continue;
            alive++;
            if (c->busy && now - c->start_ns > timeout_ns) {
                oip_load_fail(run, i, OIP_ERR_TIMEOUT, "no complete answer within %.3f s",
                         run->timeout);
                oip_connect(run, c, i, addr, addrlen);
                if (c->phase == PH_DEAD) {
                    alive--;
                    continue;
                }
            }
            if (c->phase == PH_IDLE && !c->busy && issuing) {
                int64_t due = run->rate > 0 ? origin + (int64_t)((double)next * interval_ns) : now;
                if (due <= now && (run->rate <= 0 || due < end_ns)) {
                    size_t k = (size_t)(next % run->n_requests);
                    c->out = run->requests[k];
                    c->out_len = run->lengths[k];
                    c->out_off = 0;
                    c->start_ns = due;
                    c->busy = 1;
                    c->received = c->body = 0;
                    c->hlen = 0;
                    c->phase = PH_SENDING;
                    next++;
                    run->sent++;
                    issuing = now < end_ns && (run->count == 0 || next < run->count);
                }
            }
            if (c->phase == PH_SENDING) {
#ifdef MSG_NOSIGNAL
                ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                                 MSG_NOSIGNAL);
#else
                ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, 0);
#endif
                if (w > 0) {
                    c->out_off += (size_t)w;
                    if (c->out_off == c->out_len) c->phase = PH_HEADER;
                } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    oip_load_fail(run, i, OIP_ERR_SEND, "send: %s", strerror(errno));
                    oip_connect(run, c, i, addr, addrlen);
                }
            }
            if (c->busy) busy++;
        }
        if (alive == 0) break;
        if (!issuing && busy == 0) break;
        if (!issuing && run->duration > 0 && now - end_ns > timeout_ns) break; /* belt and braces */
        /* Wait for the sockets, or the next due time / the end. */
        int nfds = 0;
        for (int i = 0; i < nc; i++) {
            oip_conn *c = &conns[i];
            if (c->fd < 0 || c->phase == PH_DEAD) continue;
            short ev = POLLIN;
            if (c->phase == PH_CONNECTING || c->phase == PH_SENDING) ev = POLLOUT;
            if (c->phase == PH_IDLE && !issuing) continue;
            fds[nfds].fd = c->fd;
            fds[nfds].events = ev;
            fds[nfds].revents = 0;
            fd_conn[nfds++] = i;
        }
        int64_t wake = now + OIPCODEC_SENDER_TICK_NS;
        if (issuing && run->rate > 0) {
            int64_t due = origin + (int64_t)((double)next * interval_ns);
            if (due < wake) wake = due;
        }
        if (issuing && end_ns < wake) wake = end_ns;
        int ready = oip_load_wait(fds, nfds, wake - now);
        if (ready < 0 && errno != EINTR) {
            oip_load_fail(run, -1, OIP_ERR_CONNECT, "poll: %s", strerror(errno));
            break;
        }
        if (ready <= 0) continue;
        for (int f = 0; f < nfds; f++) {
            if (!fds[f].revents) continue;
            int i = fd_conn[f];
            oip_conn *c = &conns[i];
            if (c->phase == PH_CONNECTING) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err) {
                    oip_load_fail(run, i, OIP_ERR_CONNECT, "connect to %s port %u: %s",
                             run->address, (unsigned)run->port, strerror(err));
                    oip_connect(run, c, i, addr, addrlen);
                } else {
                    c->phase = PH_IDLE;
                    c->tries = 0;
                }
                continue;
            }
            if (c->phase == PH_SENDING) continue; /* writable: sent on the next pass */
            for (;;) {
                ssize_t r = recv(c->fd, buffer, OIPCODEC_SENDER_RECV_BUFFER, 0);
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) {
                    if (c->busy)
                        oip_load_fail(run, i, OIP_ERR_CLOSED,
                                 "the server closed the connection after %llu bytes of the "
                                 "answer (%s)",
                                 (unsigned long long)c->received,
                                 r < 0 ? strerror(errno) : "end of stream");
                    /* idle: a keep-alive connection closed between requests; made again */
                    oip_connect(run, c, i, addr, addrlen);
                    break;
                }
                if (!c->busy || c->phase == PH_SENDING) {
                    oip_load_fail(run, i, OIP_ERR_MALFORMED,
                             "%zd bytes arrived with no request awaiting an answer", r);
                    oip_connect(run, c, i, addr, addrlen);
                    break;
                }
                int done = 0;
                ptrdiff_t used = oip_feed(run, c, i, buffer, (size_t)r, &done);
                if (used < 0) {
                    oip_connect(run, c, i, addr, addrlen);
                    break;
                }
                if (done) {
                    int64_t t = oip_load_now_ns();
                    last = t;
                    int close_after = c->close_after;
                    oip_complete(run, c, t, origin);
                    if ((size_t)used != (size_t)r) {
                        oip_load_fail(run, i, OIP_ERR_MALFORMED,
                                 "%zd bytes past the end of the answer", r - used);
                        oip_connect(run, c, i, addr, addrlen);
                    } else if (close_after) {
                        oip_connect(run, c, i, addr, addrlen);
                    }
                    break;
                }
                if ((size_t)r < OIPCODEC_SENDER_RECV_BUFFER) break;
            }
        }
    }
    int64_t stop = oip_load_now_ns();
    if (run->rate > 0 && run->duration > 0) {
        /* Requests due before the end that no connection was free to send. */
        uint64_t due = (uint64_t)ceil((double)(end_ns - origin) / interval_ns);
        if (run->count && due > run->count) due = run->count;
        run->unsent = due > next ? due - next : 0;
    }
    for (int i = 0; i < nc; i++)
        if (conns[i].busy) {
            /* Still awaited at the give-up: counted as timed out. */
            oip_load_fail(run, i, OIP_ERR_TIMEOUT, "no complete answer by the end of the run");
        }
    for (int i = 0; i < nc; i++) oip_close(&conns[i]);
    run->elapsed = (double)((last > origin ? last : stop) - origin) * 1e-9;
    run->cpu = oip_load_cpu_seconds() - cpu0;
    free(conns), free(fds), free(fd_conn), free(buffer);
    return 0;
}

