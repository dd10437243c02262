# What other native modules cimport from jsondecode (the fused REST path): the walk over one
# data array's text into a typed buffer. Included by the generated jsondecode.pxd.
from libc.stdint cimport uint64_t

cdef enum:
    MAX_LEVELS = 65  # numpy's 64 dimensions (element_count refuses more), plus one to spare


cdef struct Walk:
    const unsigned char *base
    const unsigned char *end
    int kind
    bint float_lane             # a float datatype: try oipcodec_float_run first
    bint int_lane               # an integer datatype: try oipcodec_int_run first
    uint64_t max_positive       # integer datatypes: the largest magnitude of each sign
    uint64_t max_negative
    Py_ssize_t itemsize
    unsigned char *out          # the flat output buffer (unused for BYTES)
    Py_ssize_t index            # elements read so far
    Py_ssize_t alloc            # elements the buffer holds
    Py_ssize_t max_depth
    bint flat
    int nopen                   # arrays open
    Py_ssize_t counts[MAX_LEVELS]  # entries so far in each open array
    int code                    # why the walk stopped
    const unsigned char *stop   # where


# Set up ``w`` to read the ``length`` bytes at ``base`` as ``kind`` elements of ``itemsize``
# bytes; the caller sets ``w.out`` to a buffer of ``alloc`` elements.
cdef void walk_init(
    Walk *w, int kind, Py_ssize_t itemsize, Py_ssize_t alloc, Py_ssize_t max_depth,
    const unsigned char *base, Py_ssize_t length
) noexcept nogil
# Read the array into w.out (``count`` elements in ``shape``); OK or the stop code, with
# w.stop where and w.index how many elements were read.
cdef int walk(Walk *w, int ndim, const Py_ssize_t *shape, Py_ssize_t count) noexcept nogil
