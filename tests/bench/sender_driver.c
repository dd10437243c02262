/* Drives csrc/oipcodec/load/sender.c from the command line, for test_sender_sanitized.py (built
 * there under ASan and UBSan): sends one request to 127.0.0.1 and prints the outcome.
 * Arguments: port connections count duration rate timeout max_answer capacity request. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "oipcodec/load/sender.h"

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s port connections count duration rate timeout max_answer "
                        "capacity request\n", argv[0]);
        return 2;
    }
    oip_sender_run *run = calloc(1, sizeof *run);
    const char *request = argv[9];
    size_t length = strlen(request);
    uint64_t capacity = strtoull(argv[8], NULL, 10);
    run->family = AF_INET;
    run->address = "127.0.0.1";
    run->port = (uint16_t)atoi(argv[1]);
    run->requests = &request;
    run->lengths = &length;
    run->n_requests = 1;
    run->connections = atoi(argv[2]);
    run->count = strtoull(argv[3], NULL, 10);
    run->duration = atof(argv[4]);
    run->rate = atof(argv[5]);
    run->timeout = atof(argv[6]);
    run->max_answer = strtoull(argv[7], NULL, 10);
    run->capacity = capacity;
    run->done_ns = calloc(capacity ? capacity : 1, sizeof(int64_t));
    run->latency_ns = calloc(capacity ? capacity : 1, sizeof(int64_t));
    run->status = calloc(capacity ? capacity : 1, sizeof(uint16_t));
    oip_sender_run_load(run);
    printf("setup_failed=%d sent=%llu completed=%llu recorded=%llu unsent=%llu", run->setup_failed,
           (unsigned long long)run->sent, (unsigned long long)run->completed,
           (unsigned long long)run->recorded, (unsigned long long)run->unsent);
    for (int k = 0; k < OIP_ERR_KINDS; k++) printf(" e%d=%llu", k, (unsigned long long)run->errors[k]);
    printf(" s200=%llu\n%s\n", (unsigned long long)run->status_counts[200], run->first_error);
    free(run->done_ns), free(run->latency_ns), free(run->status), free(run);
    return 0;
}
