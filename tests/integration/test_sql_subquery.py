"""Multi-way joins, subqueries in WHERE and in the SELECT list, and FROM a, b
WHERE ... from SQL text through `sluice sql -f` on a running cluster, at
parallelism 1 and 2. Inputs are seeded JSON-lines files (with NULLs in the
keys and values, so IN / NOT IN / EXISTS meet SQL's NULL rules); each expected
result is computed here in Python by brute force over the same rows, and
compared with the final multiset of the sink's changelog."""
import collections
import datetime
import json
import os
import random

import pytest

import flink_oracle as fo
from conftest import wait_for
from test_checkpoints import committed_files
from test_sql import finish, job_ids, run_sql

SEED = 30


def data():
    rng = random.Random(SEED)
    # orders: id, cust, prod, amount (cust / prod / amount sometimes NULL)
    orders = [{"id": i, "cust": None if i % 17 == 0 else rng.randrange(0, 12),
               "prod": None if i % 19 == 0 else rng.randrange(0, 9),
               "amount": None if i % 23 == 0 else rng.randrange(1, 300)}
              for i in range(1, 241)]
    custs = [{"cust": c, "region": rng.choice(["north", "south", "east"])}
             for c in range(0, 10)]  # customers 10 and 11 have no row
    prods = [{"prod": p, "pname": f"p{p}", "price": rng.randrange(1, 50)}
             for p in range(1, 9)]   # product 0 has no row
    # blocked customers: a NULL among them in one file, none in the other
    blocked = [{"cust": c, "why": "fraud"} for c in (3, 7, 11)]
    blocked_null = blocked + [{"cust": None, "why": "unknown"}]
    return {"orders": orders, "custs": custs, "prods": prods, "blocked": blocked,
            "blocked_null": blocked_null, "nobody": []}


COLS = {"orders": "id BIGINT, cust INT, prod INT, amount INT",
        "custs": "cust INT, region STRING",
        "prods": "prod INT, pname STRING, price INT",
        "blocked": "cust INT, why STRING",
        "blocked_null": "cust INT, why STRING",
        "nobody": "cust INT, why STRING"}


def ddl(d, files):
    out = []
    for name, rows in files.items():
        path = os.path.join(d, name + ".jsonl")
        with open(path, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        out.append(f"CREATE TABLE {name} ({COLS[name]}) WITH ('connector' = 'filesystem', "
                   f"'path' = '{path}', 'format' = 'json');")
    return "\n".join(out) + "\n"


def eq(a, b):
    return a is not None and b is not None and a == b


def in3(x, vals):
    """SQL's x IN (vals): TRUE, FALSE or NULL (None)."""
    if any(eq(x, v) for v in vals):
        return True
    if not vals:
        return False
    if x is None or None in vals:
        return None
    return False


def group_sums(rows, key):
    """SUM(amount) per key(row), as SQL's: NULL for a group of NULL amounts only."""
    tot = {}
    for r in rows:
        g = key(r)
        tot.setdefault(g, None)
        if r["amount"] is not None:
            tot[g] = (tot[g] or 0) + r["amount"]
    return tot


def model(name, f):
    """The expected multiset of query `name` over the rows f."""
    o, c, p = f["orders"], f["custs"], f["prods"]
    out = collections.Counter()
    if name == "star":  # orders JOIN custs JOIN prods
        for r in o:
            for cc in c:
                if eq(r["cust"], cc["cust"]):
                    for pp in p:
                        if eq(r["prod"], pp["prod"]):
                            out[(r["id"], cc["region"], pp["pname"])] += 1
    elif name == "star_left":  # orders LEFT JOIN custs LEFT JOIN prods ON prod and region
        for r in o:
            cs = [cc for cc in c if eq(r["cust"], cc["cust"])] or [None]
            for cc in cs:
                ps = [pp for pp in p if eq(r["prod"], pp["prod"]) and cc is not None
                      and cc["region"] != "east"] or [None]
                for pp in ps:
                    out[(r["id"], cc and cc["region"], pp and pp["pname"])] += 1
    elif name == "comma":
        for r in o:
            for cc in c:
                for pp in p:
                    if eq(r["cust"], cc["cust"]) and eq(r["prod"], pp["prod"]) and \
                            r["amount"] is not None and r["amount"] > pp["price"] * 3:
                        out[(r["id"], cc["region"], pp["price"])] += 1
    elif name == "view_join":
        for r in o:
            for cc in c:
                if eq(r["cust"], cc["cust"]) and cc["region"] == "north":
                    for pp in p:
                        if eq(r["prod"], pp["prod"]):
                            out[(r["id"], pp["pname"])] += 1
    elif name.startswith(("in_sub", "not_in_", "exists", "not_exists")) and \
            name not in ("exists_corr_filter", "exists_select", "exists_noneq",
                         "not_exists_noneq"):
        sub = f["blocked_null"] if name.endswith("_null") else \
            f["nobody"] if name.endswith("_empty") else f["blocked"]
        vals = [b["cust"] for b in sub]
        for r in o:
            x = r["cust"]
            if name.startswith("in_"):
                keep = any(eq(x, v) for v in vals)
            elif name.startswith("not_in_"):
                # SQL: TRUE only when no value equals x and none is unknown
                keep = not vals or (x is not None and None not in vals and x not in vals)
            elif name.startswith("exists"):
                keep = any(eq(x, v) for v in vals)
            else:
                keep = not any(eq(x, v) for v in vals)
            if keep:
                out[(r["id"], x)] += 1
    elif name == "dq_exists_distinct":  # DISTINCT in a correlated EXISTS changes nothing
        for r in o:
            if any(eq(r["cust"], cc["cust"]) and cc["region"] != "east" for cc in c):
                out[(r["id"],)] += 1
    elif name == "dq_exists_outer_item":  # EXISTS reads no item, outer columns there too
        for r in o:
            if any(eq(r["cust"], cc["cust"]) for cc in c):
                out[(r["id"],)] += 1
    elif name == "dq_in_group":  # a GROUP BY that only removes duplicates, correlated
        for r in o:
            if any(eq(r["cust"], cc["cust"]) and eq(cc["cust"], r["prod"]) for cc in c):
                out[(r["id"],)] += 1
    elif name == "dq_not_in_distinct":
        for r in o:
            vals = [pp["prod"] for pp in p if eq(pp["prod"], r["cust"])]
            if not vals or (r["prod"] is not None and r["prod"] not in vals):
                out[(r["id"],)] += 1
    elif name == "exists_corr_filter":  # EXISTS custs of region south with the same cust
        for r in o:
            if any(eq(r["cust"], cc["cust"]) and cc["region"] == "south" for cc in c):
                out[(r["id"],)] += 1
    elif name == "in_query_group":  # prods ordered at least 30 times
        n = collections.Counter(r["prod"] for r in o if r["prod"] is not None)
        hot = {k for k, v in n.items() if v >= 30}
        for pp in p:
            if pp["prod"] in hot:
                out[(pp["pname"],)] += 1
    elif name in ("scalar_where", "scalar_select"):
        am = [r["amount"] for r in o if r["amount"] is not None]
        avg = sum(am) // len(am)  # AVG of INT is an INT in Flink (truncated)
        mx = max(am)
        for r in o:
            if name == "scalar_where":
                if r["amount"] is not None and r["amount"] > avg:
                    out[(r["id"], r["amount"])] += 1
            else:
                out[(r["id"], None if r["amount"] is None else mx - r["amount"])] += 1
    elif name == "semi_then_group":  # per region, orders of customers not blocked
        blocked = {b["cust"] for b in f["blocked"]}
        region = {cc["cust"]: cc["region"] for cc in c}
        cnt = collections.Counter()
        for r in o:
            if r["cust"] in region and r["cust"] not in blocked:
                cnt[region[r["cust"]]] += 1
        for k, v in cnt.items():
            out[(k, v)] += 1
    elif name == "scalar_corr_avg":  # orders above their customer's average
        per = collections.defaultdict(list)
        for r in o:
            if r["cust"] is not None and r["amount"] is not None:
                per[r["cust"]].append(r["amount"])
        for r in o:
            am = per.get(r["cust"])
            if am and r["amount"] is not None and r["amount"] > sum(am) // len(am):
                out[(r["id"],)] += 1
    elif name == "scalar_corr_count":  # per customer, its orders above 290 (0 for none)
        for cc in c:
            n = sum(1 for r in o if eq(r["cust"], cc["cust"]) and r["amount"] is not None
                    and r["amount"] > 290)
            out[(cc["cust"], n)] += 1
    elif name in ("in_or", "in_or_null", "in_select", "exists_select"):
        sub = f["blocked_null"] if name in ("in_or_null", "in_select") else f["blocked"]
        vals = [b["cust"] for b in sub]
        for r in o:
            x = r["cust"]
            v = in3(x, vals)
            if name.startswith("in_or"):
                big = None if r["amount"] is None else r["amount"] > 280
                notin = None if v is None else not v
                if big or notin:  # SQL's OR: TRUE when either is TRUE
                    out[(r["id"], x)] += 1
            elif name == "in_select":
                out[(r["id"], v)] += 1
            else:
                out[(r["id"], any(eq(x, b) for b in vals))] += 1
    elif name == "exists_noneq":  # a blocked customer number above the order's
        vals = [b["cust"] for b in f["blocked"]]
        for r in o:
            if any(r["cust"] is not None and v > r["cust"] for v in vals):
                out[(r["id"],)] += 1
    elif name == "not_exists_noneq":  # no product row of the order's product dear enough
        for r in o:
            if not any(eq(r["prod"], pp["prod"]) and r["amount"] is not None
                       and pp["price"] * 5 > r["amount"] for pp in p):
                out[(r["id"],)] += 1
    elif name in ("lateral_rows", "lateral_left"):
        lim = 250 if name == "lateral_rows" else 280
        for cc in c:
            ids = [r["id"] for r in o if eq(r["cust"], cc["cust"]) and r["amount"] is not None
                   and r["amount"] > lim]
            if not ids and name == "lateral_left":
                ids = [None]
            for i in ids:
                out[(cc["cust"], i)] += 1
    elif name == "lateral_agg":  # per customer, the largest of its orders below 50 (or NULL)
        for cc in c:
            am = [r["amount"] for r in o if eq(r["cust"], cc["cust"]) and r["amount"] is not None
                  and r["amount"] < 50]
            out[(cc["cust"], max(am) if am else None)] += 1
    elif name == "topn_agg_hidden":  # the same, the count not selected
        n = collections.Counter(r["prod"] for r in o if r["prod"] is not None)
        top = sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        for i, (k, v) in enumerate(top):
            out[(k, i + 1)] += 1
    elif name == "topn_join_hidden":  # per region the two largest orders, amount not selected
        region = {cc["cust"]: cc["region"] for cc in c}
        per = collections.defaultdict(list)
        for r in o:
            if r["cust"] in region and r["amount"] is not None:
                per[region[r["cust"]]].append((-r["amount"], r["id"]))
        for reg, lst in per.items():
            for i, (_, oid) in enumerate(sorted(lst)[:2]):
                out[(oid, reg, i + 1)] += 1
    elif name in ("topn_agg_nested", "topn_agg_same_block"):  # the 3 most ordered products
        n = collections.Counter(r["prod"] for r in o if r["prod"] is not None)
        top = sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        for i, (k, v) in enumerate(top):
            out[(k, v, i + 1)] += 1
    elif name in ("ne_not_in", "ne_in_select"):
        for r in o:
            x, pr = r["cust"], r["prod"]
            if name == "ne_not_in":  # b.cust > o.prod over blocked_null
                vals = [b["cust"] for b in f["blocked_null"]
                        if b["cust"] is not None and pr is not None and b["cust"] > pr]
                if not vals or (x is not None and None not in vals and x not in vals):
                    out[(r["id"],)] += 1
            else:  # b.cust >= o.prod OR b.why = 'unknown': SQL's OR, NULL when unknown
                vals = [b["cust"] for b in f["blocked_null"]
                        if (b["cust"] is not None and pr is not None and b["cust"] >= pr)
                        or b["why"] == "unknown"]
                out[(r["id"], in3(x, vals))] += 1
    elif name == "ne_scalar":  # per customer, its largest order below cust * 20
        for cc in c:
            am = [r["amount"] for r in o if eq(r["cust"], cc["cust"]) and r["amount"] is not None
                  and r["amount"] < cc["cust"] * 20]
            out[(cc["cust"], max(am) if am else None)] += 1
    elif name == "ne_scalar_count":  # per product, the orders above 5 times its price
        for pp in p:
            out[(pp["prod"], sum(1 for r in o if r["amount"] is not None
                                 and r["amount"] > pp["price"] * 5))] += 1
    elif name == "ne_scalar_join":  # over a join: one vertex feeds the query and its generator
        for r in o:
            for cc in c:
                if eq(r["cust"], cc["cust"]):
                    out[(r["id"], cc["region"],
                         sum(1 for pp in p if r["amount"] is not None
                             and pp["price"] * 10 > r["amount"] and pp["prod"] != cc["cust"]))] += 1
    elif name == "ne_lateral":
        for pp in p:
            for r in o:
                if eq(r["prod"], pp["prod"]) and r["amount"] is not None and \
                        r["amount"] < pp["price"] * 2:
                    out[(pp["prod"], r["id"])] += 1
    elif name == "ne_exists_or":
        for r in o:
            big = r["amount"] is not None and r["amount"] > 280
            ex = any(eq(r["prod"], pp["prod"]) and r["amount"] is not None
                     and pp["price"] * 5 > r["amount"] for pp in p)
            if big or not ex:
                out[(r["id"],)] += 1
    elif name in ("outer_in_item", "outer_not_in_item"):
        for r in o:
            vals = [None if r["id"] is None else (pp["price"] + r["id"]) % 12
                    for pp in p if eq(pp["prod"], r["prod"])]
            v = in3(r["cust"], vals)
            if v if name == "outer_in_item" else v is False:
                out[(r["id"],)] += 1
    elif name == "outer_scalar_item":  # MAX(p.price * o.amount) over prods dearer than cust * 4
        for r in o:
            ps = [pp["price"] * r["amount"] for pp in p if r["cust"] is not None
                  and pp["price"] > r["cust"] * 4 and r["amount"] is not None]
            out[(r["id"], max(ps) if ps else None)] += 1
    elif name == "ne_scalar_over_agg":  # per customer's total, the orders above total / 20
        tot = {}
        for r in o:
            if r["cust"] is not None and r["amount"] is not None:
                tot[r["cust"]] = (tot.get(r["cust"]) or 0) + r["amount"]
            elif r["cust"] is not None:
                tot.setdefault(r["cust"], None)
        for cu, t in tot.items():
            n = 0 if t is None else sum(1 for r in o if r["amount"] is not None
                                        and r["amount"] > t // 20)
            out[(cu, n)] += 1
    elif name == "ne_not_in_over_agg":  # customers (NULL too) with more orders than prod + 20
        cnt = collections.Counter(r["cust"] for r in o)
        for r in o:
            vals = [cu for cu, n in cnt.items() if r["prod"] is not None and n > r["prod"] + 20]
            x = r["cust"]
            if not vals or (x is not None and None not in vals and x not in vals):
                out[(r["id"],)] += 1
    elif name in ("paren_join", "paren_join_outer"):
        for r in o:
            for cc in c:
                if not eq(r["cust"], cc["cust"]):
                    continue
                ps = [pp for pp in p if eq(r["prod"], pp["prod"])]
                if name == "paren_join":
                    for pp in ps:
                        out[(r["id"], cc["region"], pp["pname"])] += 1
                else:
                    for pp in ps or [None]:
                        out[(r["id"], cc["region"], pp and pp["pname"])] += 1
        if name == "paren_join_outer":  # customers without orders: one row of NULLs
            for cc in c:
                if not any(eq(r["cust"], cc["cust"]) for r in o):
                    out[(None, cc["region"], None)] += 1
    elif name == "having_scalar":  # customers (NULL too) whose total is above 5 average orders
        am = [r["amount"] for r in o if r["amount"] is not None]
        lim = sum(am) // len(am) * 5
        for cu, t in group_sums(o, lambda r: r["cust"]).items():
            if t is not None and t > lim:
                out[(cu, t)] += 1
    elif name == "having_not_in":  # products (NULL too) not among the dear ones
        dear = [pp["prod"] for pp in p if pp["price"] > 25]
        for pr, n in collections.Counter(r["prod"] for r in o).items():
            if in3(pr, dear) is False:
                out[(pr, n)] += 1
    elif name == "group_by_scalar":  # per customer (NULL too), beside the dearest price
        mx = max(pp["price"] for pp in p)
        for cu, n in collections.Counter(r["cust"] for r in o).items():
            out[(cu, mx, n)] += 1
    elif name in ("group_by_in", "group_by_in_updating"):  # TRUE / FALSE / NULL groups
        if name == "group_by_in":
            vals = [b["cust"] for b in f["blocked_null"]]
        else:  # customers with more than 20 orders (the subquery's rows come and go)
            vals = [cu for cu, n in collections.Counter(r["cust"] for r in o).items() if n > 20]
        for b, n in collections.Counter(in3(r["cust"], vals) for r in o).items():
            out[(b, n)] += 1
    elif name == "group_by_exists_corr":
        north = {cc["cust"] for cc in c if cc["region"] == "north"}
        for g, t in group_sums(o, lambda r: "n" if r["cust"] in north else "o").items():
            out[(g, t)] += 1
    elif name == "having_beside_where":  # unblocked orders per product, the busy products
        blocked = [b["cust"] for b in f["blocked"]]
        n = collections.Counter(r["prod"] for r in o if in3(r["cust"], blocked) is False)
        for pr, k in n.items():
            if k > len(o) // 12:
                out[(pr, k)] += 1
    elif name == "having_beside_select":  # northern customers' totals less the cheapest price
        north = [cc["cust"] for cc in c if cc["region"] == "north"]
        lo = min(pp["price"] for pp in p)
        for cu, t in group_sums(o, lambda r: r["cust"]).items():
            if in3(cu, north):
                out[(cu, None if t is None else t - lo)] += 1
    elif name == "scalar_count_expr":  # COUNT inside an expression: 1 for no rows, not NULL
        for cc in c:
            big = [r["amount"] for r in o if eq(r["cust"], cc["cust"]) and
                   r["amount"] is not None and r["amount"] > 250]
            out[(cc["cust"], len(big) + 1, len(big) * 1000 + (max(big) if big else 0))] += 1
    elif name == "lateral_count":  # COUNT of an aggregating LATERAL: 0 for no rows
        for cc in c:
            big = [r["amount"] for r in o if eq(r["cust"], cc["cust"]) and
                   r["amount"] is not None and r["amount"] > 250]
            # Flink 2.3: the aggregate grouped by the correlation column, so NULL (not 0)
            out[(cc["cust"], len(big) or None, len(big) + max(big) if big else None)] += 1
    elif name == "ne_lateral_count":
        for pp in p:
            n = sum(1 for r in o if eq(r["prod"], pp["prod"]) and r["amount"] is not None
                    and r["amount"] < pp["price"] * 2)
            out[(pp["prod"], n or None)] += 1
    elif name == "scalar_in_join_on":  # an inner join's ON with a scalar subquery
        avg = sum(pp["price"] for pp in p) / len(p)
        for r in o:
            for pp in p:
                if eq(r["prod"], pp["prod"]) and pp["price"] > avg:
                    out[(r["id"], pp["pname"])] += 1
    elif name == "lateral_count_inner":  # comma LATERAL: a row without a group is dropped
        for cc in c:
            n = sum(1 for r in o if eq(r["cust"], cc["cust"]) and r["amount"] is not None
                    and r["amount"] > 250)
            if n:
                out[(cc["cust"], n)] += 1
    elif name == "lateral_max_cross":
        for cc in c:
            rows = [r for r in o if eq(r["cust"], cc["cust"]) and r["prod"] is not None
                    and r["prod"] > 4]
            if rows:
                vals = [r["amount"] for r in rows if r["amount"] is not None]
                out[(cc["cust"], max(vals) if vals else None)] += 1
    elif name == "lateral_star":
        for cc in c:
            for pp in p:
                if eq(pp["prod"], cc["cust"]):
                    out[(cc["region"], pp["prod"], pp["pname"], pp["price"])] += 1
    elif name == "scalar_nonagg":  # prods has one row per prod
        for r in o:
            names = [pp["pname"] for pp in p if eq(pp["prod"], r["prod"])]
            out[(r["id"], names[0] if names else None)] += 1
    elif name == "scalar_nonagg_updating":  # over an aggregate's changelog: one row per prod
        for pp in p:
            n = sum(1 for r in o if eq(r["prod"], pp["prod"]))
            out[(pp["pname"], n or None)] += 1
    elif name in ("lateral_count_updating", "scalar_having_updating"):
        k = collections.Counter((r["cust"], r["prod"]) for r in o)  # the GROUP BY's changelog
        for cc in c:
            mine = [n for (cu, _), n in k.items() if eq(cu, cc["cust"])]
            if name == "lateral_count_updating":
                big = sum(1 for n in mine if n > 3)
                if big:
                    out[(cc["cust"], big)] += 1
            else:
                out[(cc["cust"], sum(mine) if len(mine) > 8 else None)] += 1
    elif name == "scalar_having":
        for cc in c:
            rows = [r for r in o if eq(r["cust"], cc["cust"])]
            s = group_sums(rows, lambda r: 0).get(0) if len(rows) > 20 else None
            out[(cc["cust"], s)] += 1
    elif name == "in_corr_group_agg":
        for r in o:
            maxes = set()
            for pr in {x["prod"] for x in o if eq(x["cust"], r["cust"])}:
                vals = [x["amount"] for x in o if eq(x["cust"], r["cust"]) and x["prod"] == pr
                        and x["amount"] is not None]
                maxes.add(max(vals) if vals else None)
            if in3(r["amount"], maxes):
                out[(r["id"],)] += 1
    elif name == "outer_on_scalar":  # AVG of INT is an INT (truncated), as in Flink
        avg = sum(pp["price"] for pp in p) // len(p)
        for r in o:
            ps = [pp for pp in p if eq(r["prod"], pp["prod"]) and pp["price"] > avg] or [None]
            for pp in ps:
                out[(r["id"], pp and pp["pname"])] += 1
    else:
        raise KeyError(name)
    return out


QUERIES = {
    # correlated IN / EXISTS over DISTINCT or a GROUP BY without aggregates (Flink decorrelates them)
    "dq_exists_distinct": ("id BIGINT", "SELECT id FROM orders o WHERE EXISTS (SELECT DISTINCT "
                           "c.region FROM custs c WHERE c.cust = o.cust AND c.region <> 'east')"),
    "dq_exists_outer_item": ("id BIGINT", "SELECT id FROM orders o WHERE EXISTS (SELECT o.amount "
                             "FROM custs c WHERE c.cust = o.cust)"),
    "dq_in_group": ("id BIGINT", "SELECT id FROM orders o WHERE cust IN (SELECT c.cust FROM custs c "
                    "WHERE c.cust = o.prod GROUP BY c.cust)"),
    "dq_not_in_distinct": ("id BIGINT", "SELECT id FROM orders o WHERE prod NOT IN (SELECT DISTINCT "
                           "p.prod FROM prods p WHERE p.prod = o.cust)"),
    "star": ("id BIGINT, region STRING, pname STRING",
             "SELECT o.id, c.region, p.pname FROM orders o JOIN custs c ON o.cust = c.cust "
             "JOIN prods p ON o.prod = p.prod"),
    "star_left": ("id BIGINT, region STRING, pname STRING",
                  "SELECT o.id, c.region, p.pname FROM orders AS o LEFT JOIN custs AS c "
                  "ON o.cust = c.cust LEFT JOIN prods AS p ON p.prod = o.prod "
                  "AND c.region <> 'east'"),
    "comma": ("id BIGINT, region STRING, price INT",
              "SELECT o.id, c.region, p.price FROM orders o, custs c, prods p "
              "WHERE o.cust = c.cust AND p.prod = o.prod AND o.amount > p.price * 3"),
    "view_join": ("id BIGINT, pname STRING",
                  "SELECT v.id, p.pname FROM north_orders v JOIN prods p ON v.prod = p.prod"),
    "in_sub": ("id BIGINT, cust INT",
               "SELECT id, cust FROM orders WHERE cust IN (SELECT cust FROM blocked)"),
    "in_sub_null": ("id BIGINT, cust INT",
                    "SELECT id, cust FROM orders WHERE cust IN (SELECT cust FROM blocked_null)"),
    "not_in_sub": ("id BIGINT, cust INT",
                   "SELECT id, cust FROM orders WHERE cust NOT IN (SELECT cust FROM blocked)"),
    "not_in_sub_null": ("id BIGINT, cust INT",
                        "SELECT id, cust FROM orders WHERE cust NOT IN "
                        "(SELECT cust FROM blocked_null)"),
    "not_in_sub_empty": ("id BIGINT, cust INT",
                         "SELECT id, cust FROM orders WHERE cust NOT IN (SELECT cust FROM nobody)"),
    "exists": ("id BIGINT, cust INT",
               "SELECT o.id, o.cust FROM orders o WHERE EXISTS "
               "(SELECT * FROM blocked b WHERE b.cust = o.cust)"),
    "not_exists_null": ("id BIGINT, cust INT",
                        "SELECT id, cust FROM orders o WHERE NOT EXISTS "
                        "(SELECT 1 FROM blocked_null b WHERE b.cust = o.cust)"),
    "exists_corr_filter": ("id BIGINT",
                           "SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM custs c "
                           "WHERE c.region = 'south' AND o.cust = c.cust)"),
    "in_query_group": ("pname STRING",
                       "SELECT pname FROM prods WHERE prod IN (SELECT prod FROM orders "
                       "GROUP BY prod HAVING COUNT(*) >= 30)"),
    "scalar_where": ("id BIGINT, amount INT",
                     "SELECT id, amount FROM orders WHERE amount > "
                     "(SELECT AVG(amount) FROM orders)"),
    "scalar_select": ("id BIGINT, d INT",
                      "SELECT id, (SELECT MAX(amount) FROM orders) - amount AS d FROM orders"),
    "semi_then_group": ("region STRING, n BIGINT",
                        "SELECT c.region, COUNT(*) AS n FROM orders o JOIN custs c "
                        "ON o.cust = c.cust WHERE o.cust NOT IN (SELECT cust FROM blocked) "
                        "GROUP BY c.region"),
    "scalar_corr_avg": ("id BIGINT",
                        "SELECT id FROM orders o WHERE amount > (SELECT AVG(o2.amount) "
                        "FROM orders o2 WHERE o2.cust = o.cust)"),
    "scalar_corr_count": ("cust INT, n BIGINT",
                          "SELECT c.cust, (SELECT COUNT(*) FROM orders o WHERE o.cust = c.cust "
                          "AND o.amount > 290) AS n FROM custs c"),
    "in_or": ("id BIGINT, cust INT",
              "SELECT id, cust FROM orders WHERE amount > 280 OR cust NOT IN "
              "(SELECT cust FROM blocked)"),
    "in_or_null": ("id BIGINT, cust INT",
                   "SELECT id, cust FROM orders WHERE amount > 280 OR cust NOT IN "
                   "(SELECT cust FROM blocked_null)"),
    "in_select": ("id BIGINT, b BOOLEAN",
                  "SELECT id, cust IN (SELECT cust FROM blocked_null) AS b FROM orders"),
    "exists_select": ("id BIGINT, e BOOLEAN",
                      "SELECT id, EXISTS (SELECT 1 FROM blocked b WHERE b.cust = o.cust) AS e "
                      "FROM orders o"),
    "exists_noneq": ("id BIGINT",
                     "SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM blocked b "
                     "WHERE b.cust > o.cust)"),
    "not_exists_noneq": ("id BIGINT",
                         "SELECT id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM prods p "
                         "WHERE p.prod = o.prod AND p.price * 5 > o.amount)"),
    "lateral_rows": ("cust INT, id BIGINT",
                     "SELECT c.cust, x.id FROM custs c, LATERAL (SELECT o.id FROM orders o "
                     "WHERE o.cust = c.cust AND o.amount > 250) AS x"),
    "lateral_left": ("cust INT, id BIGINT",
                     "SELECT c.cust, x.id FROM custs c LEFT JOIN LATERAL (SELECT id FROM orders o "
                     "WHERE o.cust = c.cust AND o.amount > 280) x ON TRUE"),
    "lateral_agg": ("cust INT, mx INT",
                    "SELECT c.cust, x.mx FROM custs c CROSS JOIN LATERAL (SELECT MAX(amount) AS mx "
                    "FROM orders o WHERE o.cust = c.cust AND o.amount < 50) x"),
    "topn_agg_hidden": ("prod INT, rn BIGINT",
                        "SELECT * FROM (SELECT prod, ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, "
                        "prod) AS rn FROM orders WHERE prod IS NOT NULL GROUP BY prod) "
                        "WHERE rn <= 3"),
    "topn_join_hidden": ("id BIGINT, region STRING, rn BIGINT",
                         "SELECT * FROM (SELECT o.id, c.region, ROW_NUMBER() OVER (PARTITION BY "
                         "c.region ORDER BY o.amount DESC, o.id) AS rn FROM orders o JOIN custs c "
                         "ON o.cust = c.cust WHERE o.amount IS NOT NULL) WHERE rn <= 2"),
    "topn_agg_nested": ("prod INT, cnt BIGINT, rn BIGINT",
                        "SELECT * FROM (SELECT prod, cnt, ROW_NUMBER() OVER (ORDER BY cnt DESC, "
                        "prod) AS rn FROM (SELECT prod, COUNT(*) AS cnt FROM orders "
                        "WHERE prod IS NOT NULL GROUP BY prod)) WHERE rn <= 3"),
    "topn_agg_same_block": ("prod INT, cnt BIGINT, rn BIGINT",
                            "SELECT * FROM (SELECT prod, COUNT(*) AS cnt, ROW_NUMBER() OVER "
                            "(ORDER BY COUNT(*) DESC, prod) AS rn FROM orders "
                            "WHERE prod IS NOT NULL GROUP BY prod) WHERE rn <= 3"),
    # correlated other than by equalities, outer columns in the SELECT list
    "ne_not_in": ("id BIGINT", "SELECT id FROM orders o WHERE cust NOT IN (SELECT b.cust FROM "
                  "blocked_null b WHERE b.cust > o.prod)"),
    "ne_in_select": ("id BIGINT, m BOOLEAN",
                     "SELECT id, cust IN (SELECT b.cust FROM blocked_null b WHERE b.cust >= o.prod "
                     "OR b.why = 'unknown') AS m FROM orders o"),
    "ne_scalar": ("cust INT, m INT", "SELECT c.cust, (SELECT MAX(o.amount) FROM orders o WHERE "
                  "o.cust = c.cust AND o.amount < c.cust * 20) AS m FROM custs c"),
    "ne_scalar_count": ("prod INT, n BIGINT", "SELECT p.prod, (SELECT COUNT(*) FROM orders o "
                        "WHERE o.amount > p.price * 5) AS n FROM prods p"),
    "ne_scalar_join": ("id BIGINT, region STRING, n BIGINT",
                       "SELECT o.id, c.region, (SELECT COUNT(*) FROM prods p WHERE p.price * 10 > "
                       "o.amount AND p.prod <> c.cust) AS n FROM orders o JOIN custs c "
                       "ON o.cust = c.cust"),
    "ne_lateral": ("prod INT, id BIGINT", "SELECT p.prod, x.id FROM prods p, LATERAL (SELECT o.id "
                   "FROM orders o WHERE o.prod = p.prod AND o.amount < p.price * 2) AS x"),
    "ne_exists_or": ("id BIGINT", "SELECT id FROM orders o WHERE o.amount > 280 OR NOT EXISTS "
                     "(SELECT 1 FROM prods p WHERE p.prod = o.prod AND p.price * 5 > o.amount)"),
    "outer_in_item": ("id BIGINT", "SELECT id FROM orders o WHERE o.cust IN (SELECT MOD(p.price + "
                      "o.id, 12) FROM prods p WHERE p.prod = o.prod)"),
    "outer_not_in_item": ("id BIGINT", "SELECT id FROM orders o WHERE o.cust NOT IN (SELECT "
                          "MOD(p.price + o.id, 12) FROM prods p WHERE p.prod = o.prod)"),
    "outer_scalar_item": ("id BIGINT, m INT", "SELECT id, (SELECT MAX(p.price * o.amount) FROM "
                          "prods p WHERE p.price > o.cust * 4) AS m FROM orders o"),
    # over updating inputs: the outer rows and the subquery's rows are retracted and re-added
    "ne_scalar_over_agg": ("cust INT, n BIGINT",
                           "SELECT g.cust, (SELECT COUNT(*) FROM orders o WHERE o.amount > "
                           "g.total / 20) AS n FROM (SELECT cust, SUM(amount) AS total FROM "
                           "orders WHERE cust IS NOT NULL GROUP BY cust) g"),
    "ne_not_in_over_agg": ("id BIGINT",
                           "SELECT id FROM orders o WHERE o.cust NOT IN (SELECT g.cust FROM "
                           "(SELECT cust, COUNT(*) AS n FROM orders GROUP BY cust) g "
                           "WHERE g.n > o.prod + 20)"),
    # HAVING with a subquery: the grouped query in FROM, the HAVING its WHERE
    "having_scalar": ("cust INT, s INT", "SELECT cust, SUM(amount) AS s FROM orders GROUP BY cust "
                      "HAVING SUM(amount) > (SELECT AVG(amount) * 5 FROM orders)"),
    "having_not_in": ("prod INT, n BIGINT", "SELECT prod, COUNT(*) AS n FROM orders GROUP BY prod "
                      "HAVING prod NOT IN (SELECT prod FROM prods WHERE price > 25)"),
    # subqueries in GROUP BY: joined to the rows before the grouping
    "group_by_scalar": ("cust INT, m INT, n BIGINT",
                        "SELECT cust, (SELECT MAX(price) FROM prods) AS m, COUNT(*) AS n "
                        "FROM orders GROUP BY cust, (SELECT MAX(price) FROM prods)"),
    "group_by_in": ("b BOOLEAN, n BIGINT",
                    "SELECT cust IN (SELECT cust FROM blocked_null) AS b, COUNT(*) AS n "
                    "FROM orders GROUP BY cust IN (SELECT cust FROM blocked_null)"),
    "group_by_in_updating": ("b BOOLEAN, n BIGINT",
                             "SELECT cust IN (SELECT cust FROM (SELECT cust, COUNT(*) AS c "
                             "FROM orders GROUP BY cust) WHERE c > 20) AS b, COUNT(*) AS n "
                             "FROM orders GROUP BY cust IN (SELECT cust FROM (SELECT cust, "
                             "COUNT(*) AS c FROM orders GROUP BY cust) WHERE c > 20)"),
    "group_by_exists_corr": ("g STRING, s INT",
                             "SELECT CASE WHEN EXISTS (SELECT 1 FROM custs c WHERE c.cust = o.cust "
                             "AND c.region = 'north') THEN 'n' ELSE 'o' END AS g, SUM(amount) AS s "
                             "FROM orders o GROUP BY CASE WHEN EXISTS (SELECT 1 FROM custs c "
                             "WHERE c.cust = o.cust AND c.region = 'north') THEN 'n' ELSE 'o' END"),
    # HAVING with a subquery beside WHERE's and the SELECT list's
    "having_beside_where": ("prod INT, n BIGINT",
                            "SELECT prod, COUNT(*) AS n FROM orders WHERE cust NOT IN (SELECT cust "
                            "FROM blocked) GROUP BY prod HAVING COUNT(*) > "
                            "(SELECT COUNT(*) FROM orders) / 12"),
    "having_beside_select": ("cust INT, d INT",
                             "SELECT cust, SUM(amount) - (SELECT MIN(price) FROM prods) AS d "
                             "FROM orders GROUP BY cust HAVING cust IN (SELECT cust FROM custs "
                             "WHERE region = 'north')"),
    "scalar_count_expr": ("cust INT, n BIGINT, m INT",
                          "SELECT c.cust, (SELECT COUNT(*) + 1 FROM orders o WHERE o.cust = c.cust "
                          "AND o.amount > 250) AS n, (SELECT COUNT(*) * 1000 + COALESCE(MAX("
                          "o.amount), 0) FROM orders o WHERE o.cust = c.cust AND o.amount > 250) "
                          "AS m FROM custs c"),
    "lateral_count": ("cust INT, n BIGINT, m BIGINT",
                      "SELECT c.cust, x.n, x.m FROM custs c LEFT JOIN LATERAL (SELECT COUNT(*) AS n, "
                      "COUNT(*) + MAX(o.amount) AS m FROM orders o WHERE o.cust = c.cust "
                      "AND o.amount > 250) x ON TRUE"),
    "ne_lateral_count": ("prod INT, n BIGINT",
                         "SELECT p.prod, n FROM prods p LEFT JOIN LATERAL (SELECT COUNT(*) AS n "
                         "FROM orders o WHERE o.prod = p.prod AND o.amount < p.price * 2) AS x "
                         "ON TRUE"),
    "scalar_in_join_on": ("id BIGINT, pname STRING",
                          "SELECT o.id, p.pname FROM orders o JOIN prods p ON o.prod = p.prod "
                          "AND p.price > (SELECT AVG(price) FROM prods)"),
    # issue 30's subqueries: inner LATERAL aggregates (grouped by the correlation column and
    # inner-joined, as Flink 2.3), LATERAL (SELECT * ...), a non-aggregate scalar (one row at
    # most, checked at run time), HAVING in a correlated scalar, IN over GROUP BY, a scalar in
    # an outer join's ON
    "lateral_count_inner": ("cust INT, n BIGINT",
                            "SELECT c.cust, x.n FROM custs c, LATERAL (SELECT COUNT(*) AS n FROM "
                            "orders o WHERE o.cust = c.cust AND o.amount > 250) x"),
    "lateral_max_cross": ("cust INT, m INT",
                          "SELECT c.cust, x.m FROM custs c CROSS JOIN LATERAL (SELECT "
                          "MAX(o.amount) AS m FROM orders o WHERE o.cust = c.cust AND o.prod > 4) x"),
    "lateral_star": ("region STRING, prod INT, pname STRING, price INT",
                     "SELECT c.region, x.* FROM custs c, LATERAL (SELECT * FROM prods p "
                     "WHERE p.prod = c.cust) x"),
    "scalar_nonagg": ("id BIGINT, pn STRING",
                      "SELECT o.id, (SELECT p.pname FROM prods p WHERE p.prod = o.prod) AS pn "
                      "FROM orders o"),
    "scalar_nonagg_updating": ("pname STRING, n BIGINT",
                               "SELECT p.pname, (SELECT t.n FROM (SELECT prod, COUNT(*) AS n FROM "
                               "orders GROUP BY prod) t WHERE t.prod = p.prod) AS n FROM prods p"),
    # the same over an aggregate's changelog (its rows retracted and re-sent as counts grow)
    "lateral_count_updating": ("cust INT, n BIGINT",
                               "SELECT c.cust, x.n FROM custs c, LATERAL (SELECT COUNT(*) AS n FROM "
                               "(SELECT cust, prod, COUNT(*) AS k FROM orders GROUP BY cust, prod) t "
                               "WHERE t.cust = c.cust AND t.k > 3) x"),
    "scalar_having_updating": ("cust INT, s BIGINT",
                               "SELECT c.cust, (SELECT SUM(t.k) FROM (SELECT cust, prod, COUNT(*) "
                               "AS k FROM orders GROUP BY cust, prod) t WHERE t.cust = c.cust "
                               "HAVING COUNT(*) > 8) AS s FROM custs c"),
    "scalar_having": ("cust INT, s INT",
                      "SELECT c.cust, (SELECT SUM(o.amount) FROM orders o WHERE o.cust = c.cust "
                      "HAVING COUNT(*) > 20) AS s FROM custs c"),
    "in_corr_group_agg": ("id BIGINT",
                          "SELECT o.id FROM orders o WHERE o.amount IN (SELECT MAX(o2.amount) "
                          "FROM orders o2 WHERE o2.cust = o.cust GROUP BY o2.prod)"),
    "outer_on_scalar": ("id BIGINT, pname STRING",
                        "SELECT o.id, p.pname FROM orders o LEFT JOIN prods p ON o.prod = p.prod "
                        "AND p.price > (SELECT AVG(price) FROM prods)"),
    # a parenthesised join as a join's right side
    "paren_join": ("id BIGINT, region STRING, pname STRING",
                   "SELECT o.id, c.region, p.pname FROM custs c JOIN (orders o JOIN prods p "
                   "ON o.prod = p.prod) ON o.cust = c.cust"),
    "paren_join_outer": ("id BIGINT, region STRING, pname STRING",
                         "SELECT o.id, c.region, p.pname FROM custs c LEFT JOIN (orders o "
                         "LEFT JOIN prods p ON o.prod = p.prod) ON o.cust = c.cust"),
}

VIEWS = ("CREATE VIEW north_orders AS SELECT o.id, o.prod FROM orders o JOIN custs c "
         "ON o.cust = c.cust WHERE c.region = 'north';\n")


def final(out_dir, cols):
    got = collections.Counter()
    names = [c.split()[0] for c in cols.split(", ")]
    for kind, r in fo.sink_changelog(out_dir):
        got[tuple(r.get(n) for n in names)] += 1 if kind in ("+I", "+U") else -1
    assert all(v >= 0 for v in got.values()), got
    return +got


@pytest.mark.parametrize("parallelism", [1, 2])
def test_joins_and_subqueries_match_a_model(cluster, workdir, parallelism):
    cluster.add_tm(slots=8)
    files = data()
    head = ddl(workdir, files) + VIEWS + f"SET 'parallelism.default' = '{parallelism}';\n"
    jobs = {}
    for name, (cols, sql) in QUERIES.items():
        if os.environ.get("SQ_ONLY") and name != os.environ["SQ_ONLY"]:
            continue
        out = os.path.join(workdir, f"out-{name}-{parallelism}")
        r = run_sql(cluster, workdir, f"{name}.sql", head +
                    f"CREATE TABLE sink ({cols}) WITH ('connector' = 'filesystem', "
                    f"'path' = '{out}', 'format' = 'json');\nINSERT INTO sink {sql};\n")
        assert r.returncode == 0 and job_ids(r.stdout), (name, r.stdout + r.stderr)
        jobs[name] = (job_ids(r.stdout)[0], out, cols)
    for name, (jid, out, cols) in jobs.items():
        finish(cluster, jid)
        want = model(name, files)
        # the data exercises each query (NOT IN over a list with a NULL is never true)
        assert sum(want.values()) > 0 or name == "not_in_sub_null", name
        if os.environ.get("SQ_ONLY"):
            print(open(os.path.join(workdir, f"{name}.sql")).read())
            print(collections.Counter(k for k, r in fo.sink_changelog(out)))
            print(cluster.get(f"/jobs/{jid}/plan"))
        assert final(out, cols) == want, name


REFUSED = [
    ("SELECT cust, COUNT(*) FROM orders o GROUP BY cust HAVING EXISTS (SELECT 1 FROM blocked b "
     "WHERE b.cust = o.cust)",
     "line 7, column 58: a subquery in HAVING or in the SELECT list of an aggregation that reads "
     "the grouped tables' columns is not supported"),
    ("SELECT o.id FROM orders o LEFT JOIN prods p ON o.prod = p.prod AND p.price > "
     "(SELECT MAX(o2.amount) FROM orders o2 WHERE o2.id = o.id)",
     "line 7, column 78: a correlated scalar subquery in the ON clause of a LEFT JOIN is not "
     "supported (Flink 2.3 fails it too"),
    ("SELECT o.id FROM orders o FULL JOIN prods p ON o.prod = p.prod AND o.cust IN "
     "(SELECT cust FROM blocked)",
     "line 7, column 68: IN (subquery) in the ON clause of a FULL JOIN is not supported"),
    ("SELECT id FROM orders WHERE cust IN (SELECT cust, why FROM blocked)",
     "line 7, column 29: Values passed to IN operator must have compatible types"),
    ("SELECT id FROM orders WHERE amount > (SELECT cust FROM blocked GROUP BY cust)",
     "line 7, column 38: a scalar subquery with GROUP BY, DISTINCT or without FROM is not "
     "supported yet"),
]


def test_refusals_name_the_place(cluster, workdir):
    head = ddl(workdir, data())
    for i, (sql, msg) in enumerate(REFUSED):
        r = run_sql(cluster, workdir, f"bad{i}.sql", head + sql + ";\n")
        assert msg in r.stdout + r.stderr, (sql, r.stdout + r.stderr)


def test_scalar_subquery_of_more_than_one_row_fails_the_job(cluster, workdir):
    """A scalar subquery that is no aggregate may give one row at most, as Flink checks
    at run time (its SINGLE_VALUE): blocked has three rows, so the job fails, naming it."""
    cluster.add_tm(slots=1)
    out = os.path.join(workdir, "out-single")
    r = run_sql(cluster, workdir, "single.sql", ddl(workdir, data()) +
                f"CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', 'path' = "
                f"'{out}', 'format' = 'json');\nINSERT INTO sink SELECT id FROM orders "
                "WHERE amount > (SELECT cust FROM blocked);\n")
    assert r.returncode == 0 and job_ids(r.stdout), r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    assert cluster.wait_state(jid, ["FINISHED", "FAILED", "CANCELED"], timeout=60)["state"] == "FAILED"
    exc = str(cluster.get(f"/jobs/{jid}/exceptions"))
    assert "a scalar subquery gave 2 rows for one value; it may give at most one" in exc, exc


# ---- across a savepoint: the semi/anti joins' and aggregates' state restored

SP_QUERIES = {
    "semi": ("id BIGINT, k INT", "SELECT id, k FROM a WHERE k IN (SELECT k FROM b)"),
    "anti": ("id BIGINT, k INT",
             "SELECT id, k FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)"),
    "notin": ("id BIGINT", "SELECT id FROM a WHERE k NOT IN (SELECT k FROM b WHERE id > 10)"),
    "scalar": ("id BIGINT", "SELECT id FROM a WHERE id > (SELECT MAX(id) FROM b) - 100"),
    "corr": ("id BIGINT, n BIGINT",
             "SELECT id, (SELECT COUNT(*) FROM b WHERE b.k = a.k) AS n FROM a"),
    # correlated other than by equalities: an anti join with a condition per pair, and a
    # value generator (the distinct (k, id) of a joined with b, counted, joined back)
    "ne_notin": ("id BIGINT", "SELECT id FROM a WHERE k NOT IN (SELECT k FROM b WHERE b.k = a.k "
                 "AND b.id > a.id)"),
    "ne_corr": ("id BIGINT, n BIGINT",
                "SELECT id, (SELECT COUNT(*) FROM b WHERE b.k = a.k AND b.id < a.id) AS n FROM a"),
}


def sp_tables(na, nb, rate):
    # a: ids 1..na, k = id % 7; b: ids 1..nb, k = id % 5 * 2 (the evens 0..8)
    return "".join(
        f"CREATE TABLE {t} (id BIGINT, k AS CAST({k} AS INT)) WITH ('connector' = 'datagen', "
        f"'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence', "
        f"'fields.id.start' = '1', 'fields.id.end' = '{n}');\n"
        for t, k, n in (("a", "id % 7", na), ("b", "id % 5 * 2", nb)))


def sp_script(workdir, p, extra=""):
    ddl = "".join(f"CREATE TABLE out_{n} ({cols}) WITH ('connector' = 'filesystem', "
                  f"'path' = '{os.path.join(workdir, n)}', 'format' = 'json');\n"
                  for n, (cols, _) in SP_QUERIES.items())
    ins = "".join(f"INSERT INTO out_{n} {q};\n" for n, (_, q) in SP_QUERIES.items())
    return (ddl + f"SET 'parallelism.default' = '{p}';\n{extra}\n"
            "EXECUTE STATEMENT SET BEGIN\n" + ins + "END;\n")


def sp_model(na, nb):
    kb = collections.Counter(i % 5 * 2 for i in range(1, nb + 1))
    kb10 = {i % 5 * 2 for i in range(11, nb + 1)}
    a = [(i, i % 7) for i in range(1, na + 1)]
    return {
        "semi": collections.Counter((i, k) for i, k in a if k in kb),
        "anti": collections.Counter((i, k) for i, k in a if k not in kb),
        "notin": collections.Counter((i,) for i, k in a if k not in kb10),
        "scalar": collections.Counter((i,) for i, k in a if i > nb - 100),
        "corr": collections.Counter((i, kb[k]) for i, k in a),
        "ne_notin": collections.Counter((i,) for i, k in a
                                        if not any(j % 5 * 2 == k for j in range(i + 1, nb + 1))),
        "ne_corr": collections.Counter((i, sum(1 for j in range(1, min(i, nb + 1))
                                               if j % 5 * 2 == k)) for i, k in a),
    }


def apply_changes(paths, bag):
    """Apply json part files in order; every -U/-D must remove a row there."""
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                r = json.loads(line)
                op = r.pop("op", "+I")
                row = tuple(r.values())
                if op in ("+I", "+U"):
                    bag[row] += 1
                else:
                    assert bag[row] > 0, f"{path}:{n}: {op} {r} is not there"
                    bag[row] -= 1
    return +bag


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_subqueries_across_a_savepoint(make_cluster, workdir, backend):
    """Stop with a savepoint while the inputs are half read, restore at
    another parallelism: the changelogs of both runs apply across the seam
    and end at the model's result."""
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=8, extra={"state.backend.type": backend})
    na, nb = 1500, 1000
    # 100 rows/s: the stop (after na // 6 rows, about 2.5 s) comes some 12 s
    # before the sources end, however slow a sanitized build's savepoint is
    r = run_sql(c, workdir, "run1.sql", sp_tables(na, nb, 100) + sp_script(workdir, 2))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    c.wait_state(jid, "RUNNING", timeout=30)
    wait_for(lambda: all(v["status"] == "RUNNING" for v in c.job(jid)["vertices"]), timeout=60,
             what="every task to run")
    sp = c.stop_after_progress(jid, "a", na // 6, os.path.join(workdir, "sp"))
    want = sp_model(na, nb)
    run1, bags = {}, {}
    for name in SP_QUERIES:
        run1[name] = committed_files(os.path.join(workdir, name))
        bags[name] = apply_changes(run1[name], collections.Counter())
    assert bags["semi"] != want["semi"] and bags["corr"] != want["corr"]  # stopped mid-stream
    r = run_sql(c, workdir, "run2.sql", sp_tables(na, nb, 100000) + sp_script(
        workdir, 1, extra=f"SET 'execution.savepoint.path' = '{sp}';"))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    cp = c.get(f"/jobs/{jid2}/checkpoints")
    assert cp["counts"]["restored"] == 1 and cp["latest"]["restored"]["is_savepoint"] is True
    for name in SP_QUERIES:
        new = [f for f in committed_files(os.path.join(workdir, name)) if f not in run1[name]]
        assert apply_changes(new, bags[name]) == want[name], name


# ---- a semi join's time attribute feeds a group window (Flink 2.3 plans it so)

SEMI_EV = "id BIGINT, k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"


def semi_window_data():
    """Events on ascending 10-190 ms steps (no row late), keys 0..6; `good`
    (no watermark) names keys 1, 3, 4 and 9. The window closes only when
    `good` has ended (the join's watermark is the lower of its inputs'), so
    every matched row is on time wherever the inputs interleave."""
    rng = random.Random(SEED + 1)
    base = datetime.datetime(2026, 1, 1)
    t, ev = 0, []
    for i in range(1, 401):
        t += rng.randrange(10, 200)
        ev.append({"id": i, "k": rng.randrange(0, 7), "v": rng.randrange(0, 50),
                   "ts": (base + datetime.timedelta(milliseconds=t)).strftime(
                       "%Y-%m-%d %H:%M:%S.%f")[:-3]})
    return ev, [{"k": k} for k in (1, 3, 4, 9)], base


SEMI_FROMS = {
    "exists": "(SELECT * FROM sev WHERE EXISTS (SELECT 1 FROM good g WHERE g.k = sev.k))",
    # `good`'s keys are distinct: the inner join keeps the same rows
    "join": "(SELECT sev.* FROM sev JOIN good ON sev.k = good.k)",
}


@pytest.mark.parametrize("form", sorted(SEMI_FROMS))
@pytest.mark.parametrize("parallelism", [1, 2])
def test_semi_join_then_group_window(cluster, workdir, parallelism, form):
    cluster.add_tm(slots=4)
    ev, good, base = semi_window_data()
    paths = {}
    for name, rows in (("sev", ev), ("good", good)):
        paths[name] = os.path.join(workdir, name + ".jsonl")
        with open(paths[name], "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    out = os.path.join(workdir, "out")
    cols = "k INT, ws TIMESTAMP(3), c BIGINT, s INT"
    r = run_sql(cluster, workdir, "semi_window.sql", f"""
CREATE TABLE sev ({SEMI_EV}) WITH ('connector' = 'filesystem', 'path' = '{paths["sev"]}',
    'format' = 'json');
CREATE TABLE good (k INT) WITH ('connector' = 'filesystem', 'path' = '{paths["good"]}',
    'format' = 'json');
CREATE TABLE sink ({cols}) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
SET 'parallelism.default' = '{parallelism}';
INSERT INTO sink
SELECT k, TUMBLE_START(ts, INTERVAL '2' SECOND) AS ws, COUNT(*) AS c, SUM(v) AS s
FROM {SEMI_FROMS[form]}
GROUP BY TUMBLE(ts, INTERVAL '2' SECOND), k;
""")
    assert r.returncode == 0 and job_ids(r.stdout), r.stdout + r.stderr
    finish(cluster, job_ids(r.stdout)[0])
    want = collections.Counter()
    groups = collections.defaultdict(lambda: [0, 0])
    keys = {g["k"] for g in good}
    for e in ev:
        if e["k"] in keys:
            ms = fo.ms_of_text(e["ts"])
            g = groups[(e["k"], ms - ms % 2000)]
            g[0] += 1
            g[1] += e["v"]
    epoch = datetime.datetime(1970, 1, 1)
    for (k, ws), (c, s) in groups.items():
        text = (epoch + datetime.timedelta(milliseconds=ws)).strftime("%Y-%m-%d %H:%M:%S")
        want[(k, text, c, s)] += 1
    got = collections.Counter()
    for kind, row in fo.sink_changelog(out):
        assert kind == "+I", kind  # a window's row goes out once
        ws = fo.ms_of_text(row["ws"])
        got[(row["k"], (epoch + datetime.timedelta(milliseconds=ws)).strftime(
            "%Y-%m-%d %H:%M:%S"), row["c"], row["s"])] += 1
    assert len(want) > 20
    assert got == want


@pytest.mark.parametrize("sql,msg", [
    # as in Flink 2.3, the materialized attribute feeds no window TVF ...
    ("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE sv, DESCRIPTOR(ts), "
     "INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
     "The window function requires the timecol is a time attribute type, but is TIMESTAMP(3)."),
    ("SELECT * FROM TABLE(TUMBLE(TABLE sv, DESCRIPTOR(ts), INTERVAL '5' SECOND))",
     "The window function requires the timecol is a time attribute type, but is TIMESTAMP(3)."),
    # ... and no temporal sort
    ("SELECT * FROM sv ORDER BY ts", "Sort on a non-time-attribute field is not supported."),
])
def test_semi_join_time_attribute_refusals(cluster, workdir, sql, msg):
    r = run_sql(cluster, workdir, "bad.sql", f"""
CREATE TABLE sev ({SEMI_EV}) WITH ('connector' = 'filesystem', 'path' = '{workdir}/x.jsonl',
    'format' = 'json');
CREATE TABLE good (k INT) WITH ('connector' = 'filesystem', 'path' = '{workdir}/y.jsonl',
    'format' = 'json');
CREATE VIEW sv AS SELECT * FROM sev WHERE k IN (SELECT k FROM good);
{sql};
""")
    assert r.returncode != 0
    assert msg in r.stdout + r.stderr, r.stdout + r.stderr
