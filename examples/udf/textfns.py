"""A Python scalar function for examples/udf/python.sql, written as for
PyFlink: the TaskManager's embedded interpreter runs it (docs/UDF.md)."""
from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.STRING(), input_types=[DataTypes.STRING()])
def vowels(s):
    """The vowels of s, in order (None stays None)."""
    return None if s is None else "".join(c for c in s if c in "aeiouAEIOU")
