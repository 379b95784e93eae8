#!/usr/bin/env python3
"""Prints date, time, timestamp, interval and time-zone test vectors for
tests/unit/test_temporal.c, computed with Python's datetime and zoneinfo
(the system's tz database), seeded: the same cases every run.

Line format (space separated, '_' stands for a blank inside a text):
  date DAYS TEXT                     days since 1970-01-01 <-> yyyy-MM-dd
  ts MS NANO P SQLTEXT JAVATEXT INSTANTTEXT
                                     a TIMESTAMP(P): CAST to STRING form,
                                     java.time LocalDateTime.toString form,
                                     java.time Instant.toString form
  tsparse P TEXT MS NANO|ERR         TEXT into a TIMESTAMP(P)
  time MS P SQLTEXT JAVATEXT         a TIME(P) (milliseconds of the day)
  ym MONTHS TEXT                     INTERVAL YEAR TO MONTH
  dt MS TEXT                         INTERVAL DAY TO SECOND
  tzoff ZONE UTC_MS OFFSET_MS        the zone's offset at an instant
  tzlocal ZONE LOCAL_MS UTC_MS       the instant of a wall-clock time
                                     (fold=0: a gap moves forward, an
                                     overlap takes the earlier offset)
"""
import datetime as dt
import random
import sys
from zoneinfo import ZoneInfo

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
rng = random.Random(20261207)
out = []


def java_time(t, nanos):
    """java.time.LocalTime.toString of hour, minute, second and nanos."""
    s = f"{t.hour:02d}:{t.minute:02d}"
    if t.second or nanos:
        s += f":{t.second:02d}"
        if nanos:
            if nanos % 1000000 == 0:
                s += f".{nanos // 1000000:03d}"
            elif nanos % 1000 == 0:
                s += f".{nanos // 1000:06d}"
            else:
                s += f".{nanos:09d}"
    return s


def date_text(d):
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


LO = (dt.date(1, 1, 1) - EPOCH_DATE).days
HI = (dt.date(9999, 12, 31) - EPOCH_DATE).days
special_days = [LO, HI, 0, -1, (dt.date(2024, 2, 29) - EPOCH_DATE).days,
                (dt.date(2000, 2, 29) - EPOCH_DATE).days, (dt.date(1900, 3, 1) - EPOCH_DATE).days]

for days in special_days + [rng.randint(LO, HI) for _ in range(3000)]:
    out.append(f"date {days} {date_text(EPOCH_DATE + dt.timedelta(days=days))}")

for i in range(4000):
    days = special_days[i] if i < len(special_days) else rng.randint(LO, HI)
    ms_of_day = rng.choice([0, 86399999, rng.randint(0, 86399999),
                            rng.randint(0, 86399) * 1000, rng.randint(0, 1439) * 60000])
    nano = rng.choice([0, rng.randint(0, 999999), rng.randint(0, 999) * 1000])
    p = rng.randint(0, 9)
    # a TIMESTAMP(p) holds no digits past p: cut them as a cast would
    total = ms_of_day * 1000000 + nano
    total -= total % (10 ** (9 - p))
    ms_of_day, nano = divmod(total, 1000000)
    ms = days * 86400000 + ms_of_day
    d = EPOCH + dt.timedelta(milliseconds=ms)
    frac9 = (ms_of_day % 1000) * 1000000 + nano
    sql = f"{date_text(d)}_{d.hour:02d}:{d.minute:02d}:{d.second:02d}"
    if p > 0:
        sql += "." + f"{frac9:09d}"[:p]
    java = f"{date_text(d)}T{java_time(d, frac9)}"
    instant = java if (d.second or frac9) else java + ":00"
    out.append(f"ts {ms} {nano} {p} {sql} {java} {instant}Z")
    # the SQL text reads back; with more digits than p they are cut
    out.append(f"tsparse {p} {sql} {ms} {nano}")
    if p < 9:
        longer = f"{date_text(d)}_{d.hour:02d}:{d.minute:02d}:{d.second:02d}.{frac9:09d}"
        ftot = ms_of_day * 1000000 + nano
        out.append(f"tsparse {p} {longer} {ms} {nano}")

# Flink's CAST forms: one-digit fields, a date alone; and its refusals
# (blanks around a TIMESTAMP, a 'T', more than 9 fraction digits)
for text, p, want in [("2026-1-1_1:2:3", 3, dt.datetime(2026, 1, 1, 1, 2, 3)),
                      ("2026-01-01", 3, dt.datetime(2026, 1, 1)),
                      ("2026-01-01_10:00:00.", 0, dt.datetime(2026, 1, 1, 10)),
                      ("2024-02-29_23:59:59.999", 3, dt.datetime(2024, 2, 29, 23, 59, 59, 999000))]:
    ms = (want - EPOCH) // dt.timedelta(milliseconds=1)
    out.append(f"tsparse {p} {text} {ms} 0")
for text in ["2026-02-30_00:00:00", "2026-13-01", "2026-01-01_24:00:00", "2026-01-01_10:60:00",
             "2026-01-01_10:00:60", "x", "2026-01-01_10", "2026-01-01_10:00", "10000-01-01",
             "2026-01-01_10:00:00.1234567890", "2026/01/01", "2023-02-29",
             "_2026-01-01_10:00:00", "2026-01-01_10:00:00_", "2026-01-01T10:00:00",
             "0000-01-01_00:00:00"]:
    out.append(f"tsparse 9 {text} ERR")

for _ in range(1500):
    ms = rng.choice([0, 86399999, rng.randint(0, 86399999), rng.randint(0, 86399) * 1000])
    p = rng.randint(0, 9)
    t = (EPOCH + dt.timedelta(milliseconds=ms)).time()
    f = ms % 1000
    sql = f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if f and p > 0:
        sql += ("." + f"{f:03d}").rstrip("0")
    out.append(f"time {ms} {p} {sql} {java_time(t, f * 1000000)}")

for _ in range(1000):
    m = rng.choice([0, rng.randint(-1000, 1000), rng.randint(-2**31, 2**31 - 1)])
    a = abs(m)
    out.append(f"ym {m} {'-' if m < 0 else '+'}{a // 12}-{a % 12:02d}")
    ms = rng.choice([0, rng.randint(-10**9, 10**9), rng.randint(-10**15, 10**15)])
    a = abs(ms)
    td = dt.timedelta(milliseconds=a)
    h, rem = divmod(td.seconds, 3600)
    out.append(f"dt {ms} {'-' if ms < 0 else '+'}{td.days} {h:02d}:{rem // 60:02d}:"
               f"{rem % 60:02d}.{td.microseconds // 1000:03d}")

ZONES = ["Asia/Shanghai", "America/New_York", "Europe/Berlin", "Australia/Sydney",
         "Asia/Kolkata", "America/Sao_Paulo", "Europe/London", "Pacific/Auckland", "UTC"]
UTC = dt.timezone.utc
T0 = int(dt.datetime(1971, 1, 1, tzinfo=UTC).timestamp() * 1000)
T1 = int(dt.datetime(2037, 1, 1, tzinfo=UTC).timestamp() * 1000)
for zone in ZONES:
    z = ZoneInfo(zone)
    for _ in range(300):
        utc = rng.randint(T0, T1)
        off = dt.datetime.fromtimestamp(utc / 1000, tz=UTC).astimezone(z).utcoffset()
        out.append(f"tzoff {zone} {utc} {off // dt.timedelta(milliseconds=1)}")
    # wall-clock times: random ones, and every 10 minutes from two hours
    # before to two hours after each transition of 2000..2030 (gaps and
    # overlaps), found day by day, then half hour by half hour
    locals_ = [rng.randint(T0, T1) for _ in range(200)]

    def off_at(ms):
        return dt.datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(z).utcoffset() \
            // dt.timedelta(milliseconds=1)
    day = int(dt.datetime(2000, 1, 1, tzinfo=UTC).timestamp() * 1000)
    end = int(dt.datetime(2031, 1, 1, tzinfo=UTC).timestamp() * 1000)
    o = off_at(day)
    while day < end:
        nxt = day + 86400000
        o2 = off_at(nxt)
        if o2 != o:
            t = day
            while off_at(t + 1800000) == o:
                t += 1800000
            t += 1800000  # the first instant of the new offset
            lo, hi = t + min(o, o2) - 7200000, t + max(o, o2) + 7200000
            locals_.extend(range(lo, hi, 600000))
        o, day = o2, nxt
    for local in locals_:
        wall = EPOCH + dt.timedelta(milliseconds=local)
        inst = wall.replace(tzinfo=z, fold=0)
        utc = (inst.astimezone(UTC).replace(tzinfo=None) - EPOCH) // dt.timedelta(milliseconds=1)
        out.append(f"tzlocal {zone} {local} {utc}")

sys.stdout.write("\n".join(out) + "\n")
