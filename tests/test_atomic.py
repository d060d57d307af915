"""treeopt._atomic.atomic_path: a file is written whole or not at all."""

import pytest

from treeopt._atomic import atomic_path


def test_a_finished_block_replaces_the_file(tmp_path):
    target = tmp_path / "sub" / "table.csv"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.exists() and not target.exists()
        tmp.write_text("new")
    assert target.read_text() == "new" and sorted(p.name for p in target.parent.iterdir()) == ["table.csv"]


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_a_failed_block_leaves_the_old_file_and_no_temporary(tmp_path, error):
    target = tmp_path / "table.csv"
    target.write_text("old")
    with pytest.raises(error):
        with atomic_path(target, prefix=".table.p1.", suffix=".tmp.csv") as tmp:
            assert tmp.name.startswith(".table.p1.") and tmp.name.endswith(".tmp.csv")
            tmp.write_text("half")
            raise error
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["table.csv"]
