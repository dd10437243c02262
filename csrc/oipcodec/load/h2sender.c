/* The HTTP/2 (gRPC) load generator (interface and behaviour: h2sender.h): POSIX sockets and
 * poll around nghttp2 client sessions.
 *
 * Its own translation unit, for the same reason as sender.c: the feature macros below come
 * before every system header. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE
#endif
#if !defined(_GNU_SOURCE) && !defined(_DARWIN_C_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809
#endif

#include "oipcodec/load/h2sender.h"
#include "oipcodec/load/loop.h"

#include <nghttp2/nghttp2.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OIP_H2_RECV_BUFFER 65536
#define OIP_H2_CONNECT_TRIES 3
#define OIP_H2_TICK_NS 100000000
/* The stream window we grant: answers up to it need no WINDOW_UPDATE round trip. */
#define OIP_H2_WINDOW (1 << 24)

typedef struct oip_h2_conn oip_h2_conn;

typedef struct {
    oip_h2_conn *conn;
    int32_t id;            /* 0: the slot is free */
    int64_t start_ns;      /* the latency's origin: send time, or the due time in open loop */
    const uint8_t *body;
    size_t length, offset;
    uint64_t received;     /* DATA bytes of the answer */
    int http_status;
    int grpc_status;       /* -1 until the trailers carry it */
    int failed;            /* an error was already counted for this call */
    char message[96];      /* grpc-message, cut */
} oip_h2_call;

struct oip_h2_conn {
    int index;
    int fd;
    int connecting;
    int dead;
    int tries;
    int active;            /* calls in flight */
    nghttp2_session *session;
    oip_sender_run *run;
    int64_t *origin, *last;
    oip_h2_call *calls;    /* `streams` slots */
};

static void oip_h2_free_call(oip_h2_conn *c, oip_h2_call *call) {
    if (call->id) c->active--;
    call->id = 0;
}

/* Closes c's socket and session; its calls in flight are counted as `kind` errors. */
static void oip_h2_close(oip_h2_conn *c, int streams, enum oip_sender_error kind,
                         const char *why) {
    for (int s = 0; s < streams; s++) {
        oip_h2_call *call = &c->calls[s];
        if (!call->id) continue;
        if (!call->failed)
            oip_load_fail(c->run, c->index, kind, "stream %d: %s", (int)call->id, why);
        oip_h2_free_call(c, call);
    }
    if (c->session) nghttp2_session_del(c->session);
    c->session = NULL;
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->connecting = 0;
}

static nghttp2_ssize oip_h2_send_cb(nghttp2_session *session, const uint8_t *data, size_t length,
                                    int flags, void *user_data) {
    (void)session, (void)flags;
    oip_h2_conn *c = user_data;
#ifdef MSG_NOSIGNAL
    ssize_t w = send(c->fd, data, length, MSG_NOSIGNAL);
#else
    ssize_t w = send(c->fd, data, length, 0);
#endif
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return NGHTTP2_ERR_WOULDBLOCK;
    if (w < 0) {
        oip_load_fail(c->run, c->index, OIP_ERR_SEND, "send: %s", strerror(errno));
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return (nghttp2_ssize)w;
}

static nghttp2_ssize oip_h2_read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                                      size_t length, uint32_t *data_flags,
                                      nghttp2_data_source *source, void *user_data) {
    (void)session, (void)stream_id, (void)user_data;
    oip_h2_call *call = source->ptr;
    size_t n = call->length - call->offset;
    if (n > length) n = length;
    memcpy(buf, call->body + call->offset, n);
    call->offset += n;
    if (call->offset == call->length) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (nghttp2_ssize)n;
}

static int oip_h2_header_cb(nghttp2_session *session, const nghttp2_frame *frame,
                            const uint8_t *name, size_t namelen, const uint8_t *value,
                            size_t valuelen, uint8_t flags, void *user_data) {
    (void)flags, (void)user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    oip_h2_call *call = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!call) return 0;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        int status = 0;
        for (size_t i = 0; i < valuelen && i < 3; i++) status = status * 10 + (value[i] - '0');
        call->http_status = status;
    } else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        int code = 0;
        for (size_t i = 0; i < valuelen && i < 4; i++) {
            if (value[i] < '0' || value[i] > '9') return 0; /* left -1: counted malformed */
            code = code * 10 + (value[i] - '0');
        }
        call->grpc_status = code;
    } else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        size_t n = valuelen < sizeof call->message - 1 ? valuelen : sizeof call->message - 1;
        memcpy(call->message, value, n);
        call->message[n] = 0;
    }
    return 0;
}

static int oip_h2_data_cb(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                          const uint8_t *data, size_t len, void *user_data) {
    (void)flags, (void)data;
    oip_h2_conn *c = user_data;
    oip_h2_call *call = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!call || call->failed) return 0;
    call->received += len;
    if (call->received > c->run->max_answer) {
        call->failed = 1;
        oip_load_fail(c->run, c->index, OIP_ERR_TOO_LARGE,
                    "stream %d: answer past the bound of %llu bytes", (int)stream_id,
                    (unsigned long long)c->run->max_answer);
        nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
    }
    return 0;
}

static int oip_h2_close_cb(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                           void *user_data) {
    oip_h2_conn *c = user_data;
    oip_h2_call *call = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!call || call->id != stream_id) return 0;
    oip_sender_run *run = c->run;
    if (!call->failed) {
        if (error_code != NGHTTP2_NO_ERROR && call->grpc_status < 0) {
            oip_load_fail(run, c->index, OIP_ERR_CLOSED, "stream %d: reset by the server (%s)",
                        (int)stream_id, nghttp2_http2_strerror(error_code));
        } else if (call->http_status != 200) {
            oip_load_fail(run, c->index, OIP_ERR_MALFORMED,
                        "stream %d: expected :status 200, got %d", (int)stream_id,
                        call->http_status);
        } else if (call->grpc_status < 0) {
            oip_load_fail(run, c->index, OIP_ERR_MALFORMED,
                        "stream %d: the answer ended without a numeric grpc-status trailer",
                        (int)stream_id);
        } else {
            int code = call->grpc_status < 600 ? call->grpc_status : 599;
            run->status_counts[code]++;
            if (code != 0) {
                oip_load_fail(run, c->index, OIP_ERR_STATUS, "stream %d: grpc-status %d: %s",
                            (int)stream_id, code, call->message);
            } else {
                int64_t now = oip_load_now_ns();
                *c->last = now;
                run->completed++;
                if (run->recorded < run->capacity) {
                    run->done_ns[run->recorded] = now - *c->origin;
                    run->latency_ns[run->recorded] = now - call->start_ns;
                    run->status[run->recorded] = 0;
                    run->recorded++;
                }
                c->tries = 0;
            }
        }
    }
    oip_h2_free_call(c, call);
    return 0;
}

/* nghttp2 answers a peer's protocol error with GOAWAY rather than an error return: this is
 * where the malformed answer is seen, so it is counted here, with nghttp2's words. */
static int oip_h2_error_cb(nghttp2_session *session, int lib_error_code, const char *msg,
                           size_t len, void *user_data) {
    (void)session;
    oip_h2_conn *c = user_data;
    oip_load_fail(c->run, c->index, OIP_ERR_MALFORMED,
                  "the answer is not HTTP/2 as RFC 9113 says (%s: %.*s)",
                  nghttp2_strerror(lib_error_code), (int)(len > 200 ? 200 : len), msg);
    return 0;
}

static nghttp2_session_callbacks *oip_h2_callbacks(void) {
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs) != 0) return NULL;
    nghttp2_session_callbacks_set_send_callback2(cbs, oip_h2_send_cb);
    nghttp2_session_callbacks_set_on_header_callback(cbs, oip_h2_header_cb);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, oip_h2_data_cb);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, oip_h2_close_cb);
    nghttp2_session_callbacks_set_error_callback2(cbs, oip_h2_error_cb);
    return cbs;
}

/* Starts a non-blocking connect and c's session (its preface and SETTINGS go out when the
 * socket is writable). */
static void oip_h2_connect(oip_sender_run *run, oip_h2_conn *c, int streams,
                           const nghttp2_session_callbacks *cbs, const struct sockaddr *addr,
                           socklen_t addrlen) {
    oip_h2_close(c, streams, OIP_ERR_CLOSED, "the connection closed with the call in flight");
    if (c->tries >= OIP_H2_CONNECT_TRIES) {
        c->dead = 1;
        return;
    }
    c->tries++;
    int fd = socket(run->family, SOCK_STREAM, 0);
    if (fd < 0) {
        oip_load_fail(run, c->index, OIP_ERR_CONNECT, "socket(): %s", strerror(errno));
        c->dead = 1;
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
    c->fd = fd;
    if (connect(fd, addr, addrlen) != 0 && errno != EINPROGRESS) {
        oip_load_fail(run, c->index, OIP_ERR_CONNECT, "connect to %s port %u: %s", run->address,
                    (unsigned)run->port, strerror(errno));
        close(fd);
        c->fd = -1;
        if (c->tries >= OIP_H2_CONNECT_TRIES) c->dead = 1;
        return;
    }
    c->connecting = 1;
    if (nghttp2_session_client_new(&c->session, cbs, c) != 0) {
        oip_load_fail(run, c->index, OIP_ERR_CONNECT, "nghttp2_session_client_new failed");
        close(fd);
        c->fd = -1;
        c->dead = 1;
        return;
    }
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, OIP_H2_WINDOW},
    };
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, OIP_H2_WINDOW);
}

#define OIP_H2_NV(NAME, VALUE, VLEN)                                                           \
    {(uint8_t *)(NAME), (uint8_t *)(VALUE), sizeof(NAME) - 1, (VLEN),                           \
     NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE}

/* Submits the next call on c; returns 0, or -1 (counted) when nghttp2 refuses it. */
static int oip_h2_submit(oip_sender_run *run, const oip_h2_options *h2, oip_h2_conn *c,
                         oip_h2_call *call, size_t k, int64_t start) {
    memset(call, 0, sizeof *call);
    call->conn = c;
    call->start_ns = start;
    call->body = (const uint8_t *)run->requests[k];
    call->length = run->lengths[k];
    call->grpc_status = -1;
    nghttp2_nv nv[] = {
        OIP_H2_NV(":method", "POST", 4),
        OIP_H2_NV(":scheme", "http", 4),
        OIP_H2_NV(":path", h2->path, strlen(h2->path)),
        OIP_H2_NV(":authority", h2->authority, strlen(h2->authority)),
        OIP_H2_NV("content-type", "application/grpc", 16),
        OIP_H2_NV("te", "trailers", 8),
    };
    nghttp2_data_provider2 provider;
    provider.source.ptr = call;
    provider.read_callback = oip_h2_read_body;
    int32_t id = nghttp2_submit_request2(c->session, NULL, nv, sizeof nv / sizeof nv[0],
                                         &provider, call);
    if (id < 0) {
        oip_load_fail(run, c->index, OIP_ERR_SEND, "submit: %s", nghttp2_strerror(id));
        return -1;
    }
    call->id = id;
    c->active++;
    return 0;
}

int oip_h2_sender_run_load(oip_sender_run *run, const oip_h2_options *h2) {
    struct sockaddr_storage storage;
    socklen_t addrlen = (socklen_t)oip_load_address(run, &storage);
    if (!addrlen || run->connections < 1 || run->n_requests < 1 || h2->streams < 1 ||
        !h2->path || !h2->authority || (run->duration <= 0 && run->count == 0) ||
        run->timeout <= 0) {
        run->setup_failed = 1;
        snprintf(run->first_error, sizeof run->first_error,
                 "bad arguments: a numeric address, connections >= 1, streams >= 1, a path and "
                 "an authority, one request or more, a duration or a count, a positive timeout");
        return 0;
    }
    const struct sockaddr *addr = (const struct sockaddr *)&storage;
    int nc = run->connections, ns = h2->streams;
    oip_h2_conn *conns = calloc((size_t)nc, sizeof *conns);
    oip_h2_call *calls = calloc((size_t)nc * (size_t)ns, sizeof *calls);
    struct pollfd *fds = calloc((size_t)nc, sizeof *fds);
    int *fd_conn = calloc((size_t)nc, sizeof *fd_conn);
    uint8_t *buffer = malloc(OIP_H2_RECV_BUFFER);
    nghttp2_session_callbacks *cbs = oip_h2_callbacks();
    if (!conns || !calls || !fds || !fd_conn || !buffer || !cbs) {
        free(conns), free(calls), free(fds), free(fd_conn), free(buffer);
        if (cbs) nghttp2_session_callbacks_del(cbs);
        run->setup_failed = 1;
        snprintf(run->first_error, sizeof run->first_error, "out of memory");
        return 0;
    }
    double cpu0 = oip_load_cpu_seconds();
    int64_t origin = oip_load_now_ns();
    int64_t timeout_ns = (int64_t)(run->timeout * 1e9);
    int64_t end_ns = run->duration > 0 ? origin + (int64_t)(run->duration * 1e9) : INT64_MAX;
    double interval_ns = run->rate > 0 ? 1e9 / run->rate : 0;
    uint64_t next = 0;
    int64_t last = origin;
    for (int i = 0; i < nc; i++) {
        oip_h2_conn *c = &conns[i];
        c->index = i;
        c->fd = -1;
        c->run = run;
        c->origin = &origin;
        c->last = &last;
        c->calls = calls + (size_t)i * (size_t)ns;
        oip_h2_connect(run, c, ns, cbs, addr, addrlen);
    }
    for (;;) {
        int64_t now = oip_load_now_ns();
        int issuing = now < end_ns && (run->count == 0 || next < run->count);
        int alive = 0, busy = 0;
        for (int i = 0; i < nc; i++) {
            oip_h2_conn *c = &conns[i];
            if (c->dead) continue;
            alive++;
            if (!c->session || c->connecting) {
                busy += c->active;
                continue;
            }
            for (int s = 0; s < ns; s++) {
                oip_h2_call *call = &c->calls[s];
                if (call->id && !call->failed && now - call->start_ns > timeout_ns) {
                    call->failed = 1;
                    oip_load_fail(run, i, OIP_ERR_TIMEOUT,
                                "stream %d: no complete answer within %.3f s", (int)call->id,
                                run->timeout);
                    nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, call->id,
                                              NGHTTP2_CANCEL);
                }
            }
            for (int s = 0; s < ns && issuing; s++) {
                oip_h2_call *call = &c->calls[s];
                if (call->id) continue;
                int64_t due =
                    run->rate > 0 ? origin + (int64_t)((double)next * interval_ns) : now;
                if (due > now || (run->rate > 0 && due >= end_ns)) break;
                if (oip_h2_submit(run, h2, c, call, (size_t)(next % run->n_requests), due) < 0)
                    break;
                next++;
                run->sent++;
                issuing = now < end_ns && (run->count == 0 || next < run->count);
            }
            if (nghttp2_session_send(c->session) != 0) {
                oip_h2_connect(run, c, ns, cbs, addr, addrlen);
                continue;
            }
            busy += c->active;
        }
        if (alive == 0) break;
        if (!issuing && busy == 0) break;
        if (!issuing && now - (end_ns < INT64_MAX ? end_ns : now) > 2 * timeout_ns) break;
        int nfds = 0;
        for (int i = 0; i < nc; i++) {
            oip_h2_conn *c = &conns[i];
            if (c->fd < 0 || c->dead) continue;
            short ev = POLLIN;
            if (c->connecting || (c->session && nghttp2_session_want_write(c->session)))
                ev |= POLLOUT;
            if (c->connecting) ev = POLLOUT;
            fds[nfds].fd = c->fd;
            fds[nfds].events = ev;
            fds[nfds].revents = 0;
            fd_conn[nfds++] = i;
        }
        int64_t wake = now + OIP_H2_TICK_NS;
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
            oip_h2_conn *c = &conns[fd_conn[f]];
            if (c->connecting) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err) {
                    oip_load_fail(run, c->index, OIP_ERR_CONNECT, "connect to %s port %u: %s",
                                run->address, (unsigned)run->port, strerror(err));
                    oip_h2_connect(run, c, ns, cbs, addr, addrlen);
                } else {
                    c->connecting = 0;
                }
                continue;
            }
            if (!(fds[f].revents & (POLLIN | POLLERR | POLLHUP))) continue;
            for (;;) {
                ssize_t r = recv(c->fd, buffer, OIP_H2_RECV_BUFFER, 0);
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) {
                    char why[120];
                    snprintf(why, sizeof why, "the server closed the connection (%s)",
                             r < 0 ? strerror(errno) : "end of stream");
                    oip_h2_close(c, ns, OIP_ERR_CLOSED, why);
                    oip_h2_connect(run, c, ns, cbs, addr, addrlen);
                    break;
                }
                nghttp2_ssize used = nghttp2_session_mem_recv2(c->session, buffer, (size_t)r);
                if (used < 0) {
                    char why[160];
                    snprintf(why, sizeof why, "the answer is not HTTP/2 as RFC 9113 says (%s)",
                             nghttp2_strerror((int)used));
                    oip_load_fail(run, c->index, OIP_ERR_MALFORMED, "%s", why);
                    oip_h2_close(c, ns, OIP_ERR_CLOSED, "its connection broke off");
                    oip_h2_connect(run, c, ns, cbs, addr, addrlen);
                    break;
                }
                if ((size_t)r < OIP_H2_RECV_BUFFER) break;
            }
            /* A GOAWAY'd session with nothing left to do: made again. */
            if (c->session && !nghttp2_session_want_read(c->session) &&
                !nghttp2_session_want_write(c->session)) {
                oip_h2_close(c, ns, OIP_ERR_CLOSED, "the server ended the connection (GOAWAY)");
                oip_h2_connect(run, c, ns, cbs, addr, addrlen);
            }
        }
    }
    int64_t stop = oip_load_now_ns();
    if (run->rate > 0 && run->duration > 0) {
        uint64_t due = (uint64_t)ceil((double)(end_ns - origin) / interval_ns);
        if (run->count && due > run->count) due = run->count;
        run->unsent = due > next ? due - next : 0;
    }
    for (int i = 0; i < nc; i++)
        oip_h2_close(&conns[i], ns, OIP_ERR_TIMEOUT, "no complete answer by the end of the run");
    run->elapsed = (double)((last > origin ? last : stop) - origin) * 1e-9;
    run->cpu = oip_load_cpu_seconds() - cpu0;
    nghttp2_session_callbacks_del(cbs);
    free(conns), free(calls), free(fds), free(fd_conn), free(buffer);
    return 0;
}
