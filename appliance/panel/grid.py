"""The pointer grid, the last resort for what has no element: a 3x3 grid over the screen whose
cell, once chosen by number, becomes the next grid, until a click lands in its middle."""

from __future__ import annotations

from dataclasses import dataclass

SIDE = 3
MIN_CELL_PX = 6
"""A cell smaller than this cannot be split usefully; the grid stops refining."""


@dataclass(frozen=True)
class Grid:
    """The area (x, y, width, height) being divided, in screen pixels."""

    x: int
    y: int
    width: int
    height: int

    def cell(self, number: int) -> Grid:
        """Cell 1..9, numbered in reading order, as the next grid."""
        if not 1 <= number <= SIDE * SIDE:
            raise ValueError(f"a grid cell is 1 to {SIDE * SIDE}")
        row, col = divmod(number - 1, SIDE)
        xs = self._edges(self.x, self.width)
        ys = self._edges(self.y, self.height)
        return Grid(xs[col], ys[row], xs[col + 1] - xs[col], ys[row + 1] - ys[row])

    def cells(self) -> tuple[Grid, ...]:
        return tuple(self.cell(n) for n in range(1, SIDE * SIDE + 1))

    def centre(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2

    def refinable(self) -> bool:
        return min(self.width, self.height) >= SIDE * MIN_CELL_PX

    @staticmethod
    def _edges(start: int, length: int) -> list[int]:
        # Integer edges that share out the remainder, so the cells cover the area exactly.
        return [start + length * i // SIDE for i in range(SIDE + 1)]
