/* Feeds csrc/oipcodec/http/head.h's parser every input of a corpus file, and its prefixes of
 * up to 1 KiB (long lines' quadratic cost kept out), each in a heap block of exactly its size
 * (so AddressSanitizer sees a read one past the end), and prints one line per input: the
 * answer to the whole input, then how many prefixes were partial, fast and other. Built with
 * -fsanitize=address,undefined by tests/kernels/test_http11.py.
 *
 * The corpus: records of a 4-byte little-endian length and that many bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oipcodec/http/head.h"

int main(int argc, char **argv) {
    FILE *f;
    unsigned char size[4];
    if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL) return 2;
    while (fread(size, 1, 4, f) == 4) {
        size_t n = size[0] | (size[1] << 8) | ((size_t)size[2] << 16) | ((size_t)size[3] << 24);
        unsigned char *data = malloc(n ? n : 1);
        oip_http_head h;
        size_t k, counts[3] = {0, 0, 0};
        int kind;
        if (data == NULL || fread(data, 1, n, f) != n) return 2;
        for (k = 0; k < n && k < 1024; k++) {
            unsigned char *prefix = malloc(k ? k : 1);
            if (prefix == NULL) return 2;
            memcpy(prefix, data, k);
            counts[oip_http_parse_head(prefix, k, &h)]++;
            free(prefix);
        }
        kind = oip_http_parse_head(data, n, &h);
        printf("%d %zu %zu %lld %lld %d %d %zu %zu %zu\n", kind, h.head_length, h.line_length,
               (long long)h.content_length, (long long)h.header_length, h.keep_alive, h.v10,
               counts[0], counts[1], counts[2]);
        free(data);
    }
    fclose(f);
    return 0;
}
