/* Feeds csrc/oipcodec/h2/grpc.h's readers (message prefix, grpc-timeout, content-type) every
 * input of a corpus file and each of its prefixes, each in a heap block of exactly its size (so
 * AddressSanitizer sees a read one past the end), and prints one line per input and prefix:
 * "prefix-answer compressed length timeout-answer nanoseconds content-type-answer". Built with
 * -fsanitize=address,undefined by tests/kernels/test_grpc_header.py.
 *
 * The corpus: records of a 4-byte little-endian length and that many bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/h2/grpc.h"

static void answer(const unsigned char *data, size_t n) {
    unsigned char *copy = malloc(n ? n : 1);
    int compressed = -1, rc_prefix, rc_timeout;
    uint32_t length = 0;
    int64_t ns = -1;
    if (copy == NULL) exit(2);
    memcpy(copy, data, n);
    rc_prefix = oip_grpc_prefix(copy, n, &compressed, &length);
    rc_timeout = oip_grpc_timeout(copy, n, &ns);
    printf("%d %d %lu %d %lld %d\n", rc_prefix, compressed, (unsigned long)length, rc_timeout,
           (long long)ns, oip_grpc_content_type(copy, n));
    free(copy);
}

int main(int argc, char **argv) {
    FILE *f;
    unsigned char size[4];
    if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) return 2;
    while (fread(size, 1, 4, f) == 4) {
        size_t n = size[0] | (size[1] << 8) | ((size_t)size[2] << 16) | ((size_t)size[3] << 24);
        unsigned char *data = malloc(n ? n : 1);
        if (data == NULL || fread(data, 1, n, f) != n) return 2;
        for (size_t k = 0; k <= n; k++) answer(data, k);
        free(data);
    }
    fclose(f);
    return 0;
}
