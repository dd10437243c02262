# Locate tensor "data" arrays in an OIP JSON body: the native kernel. Its twin and reference
# is oipcodec/_pure/jsonscan.py; the error messages are oipcodec/_shared/jsonscan.py.
#
# Skipping a data array is the hot part: a 1M-element FP32 array is ~11 MB of text. Only three
# bytes matter for finding its end ('"', '[' and ']'), so the scanner keeps, for each, a pointer
# to its next occurrence found with memchr (vectorised in every libc) and moves from one to
# the nearest, instead of looking at every byte.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.string cimport memchr

from oipcodec._shared import contract
from oipcodec._shared.buffers import byte_view
from oipcodec._shared.jsonscan import CONTRACTS, scan_error, unbalanced, unterminated_string

__all__ = ["locate_data"]

cdef enum ScanError:
    OK = 0
    EXPECTED = 1       # Scan.expected names what should have been at Scan.pos
    UNTERMINATED = 2   # string opened at Scan.pos never closes
    UNBALANCED = 3     # brackets still open at the end of the text

cdef struct Scan:
    const char *base
    const char *end
    const char *pos
    int error
    const char *expected
    const char *error_at
    const char *key_end   # end (after the closing quote) of the key _key last scanned


cdef inline bint _is_ws(char c) noexcept nogil:
    return c == b' ' or c == b'\t' or c == b'\n' or c == b'\r'


cdef inline int _ws(Scan *s) noexcept nogil:
    """Skip white space; the next byte, or -1 at the end."""
    while s.pos < s.end and _is_ws(s.pos[0]):
        s.pos += 1
    return <unsigned char>s.pos[0] if s.pos < s.end else -1


cdef inline int _fail(Scan *s, int error, const char *expected) noexcept nogil:
    s.error = error
    s.expected = expected
    s.error_at = s.pos
    return -1


cdef inline const char *_find(const char *p, const char *end, char c) noexcept nogil:
    cdef const char *q = <const char *>memchr(p, c, end - p)
    return q if q != NULL else end


cdef int _string(Scan *s) noexcept nogil:
    """Move past the string at s.pos (escapes honoured, not decoded)."""
    if _ws(s) != b'"':
        return _fail(s, EXPECTED, "a string")
    cdef const char *start = s.pos + 1
    cdef const char *q = start
    cdef const char *b
    while True:
        q = _find(q, s.end, b'"')
        if q == s.end:
            return _fail(s, UNTERMINATED, NULL)
        b = q
        while b > start and (b - 1)[0] == b'\\':
            b -= 1
        if (q - b) % 2 == 0:  # an even run of backslashes escapes itself, not the quote
            s.pos = q + 1
            return 0
        q += 1


cdef int _composite(Scan *s, char open_char, char close_char) noexcept nogil:
    """Move past the array or object opening at s.pos."""
    cdef const char *next_quote = _find(s.pos, s.end, b'"')
    cdef const char *next_open = _find(s.pos, s.end, open_char)
    cdef const char *next_close = _find(s.pos, s.end, close_char)
    cdef Py_ssize_t depth = 0
    while True:
        if next_quote < next_open and next_quote < next_close:
            s.pos = next_quote
            if _string(s) < 0:
                return -1
            # A bracket found inside the string is not structural: look again after it.
            next_quote = _find(s.pos, s.end, b'"')
            if next_open < s.pos:
                next_open = _find(s.pos, s.end, open_char)
            if next_close < s.pos:
                next_close = _find(s.pos, s.end, close_char)
        elif next_open < next_close:
            depth += 1
            next_open = _find(next_open + 1, s.end, open_char)
        elif next_close < s.end:
            depth -= 1
            s.pos = next_close + 1
            if depth == 0:
                return 0
            next_close = _find(s.pos, s.end, close_char)
        else:
            s.pos = s.end
            return _fail(s, UNBALANCED, NULL)


cdef int _value(Scan *s) noexcept nogil:
    """Move past one JSON value of any kind."""
    cdef int first = _ws(s)
    cdef const char *start
    if first == b'"':
        return _string(s)
    if first == b'[':
        return _composite(s, b'[', b']')
    if first == b'{':
        return _composite(s, b'{', b'}')
    start = s.pos
    while s.pos < s.end and not _is_ws(s.pos[0]) and s.pos[0] != b',' \
            and s.pos[0] != b']' and s.pos[0] != b'}':
        s.pos += 1
    if s.pos == start:
        return _fail(s, EXPECTED, "a JSON value")
    return 0


cdef inline int _expect(Scan *s, char c, const char *expected) noexcept nogil:
    if _ws(s) != <unsigned char>c:
        return _fail(s, EXPECTED, expected)
    s.pos += 1
    return 0


cdef inline bint _key_equals(const char *key, const char *key_end, const char *name,
                             Py_ssize_t n) noexcept nogil:
    # [key, key_end) is the key with its quotes; compared as written, escapes and all.
    cdef Py_ssize_t i
    if key_end - key - 2 != n:
        return False
    for i in range(n):
        if key[1 + i] != name[i]:
            return False
    return True


cdef int _key(Scan *s, const char **key) noexcept nogil:
    """Scan a member's key and its ':'; *key is the key's opening quote, s.pos after ':'."""
    _ws(s)
    key[0] = s.pos
    if _string(s) < 0:
        return -1
    s.key_end = s.pos
    return _expect(s, b':', "':'")


cdef int _section(Scan *s, int section, list found) except -2:
    """The inputs/outputs array at s.pos: record each tensor's data span."""
    cdef Py_ssize_t index = 0
    cdef const char *key
    cdef const char *start
    cdef int rc
    cdef bint is_data
    s.pos += 1  # the '['
    if _ws(s) == b']':
        s.pos += 1
        return 0
    while True:
        if _ws(s) != b'{':
            with nogil:
                rc = _value(s)
            if rc < 0:
                return -1
        else:
            s.pos += 1
            if _ws(s) == b'}':
                s.pos += 1
            else:
                while True:
                    if _key(s, &key) < 0:
                        return -1
                    is_data = _key_equals(key, s.key_end, "data", 4)
                    _ws(s)
                    start = s.pos
                    with nogil:
                        rc = _value(s)
                    if rc < 0:
                        return -1
                    if is_data:
                        found.append((section, index, start - s.base, s.pos - s.base))
                    if _ws(s) == b',':
                        s.pos += 1
                        continue
                    if _expect(s, b'}', "',' or '}'") < 0:
                        return -1
                    break
        index += 1
        if _ws(s) == b',':
            s.pos += 1
            continue
        return _expect(s, b']', "',' or ']'")


@contract(CONTRACTS)
def locate_data(buffer):
    view = byte_view(buffer, "body")
    # A plain Py_buffer, not a typed memoryview, whose acquisition costs more than the scan
    # of a small request's JSON.
    cdef Py_buffer data
    cdef Scan s
    cdef list found = []
    cdef const char *key
    cdef int section, rc
    cdef const char *empty = ""
    PyObject_GetBuffer(view, &data, PyBUF_SIMPLE)
    try:
        s.base = <const char *>data.buf if data.len else empty
        s.end = s.base + data.len
        s.pos = s.base
        s.error = OK
        if _ws(&s) != b'{':
            _fail(&s, EXPECTED, "a JSON object")
            _raise(&s, view)
        s.pos += 1
        if _ws(&s) == b'}':
            s.pos += 1
        else:
            while True:
                if _key(&s, &key) < 0:
                    _raise(&s, view)
                section = -1
                if _key_equals(key, s.key_end, "inputs", 6):
                    section = SECTION_INPUTS
                elif _key_equals(key, s.key_end, "outputs", 7):
                    section = SECTION_OUTPUTS
                if section >= 0 and _ws(&s) == b'[':
                    rc = _section(&s, section, found)
                else:
                    with nogil:
                        rc = _value(&s)
                if rc < 0:
                    _raise(&s, view)
                if _ws(&s) == b',':
                    s.pos += 1
                    continue
                if _expect(&s, b'}', "',' or '}'") < 0:
                    _raise(&s, view)
                break
        if _ws(&s) != -1:
            _fail(&s, EXPECTED, "the end of the JSON text")
            _raise(&s, view)
    finally:
        PyBuffer_Release(&data)
    return found


cdef _raise(Scan *s, view):
    cdef Py_ssize_t pos = s.error_at - s.base
    if s.error == UNTERMINATED:
        raise unterminated_string(pos)
    if s.error == UNBALANCED:
        raise unbalanced(pos)
    raise scan_error(view, pos, s.expected.decode("ascii"))
