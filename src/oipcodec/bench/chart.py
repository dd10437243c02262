"""The throughput chart of ``oipcodec bench``, drawn with numpy and written as PNG with zlib.

No plotting library: the chart is horizontal bars with text, which a pixel array and a
5x7 bitmap font draw well, and the harness stays installable with the core dependencies
only (matplotlib would add about 40 MB of wheels for one picture). The PNG is RGB, 8 bits,
one IDAT chunk, every row with filter 0 (PNG spec, ISO/IEC 15948, sections 11.2 and 12).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Bar", "Panel", "draw_chart", "write_png"]

# 5x7 glyphs, one 5-bit row each (most significant bit on the left); letters are drawn
# upper case. Drawn for this module.
_GLYPHS = {
    "A": "01110 10001 10001 11111 10001 10001 10001",
    "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110",
    "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110",
    "V": "10001 10001 10001 10001 01010 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010",
    "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100",
    "Z": "11111 00001 00010 00100 01000 10000 11111",
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    " ": "00000 00000 00000 00000 00000 00000 00000",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    "_": "00000 00000 00000 00000 00000 00000 11111",
    "/": "00000 00001 00010 00100 01000 10000 00000",
    "+": "00000 00100 00100 11111 00100 00100 00000",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "[": "01110 01000 01000 01000 01000 01000 01110",
    "]": "01110 00010 00010 00010 00010 00010 01110",
    "%": "11000 11001 00010 00100 01000 10011 00011",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    "*": "00000 00100 10101 01110 10101 00100 00000",
    "=": "00000 00000 11111 00000 11111 00000 00000",
    "?": "01110 10001 00001 00010 00100 00000 00100",
}
_FONT = {
    char: np.array([[c == "1" for c in row] for row in rows.split()], dtype=bool)
    for char, rows in _GLYPHS.items()
}
_SCALE = 2
_ADVANCE = 6 * _SCALE  # 5 columns and 1 of space
_LINE = 7 * _SCALE

_WHITE = (255, 255, 255)
_INK = (33, 37, 41)
_GRID = (222, 226, 230)
#: Bar colours per implementation (others: grey).
COLOURS = {
    "native": (31, 119, 180),
    "pure": (255, 127, 14),
    "tritonclient": (127, 127, 127),
    "kserve": (44, 160, 44),
    "mlserver": (148, 103, 189),
}


class Bar:
    """One bar: its label, value, and the text written after it."""

    def __init__(self, label: str, value: float, text: str, colour: tuple[int, int, int],
                 marked: bool = False) -> None:  # fmt: skip
        self.label = label
        self.value = value
        self.text = text
        self.colour = colour
        self.marked = marked


class Panel:
    """A titled group of bars sharing one linear scale (one payload)."""

    def __init__(self, title: str, bars: Sequence[Bar]) -> None:
        self.title = title
        self.bars = list(bars)


def _text(canvas: np.ndarray[Any, Any], x: int, y: int, text: str,
          colour: tuple[int, int, int] = _INK) -> None:  # fmt: skip
    height, width = canvas.shape[:2]
    for char in text.upper():
        glyph = _FONT.get(char, _FONT["?"])
        big = np.kron(glyph, np.ones((_SCALE, _SCALE), dtype=bool))
        h, w = big.shape
        if x + w > width or y + h > height or x < 0 or y < 0:
            return
        region = canvas[y : y + h, x : x + w]
        region[big] = colour
        x += _ADVANCE


def draw_chart(title: str, panels: Sequence[Panel], subtitle: str = "") -> np.ndarray[Any, Any]:
    """The chart as an RGB uint8 array (height, width, 3)."""
    label_chars = max([len(b.label) for p in panels for b in p.bars] + [10]) + 3
    label_w = label_chars * _ADVANCE + 16
    bar_w = 560
    text_w = 18 * _ADVANCE
    width = max(label_w + bar_w + text_w + 16, (max(len(title), len(subtitle)) + 4) * _ADVANCE)
    row_h = _LINE + 8
    height = 16 + 2 * (_LINE + 10) + 24
    for panel in panels:
        height += _LINE + 14 + row_h * len(panel.bars) + 18
    canvas = np.full((height, width, 3), _WHITE, dtype=np.uint8)
    y = 16
    _text(canvas, 16, y, title)
    y += _LINE + 10
    _text(canvas, 16, y, subtitle, (108, 117, 125))
    y += _LINE + 18
    for panel in panels:
        _text(canvas, 16, y, panel.title)
        y += _LINE + 14
        top = max([b.value for b in panel.bars] + [0.0])
        canvas[y - 6 : y + row_h * len(panel.bars), label_w - 1] = _GRID
        for bar in panel.bars:
            _text(canvas, 16, y + 4, ("* " if bar.marked else "  ") + bar.label)
            length = round(bar_w * bar.value / top) if top > 0 else 0
            if length > 0:
                canvas[y + 2 : y + row_h - 2, label_w : label_w + length] = bar.colour
            _text(canvas, label_w + max(length, 0) + 8, y + 4, bar.text)
            y += row_h
        y += 18
    return canvas


def write_png(path: str | Path, image: np.ndarray[Any, Any]) -> None:
    """Write an RGB uint8 array (height, width, 3) as a PNG file."""
    pixels = np.ascontiguousarray(image, dtype=np.uint8)
    height, width, channels = pixels.shape
    if channels != 3:
        raise ValueError("write_png takes RGB images (height, width, 3)")
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)),
            chunk(b"IEND", b""),
        ]
    )
    Path(path).write_bytes(data)
