from pyflink.table import DataTypes
from pyflink.table.udf import udaf, udf, udtf


@udf(result_type=DataTypes.BIGINT())
def no_inputs(x):
    return x


@udtf(result_types=[DataTypes.BIGINT()])
def rows(x):
    yield x


@udf(result_type=DataTypes.TIMESTAMP(3), input_types=[DataTypes.BIGINT()])
def ts(x):
    return None


@udaf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def total(x):
    return x
