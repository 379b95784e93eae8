"""The streaming query examples of Flink's documentation (the pages under
docs/dev/table/sql/queries: SELECT, WITH, DISTINCT, windowing TVFs, window
aggregation, group windows, group aggregation, OVER, joins, window joins,
set operations, ORDER BY, Top-N, window Top-N, deduplication and window
deduplication) run verbatim through Flink 2.3 and through Sluice at
parallelism 1 and 2, and compared exactly as final multisets (the oracle
machinery of flink_oracle.py).

Each page's tables live in a database of their own (`CREATE DATABASE`,
`USE`), since the pages give the same table names (`Orders`) different
columns; each query runs after `USE` of its page's database, so its text
is the page's. Only the tables' connectors differ from the pages: every
table is a `filesystem` json source over seeded rows written here (times
ascending per table, so no row is late and any interleaving of two inputs
gives one result), and where a page shows no DDL the columns are those its
queries name.

Outcomes, each asserted:
- both engines answer: the results must be equal (no expected differences);
- Flink refuses (a page's example that does not parse or plan in Flink
  2.3, FLINK_REFUSES with a part of Flink's message and of Sluice's):
  Sluice must refuse too, unless listed in SLUICE_ANSWERS;
- Sluice refuses what Flink answers: SLUICE_REFUSES, each with a part of
  Sluice's message and the reason; docs/SQL.md ("Flink's documentation
  examples") lists the same entries.
NOT_RUN names the examples that need what no test here can provide (a
JDBC database, a user-defined function that the page does not define).

Release build only (Flink's JVM), xdist group of its own.
"""
import datetime
import decimal
import os
import random
import time

import pytest

import flink_oracle as fo
from conftest import Cluster

pytestmark = [pytest.mark.release_only, pytest.mark.xdist_group("flink_docs")]

SEED = 30
PARALLELISMS = (1, 2)
SETTINGS = {"pipeline.auto-watermark-interval": "0 ms"}


def ts(d):
    return d.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def money(rng, lo=100, hi=99999):
    return str(decimal.Decimal(rng.randrange(lo, hi)) / 100)


# ------------------------------------------------------------------ inputs

def rows_over(rng):
    """over-agg's Orders: products ordered over 12 hours, some at the same
    time (RANGE peers)."""
    t, out = datetime.datetime(2026, 3, 1, 8, 0), []
    for i in range(1, 91):
        if i % 7:
            t += datetime.timedelta(minutes=rng.randrange(1, 20))
        out.append({"order_id": i, "product": rng.choice(["apple", "pear", "plum", "fig"]),
                    "amount": rng.randrange(1, 100), "order_time": ts(t)})
    return out


def rows_bid(rng):
    """window pages' Bid: distinct times and prices over three hours."""
    t, out, prices = datetime.datetime(2020, 4, 15, 8, 0, 0), [], set()
    for _ in range(140):
        t += datetime.timedelta(seconds=rng.randrange(5, 140))
        p = money(rng)
        while p in prices:
            p = money(rng)
        prices.add(p)
        out.append({"bidtime": ts(t), "price": p, "item": rng.choice("ABCDEFGH"),
                    "supplier_id": f"supplier{rng.randrange(1, 6)}"})
    return out


def rows_gw(rng):
    """window-agg's group-window Orders: five days."""
    t, out = datetime.datetime(2026, 3, 1), []
    for _ in range(80):
        t += datetime.timedelta(minutes=rng.randrange(10, 180))
        out.append({"user": rng.randrange(1, 5), "product": rng.choice("xyz"),
                    "amount": rng.randrange(1, 50), "order_time": ts(t)})
    return out


def rows_shop(rng):
    sales = rng.sample(range(1, 100000), 60)
    return [{"product_id": f"p{i}", "category": f"c{rng.randrange(1, 5)}",
             "product_name": f"name{i}", "sales": s} for i, s in enumerate(sales, 1)]


def rows_joins(rng):
    """joins' Orders (regular, interval and UNNEST examples), Product and
    Shipments."""
    t, orders, ships = datetime.datetime(2026, 3, 1), [], []
    for i in range(1, 61):
        t += datetime.timedelta(minutes=rng.randrange(5, 90))
        pid = rng.randrange(1, 9)
        orders.append({"order_id": i, "id": i, "productId": pid, "product_id": pid,
                       "tags": rng.sample(["red", "big", "new", "old"], rng.randrange(0, 3)),
                       "order_time": ts(t)})
        if rng.random() < 0.7:
            ships.append((t + datetime.timedelta(minutes=rng.randrange(0, 360)), i))
    ships.sort()
    products = [{"id": i, "name": f"product{i}"} for i in range(1, 7)]
    return (orders, products,
            [{"order_id": i, "ship_time": ts(s)} for s, i in ships])


def rows_temporal(rng):
    t, orders, rates = datetime.datetime(2026, 3, 1, 12), [], []
    for i in range(1, 31):
        t += datetime.timedelta(minutes=rng.randrange(1, 10))
        orders.append({"order_id": f"o_{i:03d}", "price": money(rng),
                       "currency": rng.choice(["EUR", "USD", "YEN"]), "order_time": ts(t)})
    r = datetime.datetime(2026, 3, 1, 11, 50)
    for _ in range(20):
        r += datetime.timedelta(minutes=rng.randrange(1, 15))
        rates.append({"currency": rng.choice(["EUR", "USD", "YEN"]),
                      "conversion_rate": money(rng, 50, 200), "update_time": ts(r)})
    latest = [{"currency": c, "rate": n} for c, n in (("US Dollar", 102), ("Euro", 114),
                                                      ("Yen", 1))]
    porders = [{"amount": rng.randrange(1, 5), "currency": rng.choice(["Euro", "US Dollar"])}
               for _ in range(10)]
    return orders, rates, latest, porders


def rows_wjoin(rng, side):
    t, out = datetime.datetime(2020, 4, 15, 12, 0), []
    for i in range(1, 41):
        t += datetime.timedelta(seconds=rng.randrange(20, 120))
        out.append({"row_time": ts(t), "num": rng.randrange(1, 12), "id": f"{side}{i}"})
    return out


def rows_setops(rng):
    orders = [{"user": f"u{rng.randrange(1, 5)}", "amount": rng.randrange(1, 100),
               "product": rng.choice(["p1", "p2", "p3", "p4", "p5"])} for _ in range(40)]
    return orders, [{"product": p} for p in ("p2", "p4", "p9")]


def rows_gagg(rng):
    return [{"order_id": rng.randrange(1, 15), "users": rng.choice(["ann", "bob", "cy"]),
             "amount": rng.randrange(1, 40)} for _ in range(50)]


def rows_sel(rng):
    t, out = datetime.datetime(2026, 3, 1), []
    for i in range(1, 41):
        if i % 5:
            t += datetime.timedelta(seconds=rng.randrange(1, 30))
        out.append({"order_id": rng.randrange(1, 20), "id": rng.randrange(1, 15),
                    "price": money(rng), "tax": money(rng, 0, 500), "order_time": ts(t)})
    return out


def write_inputs(d):
    """The input files and the DDL (every page's database and tables)."""
    import json
    rng = random.Random(SEED)
    j_orders, j_products, j_ships = rows_joins(rng)
    t_orders, t_rates, t_latest, t_porders = rows_temporal(rng)
    s_orders, s_new = rows_setops(rng)
    files = {"over_orders": rows_over(rng), "bid": rows_bid(rng), "gw_orders": rows_gw(rng),
             "shop": rows_shop(rng), "j_orders": j_orders, "j_products": j_products,
             "j_ships": j_ships, "t_orders": t_orders, "t_rates": t_rates,
             "t_latest": t_latest, "t_porders": t_porders,
             "w_left": rows_wjoin(rng, "L"), "w_right": rows_wjoin(rng, "R"),
             "s_orders": s_orders, "s_new": s_new, "g_orders": rows_gagg(rng),
             "sel_orders": rows_sel(rng), "dd_orders": rows_gw(rng)}
    for name, rows in files.items():
        with open(os.path.join(d, name + ".jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")

    def table(name, cols, path, prefix="CREATE TABLE"):
        return (f"{prefix} {name} ({cols}) WITH ('connector' = 'filesystem', "
                f"'path' = '{os.path.join(d, path + '.jsonl')}', 'format' = 'json')")

    ddl = []
    for db, stmts in PAGES(table):
        ddl.append(f"CREATE DATABASE {db}")
        ddl.append(f"USE {db}")
        ddl.extend(stmts)
    ddl.append("USE default_database")
    return ddl, files


def PAGES(table):
    """[(database, [DDL])] of every page: the pages' own DDL where they
    give one, with the connector options replaced."""
    wm1s = "WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND"
    return [
        ("over_agg", [table("Orders", "order_id BIGINT, product STRING, amount INT, "
                            "order_time TIMESTAMP(3), "
                            "WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND",
                            "over_orders")]),
        ("win", [table("Bid", "bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, "
                       f"supplier_id STRING, {wm1s}", "bid"),
                 # window-agg's cascading example: its view, verbatim
                 "CREATE VIEW window1 AS\n"
                 "SELECT window_start, window_end, window_time as rowtime, "
                 "SUM(price) as partial_price\n"
                 "  FROM TABLE(\n"
                 "    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))\n"
                 "  GROUP BY supplier_id, window_start, window_end, window_time"]),
        ("gw", [table("Orders", "`user` BIGINT, product STRING, amount INT, "
                      "order_time TIMESTAMP(3), "
                      "WATERMARK FOR order_time AS order_time - INTERVAL '1' MINUTE",
                      "gw_orders")]),
        ("topn", [table("ShopSales", "product_id STRING, category STRING, "
                        "product_name STRING, sales BIGINT", "shop")]),
        ("dedup", [table("Orders", "order_time STRING, `user` STRING, product STRING, "
                         "num BIGINT, proctime AS PROCTIME()", "dd_orders")]),
        ("joins", [table("Orders", "order_id BIGINT, id BIGINT, productId INT, "
                         "product_id INT, tags ARRAY<STRING>, order_time TIMESTAMP(3), "
                         "WATERMARK FOR order_time AS order_time - INTERVAL '1' SECOND",
                         "j_orders"),
                   table("Product", "id INT, name STRING", "j_products"),
                   # (the page gives no watermarks: 1 s behind, so that two shipments
                   # of one minute never meet a watermark at their own time, where
                   # the engines' boundaries differ by a millisecond)
                   table("Shipments", "order_id BIGINT, ship_time TIMESTAMP(3), "
                         "WATERMARK FOR ship_time AS ship_time - INTERVAL '1' SECOND",
                         "j_ships")]),
        ("temporal", [table("orders", "order_id STRING, price DECIMAL(32,2), "
                            "currency STRING, order_time TIMESTAMP(3), "
                            "WATERMARK FOR order_time AS order_time", "t_orders"),
                      table("currency_rates", "currency STRING, "
                            "conversion_rate DECIMAL(32, 2), update_time TIMESTAMP(3), "
                            "WATERMARK FOR update_time AS update_time, "
                            "PRIMARY KEY(currency) NOT ENFORCED", "t_rates")]),
        # Sluice's names are case-insensitive: the page's `Orders` beside its
        # `orders` goes into a database of its own
        ("temporal_proc", [table("LatestRates", "currency STRING, rate INT", "t_latest"),
                      table("Orders", "amount INT, currency STRING, "
                            "proctime AS PROCTIME()", "t_porders")]),
        ("wjoin", [table(name, "row_time TIMESTAMP(3), num INT, id STRING, "
                         "WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND", path)
                   for name, path in (("LeftTable", "w_left"), ("RightTable", "w_right"))]),
        ("setops", ["create view t1(s) as values ('c'), ('a'), ('b'), ('b'), ('c')",
                    "create view t2(s) as values ('d'), ('e'), ('a'), ('b'), ('b')",
                    table("Orders", "`user` STRING, amount INT, product STRING", "s_orders"),
                    table("NewProducts", "product STRING", "s_new")]),
        ("gagg", [table("Orders", "order_id BIGINT, users STRING, amount INT", "g_orders")]),
        ("sel", [table("Orders", "order_id BIGINT, id BIGINT, price DECIMAL(10, 2), "
                       "tax DECIMAL(10, 2), order_time TIMESTAMP(3), "
                       "WATERMARK FOR order_time AS order_time", "sel_orders")]),
    ]


# ------------------------------------------------------------------ queries
# (page database, name, the page's query as the page gives it)

TUMBLE10 = "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)"
L5 = "SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))"
R5 = "SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))"
VALUES4 = """FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)"""

EXAMPLES = [
    # select.md
    ("sel", "select_star", "SELECT * FROM Orders"),
    ("sel", "select_expr", "SELECT order_id, price + tax FROM Orders"),
    ("sel", "select_values",
     "SELECT order_id, price FROM (VALUES (1, 2.0), (2, 3.1))  AS t (order_id, price)"),
    ("sel", "select_where", "SELECT price + tax FROM Orders WHERE id = 10"),
    ("sel", "select_udf", "SELECT PRETTY_PRINT(order_id) FROM Orders"),
    # with.md
    ("sel", "with_cte", """WITH orders_with_total AS (
    SELECT order_id, price + tax AS total
    FROM Orders
)
SELECT order_id, SUM(total)
FROM orders_with_total
GROUP BY order_id"""),
    # select-distinct.md
    ("sel", "select_distinct", "SELECT DISTINCT id FROM Orders"),
    # orderby.md
    ("sel", "order_by_time", "SELECT *\nFROM Orders\nORDER BY order_time, order_id"),
    # window-tvf.md
    ("win", "tvf_tumble", f"SELECT * FROM TABLE(\n   {TUMBLE10})"),
    ("win", "tvf_tumble_named", """SELECT * FROM TABLE(
   TUMBLE(
     DATA => TABLE Bid,
     TIMECOL => DESCRIPTOR(bidtime),
     SIZE => INTERVAL '10' MINUTES))"""),
    ("win", "tvf_tumble_agg", f"""SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    {TUMBLE10})
  GROUP BY window_start, window_end"""),
    ("win", "tvf_hop", """SELECT * FROM TABLE(
    HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))"""),
    ("win", "tvf_hop_named", """SELECT * FROM TABLE(
    HOP(
      DATA => TABLE Bid,
      TIMECOL => DESCRIPTOR(bidtime),
      SLIDE => INTERVAL '5' MINUTES,
      SIZE => INTERVAL '10' MINUTES))"""),
    ("win", "tvf_hop_agg", """SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end"""),
    ("win", "tvf_cumulate", """SELECT * FROM TABLE(
    CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))"""),
    ("win", "tvf_cumulate_named", """SELECT * FROM TABLE(
    CUMULATE(
      DATA => TABLE Bid,
      TIMECOL => DESCRIPTOR(bidtime),
      STEP => INTERVAL '2' MINUTES,
      SIZE => INTERVAL '10' MINUTES))"""),
    ("win", "tvf_cumulate_agg", """SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end"""),
    ("win", "tvf_tumble_offset", """SELECT * FROM TABLE(
   TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))"""),
    ("win", "tvf_tumble_offset_named", """SELECT * FROM TABLE(
   TUMBLE(
     DATA => TABLE Bid,
     TIMECOL => DESCRIPTOR(bidtime),
     SIZE => INTERVAL '10' MINUTES,
     OFFSET => INTERVAL '1' MINUTES))"""),
    ("win", "tvf_tumble_offset_agg", """SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))
  GROUP BY window_start, window_end"""),
    # window-agg.md
    ("win", "winagg_grouping_sets", f"""SELECT window_start, window_end, supplier_id, SUM(price) as price
  FROM TABLE(
    {TUMBLE10})
  GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ())"""),
    ("win", "winagg_rollup", f"""SELECT window_start, window_end, supplier_id, SUM(price) as price
FROM TABLE(
    {TUMBLE10})
GROUP BY window_start, window_end, ROLLUP (supplier_id)"""),
    ("win", "winagg_cube", f"""SELECT window_start, window_end, item, supplier_id, SUM(price) as price
  FROM TABLE(
    {TUMBLE10})
  GROUP BY window_start, window_end, CUBE (supplier_id, item)"""),
    ("win", "winagg_cube_as_sets", f"""SELECT window_start, window_end, item, supplier_id, SUM(price) as price
  FROM TABLE(
    {TUMBLE10})
  GROUP BY window_start, window_end, GROUPING SETS (
      (supplier_id, item),
      (supplier_id      ),
      (             item),
      (                 )
)"""),
    ("win", "winagg_cascade", """SELECT window_start, window_end, SUM(partial_price) as total_price
  FROM TABLE(
      TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end"""),
    ("gw", "group_window_tumble", """SELECT
  user,
  TUMBLE_START(order_time, INTERVAL '1' DAY) AS wStart,
  SUM(amount) FROM Orders
GROUP BY
  TUMBLE(order_time, INTERVAL '1' DAY),
  user"""),
    # window-topn.md
    ("win", "window_topn_agg", """SELECT *
  FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) as rownum
    FROM (
      SELECT window_start, window_end, supplier_id, SUM(price) as price, COUNT(*) as cnt
      FROM TABLE(
        TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
      GROUP BY window_start, window_end, supplier_id
    )
  ) WHERE rownum <= 3"""),
    ("win", "window_topn_tvf", """SELECT *
  FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) as rownum
    FROM TABLE(
               TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  ) WHERE rownum <= 3"""),
    # window-deduplication.md
    ("win", "window_dedup", """SELECT *
  FROM (
    SELECT bidtime, price, item, supplier_id, window_start, window_end, 
      ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY bidtime DESC) as rownum
    FROM TABLE(
               TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  ) WHERE rownum <= 1"""),
    # over-agg.md
    ("over_agg", "over_range", """SELECT order_id, order_time, amount,
  SUM(amount) OVER (
    PARTITION BY product
    ORDER BY order_time
    RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW
  ) AS one_hour_prod_amount_sum
FROM Orders"""),
    ("over_agg", "over_window_clause", """SELECT order_id, order_time, amount,
  SUM(amount) OVER w AS sum_amount,
  AVG(amount) OVER w AS avg_amount
FROM Orders
WINDOW w AS (
  PARTITION BY product
  ORDER BY order_time
  RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)"""),
    # group-agg.md
    ("gagg", "gagg_count", "SELECT COUNT(*) FROM Orders"),
    ("gagg", "gagg_group_by", "SELECT COUNT(*)\nFROM Orders\nGROUP BY order_id"),
    ("gagg", "gagg_count_distinct", "SELECT COUNT(DISTINCT order_id) FROM Orders"),
    ("gagg", "gagg_grouping_sets", f"""SELECT supplier_id, rating, COUNT(*) AS total
{VALUES4}
GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ())"""),
    ("gagg", "gagg_rollup", f"""SELECT supplier_id, rating, COUNT(*)
{VALUES4}
GROUP BY ROLLUP (supplier_id, rating)"""),
    ("gagg", "gagg_cube", f"""SELECT supplier_id, rating, product_id, COUNT(*)
{VALUES4}
GROUP BY CUBE (supplier_id, rating, product_id)"""),
    ("gagg", "gagg_grouping_set_typo", f"""SELECT supplier_id, rating, product_id, COUNT(*)
{VALUES4}
GROUP BY GROUPING SET (
    ( supplier_id, product_id, rating ),
    ( supplier_id, product_id         ),
    ( supplier_id,             rating ),
    ( supplier_id                     ),
    (              product_id, rating ),
    (              product_id         ),
    (                          rating ),
    (                                 )
)"""),
    ("gagg", "gagg_having", "SELECT SUM(amount)\nFROM Orders\nGROUP BY users\nHAVING SUM(amount) > 50"),
    # joins.md
    ("joins", "join_inner_camel", "SELECT * FROM Orders\nINNER JOIN Product\nON Orders.productId = Product.id"),
    ("joins", "join_inner", "SELECT *\nFROM Orders\nINNER JOIN Product\nON Orders.product_id = Product.id"),
    ("joins", "join_left", "SELECT *\nFROM Orders\nLEFT JOIN Product\nON Orders.product_id = Product.id"),
    ("joins", "join_right", "SELECT *\nFROM Orders\nRIGHT JOIN Product\nON Orders.product_id = Product.id"),
    ("joins", "join_full", "SELECT *\nFROM Orders\nFULL OUTER JOIN Product\nON Orders.product_id = Product.id"),
    ("joins", "join_interval", """SELECT *
FROM Orders o, Shipments s
WHERE o.id = s.order_id
AND o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time"""),
    ("joins", "join_unnest", "SELECT order_id, tag\nFROM Orders CROSS JOIN UNNEST(tags) AS t (tag)"),
    ("temporal", "join_temporal_event", """SELECT 
     order_id,
     price,
     currency,
     conversion_rate,
     order_time,
FROM orders
LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time
ON orders.currency = currency_rates.currency"""),
    ("temporal_proc", "join_temporal_proc", """SELECT
  o.amount, o.currency, r.rate, o.amount * r.rate
FROM
  Orders AS o
  JOIN LatestRates FOR SYSTEM_TIME AS OF o.proctime AS r
  ON r.currency = o.currency"""),
    # window-join.md
    ("wjoin", "wjoin_full", f"""SELECT L.num as L_Num, L.id as L_Id, R.num as R_Num, R.id as R_Id, L.window_start, L.window_end
           FROM (
               {L5}
           ) L
           FULL JOIN (
               {R5}
           ) R
           ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end"""),
    ("wjoin", "wjoin_semi_in", f"""SELECT *
           FROM (
               {L5}
           ) L WHERE L.num IN (
             SELECT num FROM (   
               {R5}
             ) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"""),
    ("wjoin", "wjoin_semi_exists", f"""SELECT *
           FROM (
               {L5}
           ) L WHERE EXISTS (
             SELECT * FROM (
               {R5}
             ) R WHERE L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end)"""),
    ("wjoin", "wjoin_anti_not_in", f"""SELECT *
           FROM (
               {L5}
           ) L WHERE L.num NOT IN (
             SELECT num FROM (   
               {R5}
             ) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"""),
    ("wjoin", "wjoin_anti_not_exists", f"""SELECT *
           FROM (
               {L5}
           ) L WHERE NOT EXISTS (
             SELECT * FROM (
               {R5}
             ) R WHERE L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end)"""),
    # set-ops.md
    ("setops", "union", "(SELECT s FROM t1) UNION (SELECT s FROM t2)"),
    ("setops", "union_all", "(SELECT s FROM t1) UNION ALL (SELECT s FROM t2)"),
    ("setops", "intersect", "(SELECT s FROM t1) INTERSECT (SELECT s FROM t2)"),
    ("setops", "intersect_all", "(SELECT s FROM t1) INTERSECT ALL (SELECT s FROM t2)"),
    ("setops", "except", "(SELECT s FROM t1) EXCEPT (SELECT s FROM t2)"),
    ("setops", "except_all", "(SELECT s FROM t1) EXCEPT ALL (SELECT s FROM t2)"),
    ("setops", "in_subquery", """SELECT user, amount
FROM Orders
WHERE product IN (
    SELECT product FROM NewProducts
)"""),
    ("setops", "exists_page_form", """SELECT user, amount
FROM Orders
WHERE product EXISTS (
    SELECT product FROM NewProducts
)"""),
    # topn.md
    ("topn", "topn", """SELECT *
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num
  FROM ShopSales)
WHERE row_num <= 5"""),
    ("topn", "topn_no_rownum", """SELECT product_id, category, product_name, sales
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY sales DESC) AS row_num
  FROM ShopSales)
WHERE row_num <= 5"""),
    # deduplication.md
    ("dedup", "dedup_proctime", """SELECT order_id, user, product, num
FROM (
  SELECT *,
    ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY proctime ASC) AS row_num
  FROM Orders)
WHERE row_num = 1"""),
]

# Examples of the pages that Flink 2.3 itself refuses as written: name ->
# (a part of Flink's message, a part of Sluice's). Sluice refuses each too.
FLINK_REFUSES = {
    "select_udf": ("No match found for function signature PRETTY_PRINT",
                   "unknown function 'PRETTY_PRINT'"),
    # OFFSET is a reserved word: the named argument needs back quotes
    "tvf_tumble_offset_named": ("Incorrect syntax near the keyword 'OFFSET'",
                                "unexpected 'OFFSET'"),
    # the view already has window_start and window_end, and the TVF adds them again
    "winagg_cascade": ("Column 'window_start' is ambiguous", "Column 'window_start' is ambiguous"),
    "gagg_grouping_set_typo": ("Incorrect syntax near the keyword 'GROUPING'",
                               "unexpected 'SET', expected SETS or '('"),
    # a comma after the last SELECT item
    "join_temporal_event": ("Incorrect syntax near the keyword 'FROM'",
                            "unexpected 'FROM', expected an expression"),
    "exists_page_form": ('Encountered "EXISTS"', "unexpected 'EXISTS'"),
    # the page's Orders has no order_id
    "dedup_proctime": ("Column 'order_id' not found in any table",
                       "PARTITION BY: a column of the query's output is expected"),
}

# Examples Flink refuses and Sluice answers: name -> why (docs/SQL.md lists
# them): asserted answered.
SLUICE_ANSWERS = {
    # Flink reads LatestRates (a filesystem table) as a versioned table and
    # wants its primary key; Sluice looks a filesystem table up
    "join_temporal_proc": "Temporal Table Join requires primary key in versioned table",
}

# Examples Flink answers and Sluice refuses: name -> (a part of Sluice's
# message, why). docs/SQL.md lists the same.
SLUICE_REFUSES = {}

# Examples not run, with the reason (they need what no test here provides).
NOT_RUN = {
    "lookup_join_jdbc": "joins.md's lookup join reads a MySQL database through the JDBC "
                        "connector",
    "lateral_table_func": "joins.md's LATERAL TABLE(table_func(...)) examples call a "
                          "user-defined function the page does not define",
}

SPECS = [{"name": name, "sql": sql, "ddl": [f"USE {db}"]} for db, name, sql in EXAMPLES]
# the sink of an example Flink refuses and Sluice answers: its columns
SLUICE_ANSWERS_COLS = {"join_temporal_proc": [["amount", "INT"], ["currency", "STRING"],
                                              ["rate", "INT"], ["EXPR$3", "INT"]]}


# ------------------------------------------------------------------ running

class Run:
    """Everything the per-query tests assert on, computed once."""


def run_sluice_all(cluster, ddl, d, parallelism, limit=6):
    """Each example as its own job (at most `limit` at a time); {name:
    outcome}: ("refused", text), ("failed", text) or ("done", out_dir). An
    example Flink refused is submitted with a sink of one STRING column, so
    that Sluice's own refusal is what the test sees."""
    pending = list(SPECS)
    running, outcome = {}, {}
    while pending or running:
        while pending and len(running) < limit:
            s = pending.pop(0)
            out = os.path.join(d, f"out-{s['name']}-p{parallelism}")
            path = os.path.join(d, f"{s['name']}-p{parallelism}.sql")
            cols = s.get("cols") or SLUICE_ANSWERS_COLS.get(s["name"]) or [["x", "STRING"]]
            with open(path, "w") as f:
                f.write(fo.sluice_script(ddl, s, cols, out, parallelism, SETTINGS))
            r = cluster.cli("sql", "-f", path, timeout=120)
            jobs = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("Job ID: ")]
            if r.returncode != 0 or not jobs:
                text = r.stdout + r.stderr
                err = text[text.find("[ERROR]"):] if "[ERROR]" in text else text[-600:]
                outcome[s["name"]] = ("refused", err.strip())
            else:
                running[s["name"]] = (jobs[-1], out)
        for name, (jid, out) in list(running.items()):
            state = cluster.job(jid)["state"]
            if state in ("FINISHED", "FAILED", "CANCELED"):
                del running[name]
                if state == "FINISHED":
                    outcome[name] = ("done", out)
                else:
                    exc = cluster.get(f"/jobs/{jid}/exceptions")
                    outcome[name] = ("failed", str(exc.get("root-exception", exc))[:600])
        if running:
            time.sleep(0.1)
    return outcome


@pytest.fixture(scope="module")
def docs_run(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("flink-docs"))
    run = Run()
    run.ddl, run.files = write_inputs(d)
    run.flink = fo.run_flink(run.ddl, SPECS, d)
    for s in SPECS:
        f = run.flink[s["name"]]
        if f["ok"]:
            s["cols"] = f["cols"]
    cluster = Cluster(d)
    try:
        cluster.add_tm(slots=8)
        cluster.add_tm(slots=8)
        run.sluice = {p: run_sluice_all(cluster, run.ddl, d, p) for p in PARALLELISMS}
    finally:
        problems = cluster.shutdown()
    assert not problems, "\n".join(problems)
    return run


def test_lists_name_real_examples():
    names = [s["name"] for s in SPECS]
    assert len(names) == len(set(names)), "example names repeat"
    listed = list(FLINK_REFUSES) + list(SLUICE_REFUSES) + list(SLUICE_ANSWERS)
    assert len(listed) == len(set(listed)), "an example is listed twice"
    for name in listed:
        assert name in names, f"{name} is listed but no example has that name"
    assert not set(NOT_RUN) & set(names)


def test_docs_sql_lists_the_refusals():
    """docs/SQL.md names every example Sluice refuses and every one not run."""
    with open(os.path.join(fo.ROOT, "docs", "SQL.md")) as f:
        text = f.read()
    section = text[text.index("### Flink's documentation examples"):]
    for name in list(SLUICE_REFUSES) + list(FLINK_REFUSES) + list(SLUICE_ANSWERS) + list(NOT_RUN):
        assert f"`{name}`" in section, f"docs/SQL.md does not list {name}"


@pytest.mark.parametrize("name", [s["name"] for s in SPECS])
def test_flink_answers_or_refuses_as_listed(docs_run, name):
    f = docs_run.flink[name]
    refused = FLINK_REFUSES.get(name, (SLUICE_ANSWERS.get(name),))[0]
    if refused:
        assert not f["ok"], f"{name} is listed as refused by Flink, but Flink answered it"
        assert refused in f["error"], f["error"]
    else:
        assert f["ok"], f"Flink refused {name}:\n{f['error']}"
        assert f["rows"], f"Flink's result of {name} is empty: the example tests nothing"


@pytest.mark.parametrize("parallelism", PARALLELISMS)
@pytest.mark.parametrize("name", [s["name"] for s in SPECS])
def test_sluice_matches_flink(docs_run, name, parallelism):
    kind, detail = docs_run.sluice[parallelism][name]
    if name in FLINK_REFUSES or name in SLUICE_REFUSES:
        want = FLINK_REFUSES[name][1] if name in FLINK_REFUSES else SLUICE_REFUSES[name][0]
        assert kind == "refused", f"{name}: Sluice answers an example listed as refused"
        assert want in detail, detail
        return
    if name in SLUICE_ANSWERS:
        assert kind == "done", f"Sluice {kind}: {detail}"
        return
    f = docs_run.flink[name]
    cols = f["cols"]
    want, wprob = fo.final_multiset([(k, v) for k, v in f["rows"]], cols)
    assert not wprob, f"Flink's own changelog does not apply: {wprob[:5]}"
    assert kind == "done", f"Sluice {kind}: {detail}"
    got, gprob = fo.final_multiset(fo.sluice_changes(detail, cols), cols)
    assert not gprob, "Sluice's changelog does not apply: " + "; ".join(gprob[:5])
    assert got == want, (f"{sum(want.values())} rows from Flink, {sum(got.values())} from "
                         "Sluice\n" + fo.describe_diff(want, got))
