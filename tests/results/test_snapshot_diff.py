from pytest_niah.results.snapshot_diff import (
    CELLS_SHOWN,
    changed_cells,
    mismatch_block,
    table_cells,
)

OLD = """# name: test_metric_table[prod]
  dict({
    'literal/whole': dict({
      'L128': dict({
        'auc': 0.912,
        'missed': 4,
        'normalized': 'nan',
      }),
      'effective_length': 256,
    }),
  })
# ---
"""


def test_cells_are_keyed_by_their_path():
    assert table_cells(OLD) == {
        "literal/whole L128 auc": "0.912",
        "literal/whole L128 missed": "4",
        "literal/whole L128 normalized": "nan",
        "literal/whole effective_length": "256",
    }


def test_only_changed_cells_are_listed_old_to_new():
    new = OLD.replace("0.912", "0.850").replace(
        "'effective_length': 256", "'effective_length': None"
    )
    assert changed_cells(OLD, new) == [
        "literal/whole L128 auc: 0.912 -> 0.850",
        "literal/whole effective_length: 256 -> None",
    ]
    assert changed_cells(OLD, OLD) == []


def test_a_cell_on_one_side_only_says_absent():
    new = OLD.replace("        'missed': 4,\n", "")
    assert changed_cells(OLD, new) == ["literal/whole L128 missed: 4 -> (absent)"]


def test_the_block_counts_and_cuts_long_lists():
    block = mismatch_block("title", OLD, OLD.replace("0.912", "0.5"))
    assert block.splitlines()[0] == "title (1 changed cell)"
    assert "  literal/whole L128 auc: 0.912 -> 0.5" in block.splitlines()
    many_old = "".join(f"'c{i}': {i},\n" for i in range(CELLS_SHOWN + 3))
    many_new = "".join(f"'c{i}': {i + 1},\n" for i in range(CELLS_SHOWN + 3))
    long = mismatch_block("t", many_old, many_new)
    assert f"({CELLS_SHOWN + 3} changed cells)" in long
    assert "... and 3 more changed cells" in long
    assert len([x for x in long.splitlines() if " -> " in x]) == CELLS_SHOWN


def test_no_stored_snapshot_says_how_to_make_one():
    text = mismatch_block("t", None, OLD, "test_metric_table[prod]")
    assert text.startswith("Snapshot 'test_metric_table[prod]' does not exist!")
    assert "--snapshot-update" in text
