# Declarations of csrc/oipcodec/common/endian.h: little-endian loads and stores at any alignment.
from libc.stdint cimport uint16_t, uint32_t, uint64_t

cdef extern from "oipcodec/common/endian.h" nogil:
    int OIPCODEC_BIG_ENDIAN
    uint16_t oipcodec_load_le16(const void *p)
    uint32_t oipcodec_load_le32(const void *p)
    uint64_t oipcodec_load_le64(const void *p)
    void oipcodec_store_le16(void *p, uint16_t v)
    void oipcodec_store_le32(void *p, uint32_t v)
    void oipcodec_store_le64(void *p, uint64_t v)
