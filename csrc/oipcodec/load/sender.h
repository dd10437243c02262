/* The HTTP/1.1 load generator behind oipcodec.bench.sender: its interface.
 *
 * One thread drives N keep-alive connections with poll(): each sends pre-encoded request bytes
 * (several bodies are cycled) and reads the answer with a streaming parser (status line,
 * Content-Length or chunked transfer coding, trailers), so an answer's body is counted, never
 * stored. Closed loop: a connection sends its next request when its answer is complete. Open
 * loop: request i is due at i / rate seconds; it goes out on the first idle connection and its
 * latency is measured from its due time, so a server that falls behind (or too few connections)
 * shows as latency instead of being hidden (coordinated omission).
 *
 * Bounded: one shared receive buffer, a fixed header buffer per connection, answers past
 * max_answer and headers past OIPCODEC_SENDER_MAX_HEADER are errors, every request times out,
 * the run ends at its duration or count and then waits for answers in flight at most one
 * timeout. Every malformed answer is counted as an error with its first message kept; the
 * connection is then closed and made again.
 *
 * This header is the interface, plain C11 on every platform; the loop is in sender.c (POSIX
 * sockets and poll; setup.py compiles it into oipcodec.bench._sender, not on Windows). It uses
 * nothing from the other folders of csrc/oipcodec. The HTTP/2 half (gRPC), h2sender.h, fills
 * the same outputs; the helpers both halves use are declared in loop.h. */
#ifndef OIPCODEC_LOAD_SENDER_H
#define OIPCODEC_LOAD_SENDER_H

#include <stddef.h>
#include <stdint.h>

#define OIPCODEC_SENDER_MAX_HEADER 16384

enum oip_sender_error {
    OIP_ERR_CONNECT = 0, /* connect() refused or failed */
    OIP_ERR_SEND,        /* send() failed */
    OIP_ERR_CLOSED,      /* the server closed the connection before the answer was complete */
    OIP_ERR_MALFORMED,   /* the answer is not HTTP/1.x as RFC 9112 says */
    OIP_ERR_TOO_LARGE,   /* header or body past its bound */
    OIP_ERR_TIMEOUT,     /* no complete answer within the timeout */
    OIP_ERR_STATUS,      /* HTTP/2 only: a call ended with a grpc-status other than 0 */
    OIP_ERR_KINDS
};

typedef struct {
    /* inputs */
    int family;             /* AF_INET or AF_INET6 */
    const char *address;    /* numeric address */
    uint16_t port;
    const char *const *requests; /* pre-encoded requests, cycled */
    const size_t *lengths;
    size_t n_requests;
    int connections;
    double duration;        /* seconds; 0: none */
    uint64_t count;         /* requests; 0: none */
    double rate;            /* requests/s; 0: closed loop */
    double timeout;         /* seconds a request may take */
    uint64_t max_answer;    /* bytes of an answer's body */
    /* outputs: one record per complete answer, up to capacity */
    uint64_t capacity;
    int64_t *done_ns;       /* completion, from the start */
    int64_t *latency_ns;
    uint16_t *status;
    uint64_t recorded;
    uint64_t completed;     /* complete answers, recorded or not */
    uint64_t sent;          /* requests written (or begun) */
    uint64_t unsent;        /* open loop: due before the end, never sent */
    uint64_t status_counts[600];
    uint64_t errors[OIP_ERR_KINDS];
    char first_error[320];
    double elapsed;         /* seconds from the start to the last answer or give-up */
    double cpu;             /* this thread's CPU seconds during the run */
    int setup_failed;       /* nonzero: nothing ran, first_error says why */
} oip_sender_run;

/* Runs the load described by run's inputs and fills its outputs. Returns 0; bad arguments or
 * no memory set run->setup_failed and first_error instead of running. Thread-safe: it touches
 * nothing but run and its own sockets. */
int oip_sender_run_load(oip_sender_run *run);

#endif
