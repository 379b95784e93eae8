"""The session time zone (`SET 'table.local-time-zone'`, issue 29) through
`sluice sql -f` on a live cluster: the clock functions, the TIMESTAMP_LTZ
CASTs, TO_TIMESTAMP_LTZ, FROM_UNIXTIME, UNIX_TIMESTAMP and DATE_FORMAT of an
LTZ in the zone the job was planned in. Every expectation is computed here
with Python's zoneinfo and datetime, independently of Sluice."""
import collections
import datetime
import json
import os
import zoneinfo

import pytest

from test_sql import run_sql, job_ids, finish, ms
from test_sql_types import rows_text

UTC = datetime.timezone.utc

# id, epoch milliseconds: ordinary instants, New York's 2026 DST gap (03-08
# 02:00 local -> 03:00) and overlap (11-01 01:00..02:00 local twice), the
# Shanghai date line (16:00 UTC is midnight there), before the epoch
MS = [
    (1, 1767225600123),            # 2026-01-01 00:00:00.123 UTC
    (2, 1772953200000),            # 2026-03-08 07:00:00 UTC = 03:00 EDT
    (3, 1793511000000),            # 2026-11-01 05:30:00 UTC = 01:30 EDT (first pass)
    (4, 1793514600000),            # 2026-11-01 06:30:00 UTC = 01:30 EST (second pass)
    (5, 1767283199000),            # 2026-01-01 15:59:59 UTC
    (6, -86400000 + 3723000),      # 1969-12-31 01:02:03 UTC
]
# wall-clock texts read in the zone: UNIX_TIMESTAMP(s), CAST(s AS TIMESTAMP_LTZ)
TEXTS = {1: "2026-01-01 08:00:00", 2: "2026-03-08 02:30:00", 3: "2026-11-01 01:30:00",
         4: "2026-07-01 12:00:00", 5: "2026-12-31 23:59:59", 6: "1970-01-01 00:00:00"}

DDL = """
CREATE TABLE src (id BIGINT, ms BIGINT, txt STRING)
WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE sink (id BIGINT, ls STRING, lt STRING, df STRING, fu STRING, ut BIGINT,
    lz BIGINT, cd STRING, ctm STRING, lts STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}', 'format' = 'json');
"""

QUERY = """
INSERT INTO sink SELECT id,
    CAST(TO_TIMESTAMP_LTZ(ms, 3) AS STRING),
    CAST(CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIMESTAMP(3)) AS STRING),
    DATE_FORMAT(TO_TIMESTAMP_LTZ(ms, 3), 'yyyy-MM-dd HH:mm:ss.SSS'),
    FROM_UNIXTIME(ms / 1000),
    UNIX_TIMESTAMP(txt),
    TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(0, 0), CAST(CAST(txt AS TIMESTAMP(3)) AS TIMESTAMP_LTZ(3))),
    CAST(CURRENT_DATE AS STRING), CAST(LOCALTIME AS STRING), CAST(LOCALTIMESTAMP AS STRING)
  FROM src;
"""


def write_src(workdir):
    src = os.path.join(workdir, "src")
    os.makedirs(src)
    with open(os.path.join(src, "part-0.json"), "w") as f:
        for i, ms in MS:
            f.write(json.dumps({"id": i, "ms": ms, "txt": TEXTS[i]}) + "\n")
    return src


def local(ms, zone):
    """The wall-clock time of an instant in zone, naive."""
    t = datetime.datetime(1970, 1, 1, tzinfo=UTC) + datetime.timedelta(milliseconds=ms)
    return t.astimezone(zone).replace(tzinfo=None)


def instant(text, zone):
    """Epoch seconds of wall-clock text in zone as java.time resolves it: a
    time in a gap moves forward by the gap's length and one in an overlap
    takes the earlier offset -- both what zoneinfo's fold=0 (the offset
    before the transition) gives."""
    t = datetime.datetime.fromisoformat(text).replace(tzinfo=zone, fold=0)
    return int((t - datetime.datetime(1970, 1, 1, tzinfo=UTC)).total_seconds())


def instant_sdf(text, zone):
    """As instant, but as Flink's UNIX_TIMESTAMP(s) (SimpleDateFormat,
    java.util.TimeZone) resolves it: an overlap takes the later offset."""
    naive = datetime.datetime.fromisoformat(text)
    t0, t1 = naive.replace(tzinfo=zone, fold=0), naive.replace(tzinfo=zone, fold=1)
    gap = t0.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != naive
    t = t0 if gap else t1
    return int((t - datetime.datetime(1970, 1, 1, tzinfo=UTC)).total_seconds())


def run_zone(cluster, workdir, zone_name):
    src = write_src(workdir)
    out = os.path.join(workdir, "out")
    zone = zoneinfo.ZoneInfo(zone_name)
    before = datetime.datetime.now(UTC).astimezone(zone).replace(tzinfo=None)
    r = run_sql(cluster, workdir, "tz.sql", f"SET 'table.local-time-zone' = '{zone_name}';\n" +
                DDL.format(src=src, out=out) + QUERY)
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    after = datetime.datetime.now(UTC).astimezone(zone).replace(tzinfo=None)
    got = {g["id"]: g for g in (json.loads(ln) for ln in rows_text(out))}
    assert sorted(got) == [i for i, _ in MS]
    for i, ms in MS:
        t = local(ms, zone)
        text = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        g = got[i]
        assert g["ls"] == text, (zone_name, i, g)
        assert g["lt"] == text, (zone_name, i, g)
        assert g["df"] == text, (zone_name, i, g)
        ts = local((ms // 1000) * 1000 if ms >= 0 else -((-ms) // 1000) * 1000, zone)
        assert g["fu"] == ts.strftime("%Y-%m-%d %H:%M:%S"), (zone_name, i, g)
        assert g["ut"] == instant_sdf(TEXTS[i], zone), (zone_name, i, g)
        assert g["lz"] == instant(TEXTS[i], zone), (zone_name, i, g)
        # the clock, read while the job ran: between `before` and `after` in the zone
        assert before.date().isoformat() <= g["cd"] <= after.date().isoformat(), (g, before, after)
        lts = datetime.datetime.fromisoformat(g["lts"])
        assert before - datetime.timedelta(seconds=1) <= lts <= after, (g, before, after)
        ltm = datetime.time.fromisoformat(g["ctm"])
        if before.date() == after.date():
            assert before.time().replace(microsecond=0) <= ltm <= after.time(), (g, before, after)


def test_session_zone_shanghai(cluster, workdir):
    cluster.add_tm(slots=1)
    run_zone(cluster, workdir, "Asia/Shanghai")


def test_session_zone_new_york_dst(cluster, workdir):
    cluster.add_tm(slots=1)
    run_zone(cluster, workdir, "America/New_York")


def test_session_zone_default_utc(cluster, workdir):
    cluster.add_tm(slots=1)
    run_zone(cluster, workdir, "UTC")


def test_session_zone_refused(cluster, workdir):
    r = run_sql(cluster, workdir, "bad.sql", "SET 'table.local-time-zone' = 'Mars/Olympus';\n")
    assert r.returncode != 0
    assert "line 1, column 1: 'table.local-time-zone': unknown time zone 'Mars/Olympus'" in \
        r.stdout + r.stderr, r.stdout + r.stderr


def test_client_prints_an_ltz_in_the_session_zone(cluster, workdir):
    """Flink's SQL client shows a TIMESTAMP_LTZ as the session zone's local
    time; a TIMESTAMP(3) as it is. The changelog mode's cells, one row per id."""
    cluster.add_tm(slots=1)
    src = write_src(workdir)
    zone = zoneinfo.ZoneInfo("Asia/Kolkata")  # +05:30: minutes move too
    r = run_sql(cluster, workdir, "p.sql", DDL.format(src=src, out=os.path.join(workdir, "o")) + """
SET 'table.local-time-zone' = 'Asia/Kolkata';
SET 'sql-client.execution.result-mode' = 'changelog';
SELECT id, TO_TIMESTAMP_LTZ(ms, 3) AS l, CAST(TO_TIMESTAMP_LTZ(ms, 3) AS TIMESTAMP(3)) AS t
  FROM src;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for i, ms in MS:
        t = local(ms, zone)
        text = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        # the same local text under the LTZ column and the TIMESTAMP(3) one
        assert any(ln.split()[:1] == ["+I"] and ln.split()[1] == str(i) and
                   ln.split()[2:6] == text.split() * 2 for ln in r.stdout.splitlines()), \
            (i, text, r.stdout)


# ---- the zone beyond calc and values: a regular join's condition, a
# MATCH_RECOGNIZE's DEFINE and its aggregate MEASURES, an UNNEST's argument

def hour_text(ms, zone):
    """DATE_FORMAT(TO_TIMESTAMP_LTZ(ms, 3), 'yyyy-MM-dd HH') in zone."""
    return local(ms, zone).strftime("%Y-%m-%d %H")


OPS_ZONES = ["UTC", "Asia/Shanghai", "America/New_York", "Asia/Kolkata"]

OPS_DDL = """
CREATE TABLE src (id BIGINT, ms BIGINT, txt STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{src}', 'format' = 'json');
CREATE TABLE hours (id BIGINT, h STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{hours}', 'format' = 'json');
CREATE TABLE ticks (id BIGINT, ms BIGINT, k INT, ts AS TO_TIMESTAMP_LTZ(ms, 3),
    WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = 'file://{ticks}', 'format' = 'json');
CREATE TABLE jout (id BIGINT, h STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}/j', 'format' = 'json');
CREATE TABLE mout (id BIGINT, sh BIGINT)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}/m', 'format' = 'json');
CREATE TABLE uout (id BIGINT, x STRING)
  WITH ('connector' = 'filesystem', 'path' = 'file://{out}/u', 'format' = 'json');
"""

OPS_QUERY = """
INSERT INTO jout SELECT s.id, h.h FROM src AS s LEFT JOIN hours AS h
  ON s.id = h.id AND DATE_FORMAT(TO_TIMESTAMP_LTZ(s.ms, 3), 'yyyy-MM-dd HH') = h.h;
INSERT INTO mout SELECT id, sh FROM ticks MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.id AS id, SUM(HOUR(CAST(A.ts AS TIMESTAMP(3)))) AS sh
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A)
  DEFINE A AS HOUR(CAST(A.ts AS TIMESTAMP(3))) < 12);
INSERT INTO uout SELECT id, x FROM src
  CROSS JOIN UNNEST(ARRAY[DATE_FORMAT(TO_TIMESTAMP_LTZ(ms, 3), 'yyyy-MM-dd HH:mm'),
                          CAST(CAST(TO_TIMESTAMP_LTZ(ms, 3) AS DATE) AS STRING)]) AS t(x);
"""


def run_ops_zone(cluster, workdir, zone_name):
    zone = zoneinfo.ZoneInfo(zone_name)
    src = write_src(workdir)
    hours = os.path.join(workdir, "hours")
    os.makedirs(hours)
    with open(os.path.join(hours, "part-0.json"), "w") as f:
        # each id's hour in every zone of the test: the join keeps exactly the
        # one of the session zone (a condition read in another zone keeps
        # another, or pads the row with NULL)
        for i, ms in MS:
            for h in sorted({hour_text(ms, zoneinfo.ZoneInfo(z)) for z in OPS_ZONES}):
                f.write(json.dumps({"id": i, "h": h}) + "\n")
    ticks = os.path.join(workdir, "ticks")
    os.makedirs(ticks)
    with open(os.path.join(ticks, "part-0.json"), "w") as f:
        for i, ms in sorted(MS, key=lambda x: x[1]):  # in event-time order
            f.write(json.dumps({"id": i, "ms": ms, "k": 1}) + "\n")
    out = os.path.join(workdir, "out")
    r = run_sql(cluster, workdir, "ops.sql", f"SET 'table.local-time-zone' = '{zone_name}';\n" +
                OPS_DDL.format(src=src, hours=hours, ticks=ticks, out=out) + OPS_QUERY)
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)

    def got(d):
        """The rows a sink's changelog ends with (a LEFT join may emit a
        padded row and retract it when the match arrives)."""
        rows = collections.Counter()
        for g in (json.loads(ln) for ln in rows_text(os.path.join(out, d))):
            op = g.pop("op", "+I")
            rows[tuple(g.values())] += 1 if op in ("+I", "+U") else -1
        assert all(n >= 0 for n in rows.values()), (d, rows)
        return sorted(rows.elements())
    assert got("j") == sorted((i, hour_text(ms, zone)) for i, ms in MS), zone_name
    assert got("m") == sorted((i, local(ms, zone).hour) for i, ms in MS
                              if local(ms, zone).hour < 12), zone_name
    assert got("u") == sorted([(i, local(ms, zone).strftime("%Y-%m-%d %H:%M")) for i, ms in MS] +
                              [(i, local(ms, zone).date().isoformat()) for i, ms in MS]), zone_name


def test_zone_in_join_match_and_unnest_shanghai(cluster, workdir):
    cluster.add_tm(slots=3)
    run_ops_zone(cluster, workdir, "Asia/Shanghai")


def test_zone_in_join_match_and_unnest_new_york_dst(cluster, workdir):
    cluster.add_tm(slots=3)
    run_ops_zone(cluster, workdir, "America/New_York")


def test_zone_in_join_match_and_unnest_kolkata(cluster, workdir):
    cluster.add_tm(slots=3)
    run_ops_zone(cluster, workdir, "Asia/Kolkata")


def test_a_values_ltz_column_prints_in_the_session_zone(cluster, workdir):
    """A SELECT without FROM (a VALUES vertex) keeps its TIMESTAMP_LTZ column
    one: shown in the session zone, as Flink's client shows it; a row of
    TIMESTAMP(3) keeps its text."""
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "v.sql", """
SET 'table.local-time-zone' = 'Asia/Kolkata';
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT TO_TIMESTAMP_LTZ(0, 3) AS l, TIMESTAMP '1970-01-01 00:00:00' AS t;
SELECT * FROM (VALUES (TO_TIMESTAMP_LTZ(0, 3)), (CAST(NULL AS TIMESTAMP_LTZ(3)))) AS v(l);
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| +I | 1970-01-01 05:30:00.000 | 1970-01-01 00:00:00.000 |" in r.stdout, r.stdout
    assert "| +I | 1970-01-01 05:30:00.000 |" in r.stdout and "<NULL>" in r.stdout, r.stdout


# ---- windows over a TIMESTAMP_LTZ attribute align in the session zone ----

WBASE = 1772755200000  # 2026-03-06 00:00:00 UTC: New York's DST gap (03-08) follows
WSTEP = 7 * 60000      # an event every 7 minutes: ~9.7 days of events
WIN_GEN = """
SET 'table.local-time-zone' = '{zone}';
SET 'pipeline.auto-watermark-interval' = '0 ms';
SET 'parallelism.default' = '{p}';
{extra}
CREATE TABLE ev (
    id BIGINT,
    ts AS TO_TIMESTAMP_LTZ({base} + {step} * id, 3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE days (ws TIMESTAMP(3), we TIMESTAMP(3), wt TIMESTAMP_LTZ(3), c BIGINT, sid BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO days SELECT window_start, window_end, window_time, COUNT(*), SUM(id)
  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' DAY))
  GROUP BY window_start, window_end, window_time;
"""


def naive_ms(t):
    """A naive datetime's milliseconds as if it were UTC (how a TIMESTAMP
    column's local value is held and written)."""
    return (t - datetime.datetime(1970, 1, 1)) // datetime.timedelta(milliseconds=1)


def instant_ms(t, zone):
    """Epoch ms of naive wall-clock t in zone, an overlap taking the earlier
    offset (fold=0), as Flink's window_time does."""
    return (t.replace(tzinfo=zone, fold=0) - datetime.datetime(1970, 1, 1, tzinfo=UTC)) \
        // datetime.timedelta(milliseconds=1)


def day_windows(zone, n):
    """{(window_start, window_end, window_time) as ms: [count, sum of ids]}
    of 1-day windows aligned at the zone's local midnight."""
    want = collections.defaultdict(lambda: [0, 0])
    for i in range(1, n + 1):
        lt = local(WBASE + WSTEP * i, zone)
        start = datetime.datetime(lt.year, lt.month, lt.day)
        end = start + datetime.timedelta(days=1)
        w = want[(naive_ms(start), naive_ms(end),
                  instant_ms(end - datetime.timedelta(milliseconds=1), zone))]
        w[0] += 1
        w[1] += i
    return dict(want)


@pytest.mark.parametrize("zone_name,p1,p2,backend,two_phase", [
    ("America/New_York", 1, 2, "rocksdb", False), ("Asia/Shanghai", 2, 1, "hashmap", False),
    ("America/New_York", 2, 2, "hashmap", True)])
def test_day_windows_align_in_the_zone_across_a_savepoint(make_cluster, workdir, zone_name, p1,
                                                           p2, backend, two_phase):
    """A 1-day TUMBLE over a TIMESTAMP_LTZ attribute starts at the zone's
    local midnight (New York's 2026-03-08 window holds 23 hours of events);
    window_start / window_end are local times, window_time the instant of
    the window's last local millisecond. Stopped with a savepoint while days
    are open, the job restores at another parallelism and every day goes
    out once with all its rows."""
    zone = zoneinfo.ZoneInfo(zone_name)
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "1 h"})
    c.add_tm(slots=2, extra={"state.backend.type": backend})
    n = 2000
    out = os.path.join(workdir, "days")
    args = dict(zone=zone_name, base=WBASE, step=WSTEP, n=n, out=out)
    # two_phase: a local_aggregate pre-aggregates by local-day slices
    mb = "SET 'table.exec.mini-batch.enabled' = 'true';" if two_phase else ""
    r = run_sql(c, workdir, "run1.sql", WIN_GEN.format(p=p1, extra=mb, rate=400, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    if two_phase:  # one run to the end: the local phase chains to the source
        finish(c, jid)
        got = {(ms(x["ws"]), ms(x["we"]), ms(x["wt"])): [x["c"], x["sid"]]
               for x in map(json.loads, rows_text(out))}
        assert got == day_windows(zone, n)
        return
    sp = c.stop_after_progress(jid, "ev", n // 3, os.path.join(workdir, "sp"))
    first = rows_text(out)
    r = run_sql(c, workdir, "run2.sql", WIN_GEN.format(
        p=p2, extra=f"{mb}\nSET 'execution.savepoint.path' = '{sp}';", rate=4000, **args))
    assert r.returncode == 0, r.stdout + r.stderr
    jid2 = job_ids(r.stdout)[0]
    finish(c, jid2)
    assert c.get(f"/jobs/{jid2}/checkpoints")["counts"]["restored"] == 1
    got_rows = [json.loads(ln) for ln in rows_text(out)]
    got = {(ms(x["ws"]), ms(x["we"]), ms(x["wt"])): [x["c"], x["sid"]] for x in got_rows}
    assert len(got) == len(got_rows)  # each day once
    want = day_windows(zone, n)
    assert got == want
    assert 0 < len(first) < len(want)  # stopped with days still to come
    if zone_name == "America/New_York":  # the DST day: 23 hours of events at 7 minutes
        dst = [v[0] for (s, _, _), v in want.items()
               if s == naive_ms(datetime.datetime(2026, 3, 8))]
        assert len(dst) == 1 and 23 * 60 // 7 <= dst[0] <= 23 * 60 // 7 + 1


def test_processing_time_day_windows_align_in_the_zone(cluster, workdir):
    """A 1-day TUMBLE over PROCTIME() (a TIMESTAMP_LTZ in Flink) starts at
    the zone's local midnight of the wall clock: Shanghai's date, 8 hours
    ahead of UTC's midnight."""
    cluster.add_tm(slots=1)
    zone = zoneinfo.ZoneInfo("Asia/Shanghai")
    out = os.path.join(workdir, "pdays")

    def today():
        t = datetime.datetime.now(UTC).astimezone(zone)
        return datetime.datetime(t.year, t.month, t.day)
    before = today()
    r = run_sql(cluster, workdir, "pt.sql", f"""
SET 'table.local-time-zone' = 'Asia/Shanghai';
CREATE TABLE src (id BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '50');
CREATE TABLE pdays (ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO pdays SELECT window_start, window_end, COUNT(*)
  FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(pt), INTERVAL '1' DAY))
  GROUP BY window_start, window_end;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    for j in job_ids(r.stdout):
        finish(cluster, j)
    after = today()
    got = [json.loads(ln) for ln in rows_text(out)]
    days = {naive_ms(d) for d in (before, after)}
    assert got and all(ms(g["ws"]) in days for g in got), got
    assert all(ms(g["we"]) - ms(g["ws"]) == 86400000 for g in got), got
    assert sum(g["c"] for g in got) == 50
