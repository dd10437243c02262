/* Drives csrc/oipcodec/load/h2sender.c from the command line, for test_sender_sanitized.py
 * (built there with the vendored nghttp2 under ASan and UBSan): gRPC calls to 127.0.0.1 over
 * two connections, one message (framed here), and prints the outcome.
 * Arguments: port path streams count timeout max_answer message. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "oipcodec/load/h2sender.h"

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s port path streams count timeout max_answer message\n",
                argv[0]);
        return 2;
    }
    size_t n = strlen(argv[7]);
    char *framed = malloc(n + 5);
    framed[0] = 0;
    for (int i = 0; i < 4; i++) framed[1 + i] = (char)(n >> (24 - 8 * i));
    memcpy(framed + 5, argv[7], n);
    const char *request = framed;
    size_t length = n + 5;
    char authority[64];
    snprintf(authority, sizeof authority, "127.0.0.1:%s", argv[1]);
    oip_h2_options h2 = {authority, argv[2], atoi(argv[3])};
    oip_sender_run *run = calloc(1, sizeof *run);
    run->family = AF_INET;
    run->address = "127.0.0.1";
    run->port = (uint16_t)atoi(argv[1]);
    run->requests = &request;
    run->lengths = &length;
    run->n_requests = 1;
    run->connections = 2;
    run->count = strtoull(argv[4], NULL, 10);
    run->timeout = atof(argv[5]);
    run->max_answer = strtoull(argv[6], NULL, 10);
    run->capacity = 10;
    run->done_ns = calloc(10, sizeof(int64_t));
    run->latency_ns = calloc(10, sizeof(int64_t));
    run->status = calloc(10, sizeof(uint16_t));
    oip_h2_sender_run_load(run, &h2);
    printf("setup_failed=%d sent=%llu completed=%llu recorded=%llu", run->setup_failed,
           (unsigned long long)run->sent, (unsigned long long)run->completed,
           (unsigned long long)run->recorded);
    for (int k = 0; k < OIP_ERR_KINDS; k++) printf(" e%d=%llu", k, (unsigned long long)run->errors[k]);
    printf("\n%s\n", run->first_error);
    free(run->done_ns), free(run->latency_ns), free(run->status), free(run), free(framed);
    return 0;
}
