/* The HTTP/2 half of the load generator (gRPC unary calls over h2c, prior knowledge): its
 * interface. The outputs are those of the HTTP/1.1 half (oip_sender_run in sender.h); what
 * differs is read from oip_h2_options.
 *
 * One thread drives `connections` connections with poll(), each an nghttp2 client session (the
 * library vendored in csrc/third_party/nghttp2) keeping up to `streams` calls in flight. Each
 * call sends one pre-encoded body (a gRPC message with its 5-byte prefix; several are cycled)
 * and reads the answer: :status must be 200 and the trailers must carry grpc-status. A call
 * ending with grpc-status 0 is complete and recorded (status 0); any other grpc-status is
 * counted in status_counts and as an OIP_ERR_STATUS error with its grpc-message kept, never
 * recorded. Closed loop: a stream's end starts the next call on its connection. Open loop: call
 * i is due at i / rate seconds, goes out on the first connection with a free stream, and its
 * latency counts from its due time.
 *
 * Bounded: answer DATA past max_answer bytes resets the stream (OIP_ERR_TOO_LARGE), every call
 * times out (its stream reset), a connection that closes counts its calls in flight as
 * OIP_ERR_CLOSED and is made again, the run ends at its duration or count and then waits for
 * the calls in flight at most one timeout. */
#ifndef OIPCODEC_LOAD_H2SENDER_H
#define OIPCODEC_LOAD_H2SENDER_H

#include "oipcodec/load/sender.h"

typedef struct {
    const char *authority; /* :authority, e.g. "127.0.0.1:8001" */
    const char *path;      /* :path, e.g. "/inference.GRPCInferenceService/ModelInfer" */
    int streams;           /* concurrent calls per connection, 1 or more */
} oip_h2_options;

/* Runs the gRPC load described by run's inputs (requests are the framed gRPC messages) and
 * h2, and fills run's outputs as oip_sender_run_load does. Returns 0. Thread-safe. */
int oip_h2_sender_run_load(oip_sender_run *run, const oip_h2_options *h2);

#endif
