"""Python scalar functions for tests/integration/test_sql_udf_py.py, written
as for PyFlink (the TaskManager's host provides these imports)."""
from pyflink.table import DataTypes
from pyflink.table.udf import udf

OFFSET = 7  # module state: the module runs once per TaskManager


@udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def mix(x):
    return x * 31 + OFFSET


@udf(result_type='STRING', input_types=['STRING', 'BIGINT'])
def tag(s, n):
    return "%s#%d" % (s, n)


@udf(result_type=DataTypes.BIGINT(),
     input_types=[DataTypes.BIGINT()])  # called with None: PyFlink's functions are
def nvl_neg(x):
    return -1 if x is None else x


@udf(result_type=DataTypes.DOUBLE(), input_types=[DataTypes.DOUBLE()], deterministic=True)
def half(x):
    """Integers widen to DOUBLE (x is a float here)."""
    return x / 2


@udf(result_type=DataTypes.STRING(), input_types=[DataTypes.STRING()])
def shout(s):
    return s.upper() + "!" if s else None


@udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def boom(x):
    return 10 // (x - 13)


@udf(result_type=DataTypes.INT(), input_types=[DataTypes.BIGINT()])
def too_big(x):
    return x * 10 ** 10


@udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def wrong_type(x):
    return "a string"


def undecorated(x):
    return x
