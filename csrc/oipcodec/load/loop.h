/* What the two halves of the load generator share (sender.c defines them, h2sender.c uses
 * them): the clocks, the error count with its first message, the server's address and the
 * wait in poll. Internal to csrc/oipcodec/load; its users are POSIX only, but the header names
 * the socket structures without their headers, so it compiles alone on every toolchain. */
#ifndef OIPCODEC_LOAD_LOOP_H
#define OIPCODEC_LOAD_LOOP_H

#include "oipcodec/load/sender.h"

#include <stdint.h>

struct pollfd;
struct sockaddr_storage;

/* The monotonic clock, ns. */
int64_t oip_load_now_ns(void);
/* This thread's CPU seconds. */
double oip_load_cpu_seconds(void);
/* Counts an error of `kind`; the first one's message is kept, prefixed by its connection. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
void oip_load_fail(oip_sender_run *run, int conn, enum oip_sender_error kind, const char *fmt,
                   ...);
/* run's numeric address and port in storage; its length, or 0 if the address does not parse. */
unsigned oip_load_address(const oip_sender_run *run, struct sockaddr_storage *storage);
/* poll() for at most wait_ns (ppoll on Linux: the open loop's due times need better than ms). */
int oip_load_wait(struct pollfd *fds, int nfds, int64_t wait_ns);

#endif
