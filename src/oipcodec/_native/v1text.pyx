# The v1 header text reader: the native kernel. Its twin and reference is
# oipcodec/_pure/v1text.py; the plain form it reads and its contract are in
# oipcodec/_shared/v1text.py.
#
# One pass over the text's UTF-8 bytes (CPython keeps them with the str): a scanner cuts the
# next token (a name, a decimal number, a double-quoted string without escapes, ':' '{' '}'),
# checking every length before it reads, and one reader (_message) takes the tokens the table
# MESSAGES of _shared/v1text.py allows. Anything else stops the scan: the answer is None and
# the codec asks text_format.

from cpython.object cimport PyObject
from libc.string cimport memcmp

from oipcodec._shared import contract
from oipcodec._shared.v1text import CONTRACTS, COUNT, DIMS, INT64, MANY, MESSAGES, STRING

__all__ = ["scan_request_header", "scan_response_header"]

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
    object PyUnicode_DecodeUTF8(const char* data, Py_ssize_t size, const char* errors)

cdef enum:
    T_END = 0
    T_NAME = 1
    T_NUMBER = 2
    T_STRING = 3
    T_COLON = 4
    T_OPEN = 5
    T_CLOSE = 6
    T_BAD = 7

# The kinds of MESSAGES (oipcodec/_shared/v1text.py), as _fields stores them.
cdef enum:
    K_UNSIGNED = 0
    K_INT64 = 1
    K_STRING = 2
    K_DIMS = 3
    K_COUNT = 4
    K_ONE = 5
    K_MANY = 6

cdef unsigned long long UINT32_MAX = 4294967295ULL
cdef unsigned long long UINT64_MAX = 18446744073709551615ULL
cdef unsigned long long INT64_MAGNITUDE = 9223372036854775808ULL  # |INT64_MIN|


class _Stop(Exception):
    """Not the plain form."""


cdef struct Scanner:
    const char* text
    Py_ssize_t size
    Py_ssize_t at
    # the last token: kind, and where its characters are (a string's without the quotes)
    int kind
    Py_ssize_t start
    Py_ssize_t stop
    # a number's magnitude and sign (magnitudes over 2**64 - 1 are refused as they are read)
    unsigned long long magnitude
    bint negative


cdef inline bint _space(char c) noexcept nogil:
    return c == 32 or (c >= 9 and c <= 13)  # ' ' \t \n \v \f \r


cdef inline bint _alpha(char c) noexcept nogil:
    return (c >= 65 and c <= 90) or (c >= 97 and c <= 122) or c == 95  # A-Z a-z _


cdef inline bint _digit(char c) noexcept nogil:
    return c >= 48 and c <= 57


cdef inline bint _word(char c) noexcept nogil:
    return _alpha(c) or _digit(c)


cdef int _next(Scanner* s) noexcept nogil:
    """Cut the next token; its kind (T_BAD for anything the plain form does not hold)."""
    cdef const char* p = s.text
    cdef Py_ssize_t n = s.size
    cdef Py_ssize_t i = s.at
    cdef char c
    cdef unsigned long long digit
    while i < n and _space(p[i]):
        i += 1
    s.start = i
    if i == n:
        s.kind = T_END
    else:
        c = p[i]
        if _alpha(c):
            i += 1
            while i < n and _word(p[i]):
                i += 1
            s.stop = i
            s.kind = T_NAME
        elif _digit(c) or c == 45:  # '-'
            s.negative = c == 45
            if s.negative:
                i += 1
            if i == n or not _digit(p[i]):
                s.kind = T_BAD
            elif p[i] == 48 and i + 1 < n and _digit(p[i + 1]):  # a leading zero: octal
                s.kind = T_BAD
            else:
                s.magnitude = 0
                s.kind = T_NUMBER
                while i < n and _digit(p[i]):
                    digit = <unsigned long long>(p[i] - 48)
                    if s.magnitude > (UINT64_MAX - digit) // 10:
                        s.kind = T_BAD  # over 2**64 - 1: out of every field's range
                        break
                    s.magnitude = s.magnitude * 10 + digit
                    i += 1
                if s.kind == T_NUMBER and i < n and (_word(p[i]) or p[i] == 46):  # glued on
                    s.kind = T_BAD
            s.stop = i
        elif c == 34:  # '"'
            i += 1
            s.start = i
            while i < n and p[i] != 34 and p[i] != 92 and p[i] != 10:  # '"' '\\' '\n'
                i += 1
            if i == n or p[i] != 34:
                s.kind = T_BAD
            else:
                s.stop = i
                i += 1
                s.kind = T_STRING
        elif c == 58:  # ':'
            i += 1
            s.kind = T_COLON
        elif c == 123:  # '{'
            i += 1
            s.kind = T_OPEN
        elif c == 125:  # '}'
            i += 1
            s.kind = T_CLOSE
        else:
            s.kind = T_BAD
    s.at = i
    return s.kind


cdef inline bint _is(Scanner* s, const char* word, Py_ssize_t length) noexcept nogil:
    """Whether the last token is the name ``word``."""
    return (
        s.kind == T_NAME
        and s.stop - s.start == length
        and memcmp(s.text + s.start, word, length) == 0
    )


cdef object _take(Scanner* s, int kind):
    if _next(s) != kind:
        raise _Stop


cdef object _number(Scanner* s, bint signed, unsigned long long high):
    """``: <integer>``: an unsigned one up to ``high``, or (``signed``) an int64."""
    _take(s, T_COLON)
    _take(s, T_NUMBER)
    if signed:
        if s.negative:
            if s.magnitude > INT64_MAGNITUDE:
                raise _Stop
            return -<object>s.magnitude
        if s.magnitude > INT64_MAGNITUDE - 1:
            raise _Stop
        return s.magnitude
    if s.negative and s.magnitude != 0:
        raise _Stop
    if s.magnitude > high:
        raise _Stop
    return s.magnitude


cdef object _string(Scanner* s):
    _take(s, T_COLON)
    _take(s, T_STRING)
    return PyUnicode_DecodeUTF8(s.text + s.start, s.stop - s.start, NULL)


cdef object _open(Scanner* s):
    """An optional ``:`` and ``{``."""
    if _next(s) == T_COLON:
        _next(s)
    if s.kind != T_OPEN:
        raise _Stop


cdef struct Field:
    # one field of MESSAGES, its name's bytes kept alive by _KEEP
    const char* name
    Py_ssize_t length
    PyObject* key
    int kind
    unsigned long long high
    # a nested message's fields: _FIELDS[first:first + count]
    Py_ssize_t first
    Py_ssize_t count


cdef Field _FIELDS[64]
cdef Py_ssize_t _NFIELDS = 0
cdef list _KEEP = []


cdef Py_ssize_t _register(str message) except -1:
    """Lay MESSAGES[message]'s fields out in _FIELDS (nested messages after); its first index."""
    global _NFIELDS
    cdef dict kinds = MESSAGES[message]
    cdef Py_ssize_t first = _NFIELDS, i = first
    cdef Field* f
    if _NFIELDS + len(kinds) > 64:
        raise RuntimeError("oipcodec: MESSAGES has more fields than v1text.pyx holds")
    _NFIELDS += len(kinds)
    for name, kind in kinds.items():
        encoded = name.encode()
        _KEEP.append((encoded, name))
        f = &_FIELDS[i]
        f.name = encoded
        f.length = len(encoded)
        f.key = <PyObject*>name
        f.high = 0
        f.first = 0
        f.count = 0
        if isinstance(kind, tuple):
            f.kind = K_MANY if kind[0] == MANY else K_ONE
            f.count = len(MESSAGES[kind[1]])
            f.first = _register(kind[1])
        elif kind in (INT64, STRING, DIMS, COUNT):
            f.kind = {INT64: K_INT64, STRING: K_STRING, DIMS: K_DIMS, COUNT: K_COUNT}[kind]
        else:
            f.kind = K_UNSIGNED
            f.high = kind
        i += 1
    return first


cdef Py_ssize_t _REQUEST = _register("request")
cdef Py_ssize_t _REQUEST_COUNT = len(MESSAGES["request"])
cdef Py_ssize_t _RESPONSE = _register("response")
cdef Py_ssize_t _RESPONSE_COUNT = len(MESSAGES["response"])


cdef inline bint _same(const char* a, const char* b, Py_ssize_t n) noexcept nogil:
    """Whether a[:n] == b[:n]: a loop the compiler inlines, where a memcmp of a length known
    only at run time is a call (field names are a few bytes)."""
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] != b[i]:
            return False
    return True


cdef dict _message(Scanner* s, Py_ssize_t first, Py_ssize_t count, list top):
    """The fields of one message up to its ``}``; or, given ``top``, of the whole text, with
    the repeated messages' lists appended to ``top`` instead of held in the fields."""
    cdef dict fields = {}
    cdef Field* f
    cdef Py_ssize_t i, j
    # the lists of the repeated fields, by field (fields holds the references)
    cdef PyObject* lists[16]
    if count > 16:
        raise RuntimeError("oipcodec: a v1 message has more fields than v1text.pyx holds")
    for i in range(count):
        if _FIELDS[first + i].kind == K_DIMS or _FIELDS[first + i].kind == K_MANY:
            items = []
            if top is not None and _FIELDS[first + i].kind == K_MANY:
                top.append(items)
            else:
                fields[<object>_FIELDS[first + i].key] = items
            lists[i] = <PyObject*>items
    while True:
        _next(s)
        if (s.kind == T_END) if top is not None else (s.kind == T_CLOSE):
            return fields
        j = -1
        if s.kind == T_NAME:
            for i in range(count):
                f = &_FIELDS[first + i]
                if s.stop - s.start == f.length and _same(s.text + s.start, f.name, f.length):
                    j = i
                    break
        if j < 0:
            raise _Stop
        f = &_FIELDS[first + j]
        if f.kind == K_DIMS:
            (<list>lists[j]).append(_number(s, True, 0))
            continue
        if f.kind == K_MANY:
            _open(s)
            (<list>lists[j]).append(_message(s, f.first, f.count, None))
            continue
        key = <object>f.key
        if key in fields:
            raise _Stop
        elif f.kind == K_STRING:
            fields[key] = _string(s)
        elif f.kind == K_INT64:
            fields[key] = _number(s, True, 0)
        elif f.kind == K_COUNT:
            _open(s)
            _next(s)
            if not _is(s, b"count", 5):
                raise _Stop
            fields[key] = _number(s, False, UINT32_MAX)
            _take(s, T_CLOSE)
        elif f.kind == K_ONE:
            _open(s)
            fields[key] = _message(s, f.first, f.count, None)
        else:
            fields[key] = _number(s, False, f.high)


cdef tuple _read(str text, Py_ssize_t first, Py_ssize_t count):
    """(fields, the repeated messages' lists...) of the whole text, or None."""
    cdef Scanner s
    cdef list top = []
    s.text = PyUnicode_AsUTF8AndSize(text, &s.size)
    s.at = 0
    s.kind = T_END
    s.negative = False
    s.magnitude = 0
    try:
        fields = _message(&s, first, count, top)
    except _Stop:
        return None
    if len(top) == 2:
        return fields, top[0], top[1]
    return fields, top[0]


@contract(CONTRACTS)
def scan_request_header(str text):
    return _read(text, _REQUEST, _REQUEST_COUNT)


@contract(CONTRACTS)
def scan_response_header(str text):
    return _read(text, _RESPONSE, _RESPONSE_COUNT)
