from pyflink.table import DataTypes
from pyflink.table.udf import udaf, udf, udtf


@udf(result_type=DataTypes.BIGINT())
def no_inputs(x):
    return x


@udtf(result_types=[DataTypes.BIGINT()])
def rows(x):
    yield x


@udf(result_type=DataTypes.DECIMAL(40, 2), input_types=[DataTypes.BIGINT()])
def dec(x):
    return None


@udaf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def total(x):
    return x
