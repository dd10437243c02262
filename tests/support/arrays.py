"""Array equality for the tests that compare oipcodec's arrays with a peer's or a sample."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_same(got: np.ndarray[Any, Any], expected: np.ndarray[Any, Any], what: str = "") -> None:
    """The same array: type, dtype and shape, and the same contents bit for bit (an object
    array, BYTES, element by element, each of the same type). ``what`` names the case in a
    failure."""
    assert type(got) is type(expected), what
    assert got.dtype == expected.dtype, what
    assert got.shape == expected.shape, what
    if got.dtype == object:
        assert got.tolist() == expected.tolist(), what
        assert [type(x) for x in got.flat] == [type(x) for x in expected.flat], what
    else:
        assert got.tobytes() == expected.tobytes(), what
