# The v1 header text reader: the native kernel. Its twin and reference is
# oipcodec/_pure/v1text.py; the plain form it reads and its contract are in
# oipcodec/_shared/v1text.py.
#
# One pass over the text's UTF-8 bytes (CPython keeps them with the str): a scanner cuts the
# next token (a name, a decimal number, a double-quoted string without escapes, ':' '{' '}'),
# checking every length before it reads, and the readers below take the tokens the plain form
# allows. Anything else stops the scan: the answer is None and the codec asks text_format.

from libc.string cimport memcmp

from oipcodec._shared import contract
from oipcodec._shared.v1text import CONTRACTS

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


cdef dict _input(Scanner* s):
    cdef dict fields = {}
    cdef list dims = []
    fields["dims"] = dims
    while True:
        _next(s)
        if s.kind == T_CLOSE:
            return fields
        if _is(s, b"dims", 4):
            dims.append(_number(s, True, 0))
        elif _is(s, b"name", 4) and "name" not in fields:
            fields["name"] = _string(s)
        elif _is(s, b"batch_byte_size", 15) and "batch_byte_size" not in fields:
            fields["batch_byte_size"] = _number(s, False, UINT64_MAX)
        else:
            raise _Stop


cdef dict _output(Scanner* s):
    cdef dict fields = {}
    while True:
        _next(s)
        if s.kind == T_CLOSE:
            return fields
        if _is(s, b"name", 4) and "name" not in fields:
            fields["name"] = _string(s)
        elif _is(s, b"cls", 3) and "cls" not in fields:
            _open(s)
            _next(s)
            if not _is(s, b"count", 5):
                raise _Stop
            fields["cls"] = _number(s, False, UINT32_MAX)
            _take(s, T_CLOSE)
        else:
            raise _Stop


@contract(CONTRACTS)
def scan_request_header(str text):
    cdef Scanner s
    cdef dict fields = {}
    cdef list inputs = []
    cdef list outputs = []
    s.text = PyUnicode_AsUTF8AndSize(text, &s.size)
    s.at = 0
    s.kind = T_END
    s.negative = False
    s.magnitude = 0
    try:
        while _next(&s) != T_END:
            if _is(&s, b"input", 5):
                _open(&s)
                inputs.append(_input(&s))
            elif _is(&s, b"output", 6):
                _open(&s)
                outputs.append(_output(&s))
            elif _is(&s, b"batch_size", 10) and "batch_size" not in fields:
                fields["batch_size"] = _number(&s, False, UINT32_MAX)
            elif _is(&s, b"flags", 5) and "flags" not in fields:
                fields["flags"] = _number(&s, False, UINT32_MAX)
            elif _is(&s, b"id", 2) and "id" not in fields:
                fields["id"] = _number(&s, False, UINT64_MAX)
            elif _is(&s, b"correlation_id", 14) and "correlation_id" not in fields:
                fields["correlation_id"] = _number(&s, False, UINT64_MAX)
            else:
                raise _Stop
    except _Stop:
        return None
    return fields, inputs, outputs


cdef dict _raw(Scanner* s):
    cdef dict fields = {}
    cdef list dims = []
    fields["dims"] = dims
    while True:
        _next(s)
        if s.kind == T_CLOSE:
            return fields
        if _is(s, b"dims", 4):
            dims.append(_number(s, True, 0))
        elif _is(s, b"batch_byte_size", 15) and "batch_byte_size" not in fields:
            fields["batch_byte_size"] = _number(s, False, UINT64_MAX)
        else:
            raise _Stop


cdef dict _response_output(Scanner* s):
    cdef dict fields = {}
    while True:
        _next(s)
        if s.kind == T_CLOSE:
            return fields
        if _is(s, b"name", 4) and "name" not in fields:
            fields["name"] = _string(s)
        elif _is(s, b"raw", 3) and "raw" not in fields:
            _open(s)
            fields["raw"] = _raw(s)
        else:
            raise _Stop


@contract(CONTRACTS)
def scan_response_header(str text):
    cdef Scanner s
    cdef dict fields = {}
    cdef list outputs = []
    s.text = PyUnicode_AsUTF8AndSize(text, &s.size)
    s.at = 0
    s.kind = T_END
    s.negative = False
    s.magnitude = 0
    try:
        while _next(&s) != T_END:
            if _is(&s, b"output", 6):
                _open(&s)
                outputs.append(_response_output(&s))
            elif _is(&s, b"model_name", 10) and "model_name" not in fields:
                fields["model_name"] = _string(&s)
            elif _is(&s, b"model_version", 13) and "model_version" not in fields:
                fields["model_version"] = _number(&s, True, 0)
            elif _is(&s, b"batch_size", 10) and "batch_size" not in fields:
                fields["batch_size"] = _number(&s, False, UINT32_MAX)
            elif _is(&s, b"id", 2) and "id" not in fields:
                fields["id"] = _number(&s, False, UINT64_MAX)
            else:
                raise _Stop
    except _Stop:
        return None
    return fields, outputs
