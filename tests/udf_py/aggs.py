"""Python aggregate functions for tests/integration/test_sql_udf_pyagg.py,
written as for PyFlink: AggregateFunction classes made functions by udaf()."""
from pyflink.table import DataTypes, Row
from pyflink.table.udf import AggregateFunction, udaf


class WeightedSum(AggregateFunction):
    """SUM(v * w) -- retract and merge."""

    def create_accumulator(self):
        return Row(0, 0)

    def accumulate(self, acc, v, w):
        if v is not None and w is not None:
            acc[0] += v * w
            acc[1] += 1

    def retract(self, acc, v, w):
        if v is not None and w is not None:
            acc[0] -= v * w
            acc[1] -= 1

    def merge(self, acc, others):
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


py_wsum = udaf(WeightedSum(), result_type=DataTypes.BIGINT(),
               input_types=[DataTypes.BIGINT(), DataTypes.BIGINT()],
               accumulator_type=DataTypes.ROW([DataTypes.FIELD("s", DataTypes.BIGINT()),
                                               DataTypes.FIELD("n", DataTypes.BIGINT())]))


class Top2(AggregateFunction):
    """The second largest value -- merge, no retract."""

    def create_accumulator(self):
        return []

    def accumulate(self, acc, v):
        if v is not None:
            acc.append(v)
            acc.sort()
            del acc[:-2]

    def merge(self, acc, others):
        for o in others:
            acc.extend(o)
        acc.sort()
        del acc[:-2]

    def get_value(self, acc):
        return acc[0] if len(acc) == 2 else None


py_top2 = udaf(Top2(), result_type='BIGINT', input_types=['BIGINT'])


class Span(AggregateFunction):
    """'min..max' of the values seen: a STRING result; merge."""

    def create_accumulator(self):
        return {"lo": None, "hi": None}

    def accumulate(self, acc, v):
        if v is None:
            return
        acc["lo"] = v if acc["lo"] is None else min(acc["lo"], v)
        acc["hi"] = v if acc["hi"] is None else max(acc["hi"], v)

    def merge(self, acc, others):
        for o in others:
            for v in (o["lo"], o["hi"]):
                self.accumulate(acc, v)

    def get_value(self, acc):
        return None if acc["lo"] is None else "%d..%d" % (acc["lo"], acc["hi"])


span = udaf(Span, result_type=DataTypes.STRING(), input_types=[DataTypes.BIGINT()])


@udaf(result_type=DataTypes.DOUBLE(), input_types=[DataTypes.DOUBLE()])
class Mean(AggregateFunction):
    """The average, a decorated class; retract."""

    def create_accumulator(self):
        return [0.0, 0]

    def accumulate(self, acc, v):
        acc[0] += v
        acc[1] += 1

    def retract(self, acc, v):
        acc[0] -= v
        acc[1] -= 1

    def get_value(self, acc):
        return acc[0] / acc[1] if acc[1] else None


class Fussy(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, acc, v):
        if v == 13:
            raise ValueError("thirteen is unlucky")
        acc[0] += v

    def get_value(self, acc):
        return acc[0]


fussy = udaf(Fussy(), result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])


class Hoard(AggregateFunction):
    """Keeps every value: its accumulator outgrows 64 bytes."""

    def create_accumulator(self):
        return []

    def accumulate(self, acc, v):
        acc.append(v)

    def get_value(self, acc):
        return len(acc)


hoard = udaf(Hoard(), result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()],
             accumulator_bytes=64)


@udaf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()], func_type="pandas")
def pandas_sum(v):
    return v.sum()


class NoValue(AggregateFunction):
    def create_accumulator(self):
        return []

    def accumulate(self, acc, v):
        pass


no_value = udaf(NoValue(), result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
