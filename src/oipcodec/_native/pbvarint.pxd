# Declarations of csrc/oipcodec/protobuf/varint.h: protobuf varint loops (see the header's comment).
from libc.stdint cimport uint8_t, uint64_t

cdef extern from "oipcodec/protobuf/varint.h" nogil:
    int OIPCODEC_PB_OK
    int OIPCODEC_PB_TRUNCATED
    int OIPCODEC_PB_OVERLONG
    int oipcodec_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
    int oipcodec_pb_count_packed(const uint8_t *p, const uint8_t *end,
                                 Py_ssize_t *count, Py_ssize_t *bad)
    Py_ssize_t oipcodec_pb_decode_packed(const uint8_t *p, const uint8_t *end,
                                         void *out, int field)
    int oipcodec_pb_varint_size(uint64_t v)
    size_t oipcodec_pb_varints_size(const uint8_t *values, size_t n)
    uint8_t *oipcodec_pb_write_varint(uint8_t *out, uint64_t v)
    uint8_t *oipcodec_pb_write_varints(uint8_t *out, const uint8_t *values, size_t n)
