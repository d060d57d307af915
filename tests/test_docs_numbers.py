"""Numbers in README.md and docs/*.md that are marked as coming from a committed table must equal the table.

A marked number follows an HTML comment naming the table, the row and the column (invisible when rendered):

    <!-- from results/paper/co2_table1.csv: dataset=letter, method=co2_forest, n_trees=30, test_error -->2.72

``key=value`` items select exactly one row (numbers compared as numbers), the one item without ``=`` is the
column. The number must be the table's value rounded to the digits shown.
"""

import math
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"<!--\s*from\s+(?P<table>[^:\s]+):\s*(?P<spec>.*?)\s*-->\s*(?P<number>[-+]?\d[\d,]*(?:\.\d+)?)")


def markers(path):
    text = path.read_text()
    return [(path.relative_to(ROOT), text[:m.start()].count("\n") + 1, m) for m in MARK.finditer(text)]


ALL = [marker for path in DOCS for marker in markers(path)]


def _equal(cell, wanted):
    try:
        return math.isclose(float(cell), float(wanted), rel_tol=0, abs_tol=1e-9)
    except (TypeError, ValueError):
        return str(cell) == wanted


def table_value(table, spec):
    """The value a marker names: (value, description of the row) or raise AssertionError."""
    items = [item.strip() for item in spec.split(",") if item.strip()]
    filters = dict(item.split("=", 1) for item in items if "=" in item)
    columns = [item for item in items if "=" not in item]
    assert len(columns) == 1, f"name exactly one column, got {columns}"
    frame = pd.read_csv(ROOT / table, dtype=str, keep_default_na=False)
    assert columns[0] in frame, f"{table} has no column {columns[0]!r}"
    rows = frame
    for key, wanted in filters.items():
        assert key in frame, f"{table} has no column {key!r}"
        rows = rows[[_equal(cell, wanted) for cell in rows[key]]]
    assert len(rows) == 1, f"{table}: {filters} matches {len(rows)} rows, not one"
    return float(rows[columns[0]].iloc[0])


def test_the_readme_marks_its_numbers():
    assert sum(1 for path, _, _ in ALL if path.name == "README.md") >= 10


@pytest.mark.parametrize("path,line,match", ALL, ids=[f"{p}:{line}" for p, line, _ in ALL])
def test_marked_number_equals_its_table(path, line, match):
    shown = match["number"].replace(",", "")
    digits = len(shown.split(".")[1]) if "." in shown else 0
    value = table_value(match["table"], match["spec"])
    assert abs(value - float(shown)) <= 0.5 * 10 ** -digits + 1e-9, (
        f"{path}:{line} says {shown}, {match['table']} ({match['spec']}) has {value:g}")


def test_a_wrong_number_is_caught(tmp_path):
    """The check can fail: the same marker in front of another number does not pass."""
    text = "<!-- from results/paper/co2_table1.csv: dataset=letter, method=co2_forest, n_trees=30, test_error -->2.92"
    match = MARK.search(text)
    value = table_value(match["table"], match["spec"])
    assert abs(value - float(match["number"])) > 0.005


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300
