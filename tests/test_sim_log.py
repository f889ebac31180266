"""The iteration log's typed columns hold exactly the rows appended, whichever way a flush packs a column."""
from array import array

from whatif.simulator.log import FLUSH_VALUES, ITERATION_COLUMNS, TYPECODES, WIDTH, IterationLog


def _rows(n: int, constant_from: int) -> list[tuple]:
    """n rows: the replica and preempted columns constant (0, then 3 from row `constant_from`), the others varying."""
    return [(0 if i < constant_from else 3, 0.5 * i, 0.01, 20 + i % 7, i % 2, 512 * (i % 2), 1000 + i, i % 3,
             24, 0 if i < constant_from else 3, 0.0) for i in range(n)]


def test_flushed_columns_equal_the_rows_appended_value_for_value():
    rows = FLUSH_VALUES // WIDTH
    appended = _rows(3 * rows + 17, constant_from=rows + 5)   # a flush of constant columns, one where they change
    log = IterationLog()
    for row in appended:
        log.append(*row)
    columns = log.columns
    assert len(log) == len(appended)
    for i, (name, code) in enumerate(zip(ITERATION_COLUMNS, TYPECODES)):
        assert columns[name].typecode == code
        assert columns[name].tobytes() == array(code, [row[i] for row in appended]).tobytes(), name


def test_a_count_column_equal_to_its_first_value_but_not_one_object_is_still_constant():
    rows = FLUSH_VALUES // WIDTH
    big = 10 ** 6   # (ints past CPython's small-int cache: equal values, different objects)
    log = IterationLog()
    for i in range(rows):
        log.append(0, 0.0, 0.0, int(str(big)), 0, 0, big + i, 0, 0, 0, 0.0)
    assert list(log.columns["decode_seqs"]) == [big] * rows
    assert list(log.columns["kv_blocks_used"]) == [big + i for i in range(rows)]
