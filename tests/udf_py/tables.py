"""Python table functions for tests/integration/test_sql_udf_py.py, as for PyFlink."""
from pyflink.table import DataTypes, Row
from pyflink.table.udf import udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()], input_types=[DataTypes.STRING()])
def split_words(line):
    for i, w in enumerate(line.split(" ")):
        if w:
            yield w, i + 1


@udtf(result_types=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def upto(n):
    """0 .. n % 4 - 1, as a list: any iterable will do."""
    return [Row(i) if i % 2 else i for i in range(n % 4)]


@udtf(result_types=[DataTypes.BIGINT(), DataTypes.BIGINT()], input_types=[DataTypes.BIGINT()])
def bad_width(n):
    yield n, n, n
