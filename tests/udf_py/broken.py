from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
def f(x:
    return x
