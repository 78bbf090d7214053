"""A tiny RGB raster with a PNG encoder (zlib only), enough for the chaos timeline.

Written instead of depending on matplotlib: the harness runs wherever rillet runs, and a
timeline needs only rectangles, lines and a few labels. Text uses a 3x5 pixel font drawn at
an integer scale; characters it lacks are drawn as blanks.
"""

from __future__ import annotations

import struct
import zlib

Color = tuple[int, int, int]
WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)

# 3x5 glyphs: five rows, each a 3-bit number (4 = left pixel, 2 = middle, 1 = right).
_FONT = {
    "0": "75557", "1": "26227", "2": "71747", "3": "71717", "4": "55711",
    "5": "74717", "6": "74757", "7": "71122", "8": "75757", "9": "75717",
    "A": "25755", "B": "65656", "C": "34443", "D": "65556", "E": "74647",
    "F": "74644", "G": "34553", "H": "55755", "I": "72227", "J": "11152",
    "K": "55655", "L": "44447", "M": "57755", "N": "65555", "O": "25552",
    "P": "65644", "Q": "25563", "R": "65655", "S": "34216", "T": "72222",
    "U": "55557", "V": "55552", "W": "55775", "X": "55255", "Y": "55222",
    "Z": "71247", "-": "00700", ".": "00002", "/": "11244", ":": "02020",
    " ": "00000", "=": "07070", "(": "24442", ")": "21112", "%": "51245",
    "_": "00007", ",": "00024", "+": "02720", ">": "42124", "<": "12421",
}  # fmt: skip
GLYPH_W, GLYPH_H = 3, 5


class Canvas:
    """An RGB image; coordinates are pixels from the top left, clipped at the edges."""

    def __init__(self, width: int, height: int, background: Color = WHITE) -> None:
        if width < 1 or height < 1:
            raise ValueError("a canvas needs at least one pixel")
        self.width, self.height = width, height
        self._px = bytearray(bytes(background) * (width * height))

    def pixel(self, x: int, y: int) -> Color:
        i = 3 * (y * self.width + x)
        return (self._px[i], self._px[i + 1], self._px[i + 2])

    def set(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = 3 * (y * self.width + x)
            self._px[i : i + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        """Fill the rectangle with corners (x0, y0) and (x1, y1), both included."""
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        x0, x1 = max(0, x0), min(self.width - 1, x1)
        y0, y1 = max(0, y0), min(self.height - 1, y1)
        if x0 > x1 or y0 > y1:
            return
        row = bytes(color) * (x1 - x0 + 1)
        for y in range(y0, y1 + 1):
            i = 3 * (y * self.width + x0)
            self._px[i : i + len(row)] = row

    def line(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        """Bresenham's line, endpoints included."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.set(x0, y0, color)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x: int, y: int, text: str, color: Color = BLACK, scale: int = 2) -> int:
        """Draw ``text`` with its top left at (x, y); returns the x after it."""
        for ch in text.upper():
            rows = _FONT.get(ch, "00000")
            for r, bits in enumerate(rows):
                for c in range(GLYPH_W):
                    if int(bits) & (4 >> c):
                        self.rect(
                            x + c * scale,
                            y + r * scale,
                            x + (c + 1) * scale - 1,
                            y + (r + 1) * scale - 1,
                            color,
                        )
            x += (GLYPH_W + 1) * scale
        return x

    @staticmethod
    def text_width(text: str, scale: int = 2) -> int:
        return len(text) * (GLYPH_W + 1) * scale

    def png(self) -> bytes:
        """The image as a PNG file (8-bit RGB, no filtering, zlib level 9)."""
        stride = 3 * self.width
        raw = b"".join(
            b"\x00" + bytes(self._px[y * stride : (y + 1) * stride]) for y in range(self.height)
        )
        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 9))
            + _chunk(b"IEND", b"")
        )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
