"""The tables that the benchmark scripts print, and write for the documentation.

A script prints its table row by row as it measures. With ``--csv PATH``
(:func:`add_csv_argument`) it also writes the same table to PATH as CSV: a
header row, then one row per measurement, the cells as printed. The tables
of the documentation's performance and accuracy pages are such files, kept
in ``docs/results/`` and included by the pages, so that what the pages
show is what a script printed.
"""

import csv
from pathlib import Path


def add_csv_argument(parser):
    """The ``--csv PATH`` option of every script that prints a table."""
    parser.add_argument("--csv", type=Path, metavar="PATH",
                        help="also write the table to PATH as CSV (docs/results/ format)")


def paired_cells(ours, theirs):
    """Two measurements and their ratio, as a table prints them (ours,
    theirs, ours / theirs)."""
    return [seconds(ours), seconds(theirs), f"{ours / theirs:.2f}"]


def seconds(value):
    """A time (or any positive measurement) to three significant digits,
    without an exponent: 0.0123, 1.25, 20.9, 823, 4530."""
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:#.3g}".rstrip(".")


def size(n):
    """A row count as the tables write it: 1e4, 2e5, or 935."""
    mantissa, exponent = f"{n:.0e}".split("e")
    if float(f"{mantissa}e{exponent}") != n:
        return str(int(n))
    return f"{mantissa}e{int(exponent)}"


class Table:
    """A table printed row by row, and written to ``path`` when given.

    Parameters
    ----------
    columns : list of str
        The column names.
    path : path-like or None
        Where to write the CSV; rewritten after every row, so that an
        interrupted run keeps the rows measured so far.
    title : str or None
        Printed once above the table.
    """

    def __init__(self, columns, path=None, title=None):
        self.columns = list(columns)
        self.path = path
        self.rows = []
        self.widths = [max(len(name), 6) for name in self.columns]
        if title:
            print(f"\n{title}")
        print(self._line(self.columns), flush=True)

    def _line(self, cells):
        first, *rest = [f"{cell:>{width}}" if index else f"{cell:<{width}}"
                        for index, (cell, width) in enumerate(zip(cells, self.widths,
                                                                  strict=True))]
        return " ".join([first, *rest])

    def add(self, *cells):
        """Print one row (one cell per column, formatted by the caller)."""
        cells = [str(cell) for cell in cells]
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(cells)
        self.widths = [max(width, len(cell)) for width, cell in zip(self.widths, cells,
                                                                     strict=True)]
        print(self._line(cells), flush=True)
        if self.path is not None:
            self.write(self.path)

    def write(self, path):
        """Write the header and the rows so far to ``path`` as CSV."""
        with open(path, "w", newline="") as out:
            writer = csv.writer(out, quoting=csv.QUOTE_ALL)
            writer.writerow(self.columns)
            writer.writerows(self.rows)
