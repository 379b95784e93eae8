"""DECIMAL(p, s) Python functions for tests/integration/test_sql_udf_pydec.py,
written as for PyFlink: arguments arrive as decimal.Decimal of exactly s
fraction digits; results are rounded to the declared scale (HALF_EVEN) and
must fit the declared precision."""
from decimal import Decimal

from pyflink.table import DataTypes, Row
from pyflink.table.udf import AggregateFunction, udaf, udf, udtf


@udf(result_type=DataTypes.DECIMAL(12, 2),
     input_types=[DataTypes.DECIMAL(10, 2), DataTypes.DECIMAL(5, 4)])
def with_fee(amount, rate):
    """amount * (1 + rate): four or six fraction digits, rounded to 2 by the host."""
    if amount is None or rate is None:
        return None
    return amount * (1 + rate)


@udf(result_type='STRING', input_types=['DECIMAL(10, 2)'])
def shape(x):
    """What the function receives: its type, str() and exponent."""
    if x is None:
        return "None"
    return "%s:%s:%d" % (type(x).__name__, x, x.as_tuple().exponent)


@udf(result_type=DataTypes.DECIMAL(38, 18), input_types=[DataTypes.DECIMAL(38, 18)])
def flip(x):
    """-x, exactly (copy_negate does not round to the context's 28 digits)."""
    return None if x is None else x.copy_negate()


@udf(result_type=DataTypes.DECIMAL(5, 2), input_types=[DataTypes.DECIMAL(10, 2)])
def grow(x):
    """x * 1000: past DECIMAL(5, 2) from 100.00 on."""
    return None if x is None else x * 1000


@udf(result_type=DataTypes.DECIMAL(10, 2), input_types=[DataTypes.BIGINT()])
def as_float(x):
    """Returns a float where a DECIMAL was declared."""
    return x / 4


@udtf(result_types=[DataTypes.DECIMAL(10, 2), DataTypes.INT()],
      input_types=[DataTypes.DECIMAL(10, 2), DataTypes.INT()])
def split(amount, n):
    """amount in n parts of amount / n (to the cent, the last takes the rest)."""
    if amount is None or not n:
        return
    part = (amount / n).quantize(Decimal("0.01"))
    for i in range(n - 1):
        yield part, i
    yield amount - part * (n - 1), n - 1


class DecSum(AggregateFunction):
    """SUM of DECIMAL values and their count -- retract and merge."""

    def create_accumulator(self):
        return Row(Decimal(0), 0)

    def accumulate(self, acc, v):
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def retract(self, acc, v):
        if v is not None:
            acc[0] -= v
            acc[1] -= 1

    def merge(self, acc, others):
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


dsum = udaf(DecSum(), result_type=DataTypes.DECIMAL(20, 2), input_types=[DataTypes.DECIMAL(12, 2)])


class DecMean(AggregateFunction):
    """The mean of DECIMAL values, rounded by the host to 3 fraction digits."""

    def create_accumulator(self):
        return [Decimal(0), 0]

    def accumulate(self, acc, v):
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def merge(self, acc, others):
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):
        return acc[0] / acc[1] if acc[1] else None


dmean = udaf(DecMean(), result_type='DECIMAL(10, 3)', input_types=['DECIMAL(10, 2)'])
