# GraphPipe flatbuffer kernel: the native kernel. Its twin and reference is
# oipcodec/_pure/flatbuf.py; the schema, the writer and every error message live in
# oipcodec/_shared/flatbuf.py. The reader below follows the twin method by method and checks in
# the same order, so that both stop at the same byte with the same error. Every position is
# checked against the buffer's size before the bytes there are read.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from oipcodec._native.endian cimport (
    oipcodec_load_le16,
    oipcodec_load_le32,
    oipcodec_load_le64,
    oipcodec_store_le32,
)

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared import flatbuf as fc
from oipcodec._shared.buffers import byte_view, element_type_error, utf8_error
from oipcodec._shared.flatbuf import CONTRACTS
from oipcodec.limits import DEFAULT_LIMITS

__all__ = ["pack_strings", "read_flatbuffer", "write_flatbuffer"]

# The field kinds (U8 ... UNION) are C constants from flatbuf.pxd.

cdef dict SCHEMA = fc.SCHEMA


@contract(CONTRACTS)
def read_flatbuffer(data, root="Request", limits=DEFAULT_LIMITS):
    fc.check_root(root)
    view = byte_view(data).toreadonly()
    cdef Py_ssize_t size = len(view)
    if size > fc.MAX_BUFFER:
        raise fc.too_large(size)
    if size < 8:
        raise fc.too_short(size)
    cdef _Reader reader = _Reader(view, limits.max_bytes_element)
    return reader.table(root, reader.offset(0, root))


cdef class _Reader:
    cdef object view
    cdef const uint8_t[::1] memory
    cdef const uint8_t *base
    cdef Py_ssize_t size
    cdef Py_ssize_t items
    cdef Py_ssize_t budget
    cdef Py_ssize_t string_bytes
    cdef uint64_t max_element

    def __cinit__(self, view, max_element):
        self.view = view
        self.memory = view
        self.base = &self.memory[0]
        self.size = len(view)
        self.items = 0
        self.budget = self.size // 4
        self.string_bytes = 0
        self.max_element = max_element

    cdef inline int count(self, Py_ssize_t pos, Py_ssize_t items) except -1:
        self.items += items
        if self.items > self.budget:
            raise fc.too_many_items(pos, self.size)
        return 0

    cdef Py_ssize_t offset(self, Py_ssize_t at, what) except -1:
        """The position a uoffset stored at ``at`` points to."""
        cdef uint32_t value
        if at & 3:
            raise fc.misaligned(at, what, 4)
        if at + 4 > self.size:
            raise fc.past_end(at, what, 4, self.size)
        value = oipcodec_load_le32(self.base + at)
        if value == 0 or value >= 0x80000000u or at + <Py_ssize_t>value >= self.size:
            raise fc.bad_offset(at, what, value, self.size)
        return at + value

    cdef Py_ssize_t vector(self, Py_ssize_t at, what, int width) except -1:
        """The element count of the vector at ``at``, its elements checked to be inside."""
        cdef uint64_t count
        if at & 3:
            raise fc.misaligned(at, what, 4)
        if at + 4 > self.size:
            raise fc.past_end(at, what, 4, self.size)
        count = oipcodec_load_le32(self.base + at)
        if count * width > <uint64_t>(self.size - at - 4):
            raise fc.past_end(at, what, 4 + count * width, self.size)
        return <Py_ssize_t>count

    cdef object string(self, Py_ssize_t at, what):
        cdef Py_ssize_t length = self.vector(at, what, 1)
        cdef Py_ssize_t end = at + 4 + length
        if end >= self.size:
            raise fc.past_end(at, what, length + 5, self.size)
        if self.base[end] != 0:
            raise fc.no_terminator(end, what)
        if <uint64_t>length > self.max_element:
            raise fc.string_too_long(at, what, length, self.max_element)
        self.string_bytes += length
        if self.string_bytes > self.size:
            raise fc.too_many_string_bytes(at, self.size)
        return PyBytes_FromStringAndSize(<const char *>self.base + at + 4, length)

    cdef Py_ssize_t check_strings(self, Py_ssize_t at, Py_ssize_t count,
                                  Py_ssize_t *total) noexcept nogil:
        """How many elements of the string vector at ``at`` (its ``count`` uoffsets already
        checked to be inside) pass every check of :meth:`offset` and :meth:`string`, in
        order; ``total``: the string bytes read with theirs."""
        cdef const uint8_t *base = self.base
        cdef Py_ssize_t size = self.size, index, slot, target, end
        cdef uint64_t value, length
        total[0] = self.string_bytes
        for index in range(count):
            slot = at + 4 + 4 * index  # 4-aligned and inside: checked with the vector
            value = oipcodec_load_le32(base + slot)
            if value == 0 or value >= 0x80000000u or slot + <Py_ssize_t>value >= size:
                return index
            target = slot + <Py_ssize_t>value
            if target & 3 or target + 4 > size:
                return index
            length = oipcodec_load_le32(base + target)
            if length > <uint64_t>(size - target - 4):
                return index
            end = target + 4 + <Py_ssize_t>length
            if end >= size or base[end] != 0 or length > self.max_element:
                return index
            if total[0] + <Py_ssize_t>length > size:
                return index
            total[0] += <Py_ssize_t>length
        return count

    cdef tuple table(self, str name, Py_ssize_t at):
        cdef const uint8_t *base = self.base
        cdef Py_ssize_t size = self.size
        cdef tuple fields = SCHEMA[name]
        cdef Py_ssize_t nfields = len(fields)
        cdef Py_ssize_t vt, vt_size, table_size, slots, slot, pos
        cdef int kind, width
        cdef uint16_t voff
        cdef list values = []
        self.count(at, 1)
        if at & 3:
            raise fc.misaligned(at, name, 4)
        if at + 4 > size:
            raise fc.past_end(at, name, 4, size)
        vt = at - <int32_t>oipcodec_load_le32(base + at)
        if vt < 0 or vt + 4 > size:
            raise fc.bad_vtable(at, name, f"at byte {vt} is outside the buffer")
        if vt & 1:
            raise fc.misaligned(vt, f"{name} vtable", 2)
        vt_size = oipcodec_load_le16(base + vt)
        table_size = oipcodec_load_le16(base + vt + 2)
        if vt_size < 4 or vt_size & 1:
            raise fc.bad_vtable(vt, name, f"size {vt_size} is not an even number of at least 4")
        if vt + vt_size > size:
            raise fc.past_end(vt, f"{name} vtable", vt_size, size)
        if table_size < 4:
            raise fc.bad_vtable(vt, name, f"gives the table {table_size} bytes, fewer than 4")
        if at + table_size > size:
            raise fc.past_end(at, name, table_size, size)
        slots = (vt_size - 4) >> 1
        for slot in range(nfields, slots):
            if oipcodec_load_le16(base + vt + 4 + 2 * slot):
                raise fc.unknown_field(vt, name, slot)
        for slot in range(nfields):
            field_name, kind, arg = <tuple>fields[slot]
            voff = oipcodec_load_le16(base + vt + 4 + 2 * slot) if slot < slots else 0
            if voff == 0:
                if kind == UNION and values[slot - 1] != 0:
                    utype = values[slot - 1]
                    if utype < len(arg):
                        raise fc.union_without_value(at, f"{name}.{field_name}", arg[utype])
                    raise fc.bad_union(at, f"{name}.{field_name}", utype, arg)
                values.append(0 if kind == U8 or kind == I64 else None)
                continue
            width = 1 if kind == U8 else 8 if kind == I64 else 4
            if voff < 4 or voff + width > table_size:
                raise fc.bad_vtable(
                    vt, name, f"puts {field_name} at {voff}, outside the table's {table_size} bytes"
                )
            pos = at + voff
            if pos & (width - 1):
                raise fc.misaligned(pos, f"{name}.{field_name}", width)
            if kind == U8:
                values.append(base[pos])
            elif kind == I64:
                values.append(<int64_t>oipcodec_load_le64(base + pos))
            elif kind == UNION:
                utype = values[slot - 1]
                if utype == 0:
                    values.append(None)
                elif utype >= len(arg):
                    raise fc.bad_union(at, f"{name}.{field_name}", utype, arg)
                else:
                    what = f"{name}.{field_name}"
                    values.append(self.table(arg[utype], self.offset(pos, what)))
            else:
                what = f"{name}.{field_name}"
                values.append(self.reference(kind, arg, self.offset(pos, what), what))
        return tuple(values)

    cdef object reference(self, int kind, arg, Py_ssize_t at, what):
        cdef Py_ssize_t count, index, good, total
        cdef const uint8_t *p
        cdef object[::1] strings
        if kind == STR:
            self.count(at, 1)
            return self.string(at, what)
        if kind == VEC_U8:
            count = self.vector(at, what, 1)
            self.count(at, 1)
            return self.view[at + 4 : at + 4 + count]
        if kind == VEC_I64:
            count = self.vector(at, what, 8)
            if (at + 4) & 7:
                raise fc.misaligned(at + 4, f"{what} elements", 8)
            self.count(at, 1 + count)
            p = self.base + at + 4
            return tuple([<int64_t>oipcodec_load_le64(p + 8 * index) for index in range(count)])
        count = self.vector(at, what, 4)
        self.count(at, 1 + count)
        if kind == VEC_STR:
            array = np.empty(count, dtype=object)
            strings = array
            with nogil:
                good = self.check_strings(at, count, &total)
            for index in range(good):
                p = self.base + at + 4 + 4 * index
                p += oipcodec_load_le32(p)
                strings[index] = PyBytes_FromStringAndSize(
                    <const char *>p + 4, oipcodec_load_le32(p)
                )
            self.string_bytes = total
            if good < count:
                # Element ``good`` fails a check: the checks again, with the GIL, raise the
                # error the pure twin raises there.
                self.string(self.offset(at + 4 + 4 * good, what), what)
                raise AssertionError("a string failed a check only without the GIL")
            return array
        return [self.table(arg, self.offset(at + 4 + 4 * index, what)) for index in range(count)]


@contract(CONTRACTS)
def pack_strings(values):
    cdef list elements = values.tolist() if isinstance(values, np.ndarray) else list(values)
    cdef Py_ssize_t count = len(elements), index, total, length, pos
    cdef list encoded = elements
    cdef char *out
    cdef const char *source
    cdef object element
    # First pass: every element as bytes, and the size of the whole vector.
    total = 4 + 4 * count
    for index in range(count):
        element = elements[index]
        if PyUnicode_Check(element):
            try:
                element = (<str>element).encode()
            except UnicodeError as exc:
                raise utf8_error(index, exc) from None
            encoded[index] = element
        elif not isinstance(element, bytes):
            raise element_type_error(index, element)
        length = len(<bytes>element)
        total += 4 + length + (4 - length % 4)
    result = PyBytes_FromStringAndSize(NULL, total)
    out = PyBytes_AS_STRING(result)
    oipcodec_store_le32(out, <uint32_t>count)
    pos = 4 + 4 * count
    for index in range(count):
        element = encoded[index]
        length = len(<bytes>element)
        source = PyBytes_AS_STRING(element)
        oipcodec_store_le32(out + 4 + 4 * index, <uint32_t>(pos - 4 - 4 * index))
        oipcodec_store_le32(out + pos, <uint32_t>length)
        memcpy(out + pos + 4, source, length)
        pos += 4 + length
        # the NUL, then padding to 4
        memcpy(out + pos, b"\0\0\0\0", 4 - length % 4)
        pos += 4 - length % 4
    return result


@contract(CONTRACTS)
def write_flatbuffer(root, value, inline_limit=fc.INLINE_LIMIT):
    return fc.write_flatbuffer(root, value, pack_strings, inline_limit)
