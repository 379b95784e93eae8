"""TIMESTAMP and DATE arguments and results of Python functions
(tests/integration/test_sql_udf_py.py): datetime.datetime and datetime.date,
as PyFlink passes them."""
import datetime as dt

from pyflink.table import DataTypes
from pyflink.table.udf import udf


@udf(result_type=DataTypes.TIMESTAMP(3), input_types=[DataTypes.TIMESTAMP(3), DataTypes.BIGINT()])
def plus_days(ts, n):
    return ts + dt.timedelta(days=n, milliseconds=n)


@udf(result_type=DataTypes.DATE(), input_types=[DataTypes.TIMESTAMP(3)])
def day_of(ts):
    return ts.date()


@udf(result_type=DataTypes.STRING(), input_types=[DataTypes.DATE()])
def iso(d):
    return "%s/%d" % (d.isoformat(), d.weekday())


@udf(result_type=DataTypes.TIMESTAMP_LTZ(3), input_types=[DataTypes.BIGINT()])
def aware(ms):
    """An aware datetime (UTC+05:30) is converted to UTC."""
    tz = dt.timezone(dt.timedelta(hours=5, minutes=30))
    return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc).astimezone(tz) + dt.timedelta(milliseconds=ms)


@udf(result_type=DataTypes.DATE(), input_types=[DataTypes.BIGINT()])
def not_a_date(x):
    return "2020-01-01"
