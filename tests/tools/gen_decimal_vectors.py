#!/usr/bin/env python3
"""Prints DECIMAL test vectors: cases whose expected
results come from Python's decimal module, for tests/unit/test_decimal.c.

The model (written here, not taken from lib/decimal.c): an exact value
rounded ROUND_HALF_UP to the result scale, NULL ("OVERFLOW") when the
unscaled result has more than p digits; a quotient first rounded to 38
significant digits (ROUND_HALF_UP) and then to the scale; a remainder with
the dividend's sign. Result types by the derivation rules docs/SQL.md lists.
Seeded: the same cases every run; tests/unit/test_decimal.c runs
`python3 tests/tools/gen_decimal_vectors.py` and reads its output.

Line format (space separated):
  op p1 s1 a p2 s2 b p s expected     op in add sub mul div mod
  cmp p1 s1 a p2 s2 b -1|0|1
  parse p s text expected             text with '_' for a blank
  rescale p1 s1 a p s expected
  round|trunc p1 s1 a n p s expected
  floor|ceil p1 s1 a p s expected
  toint p1 s1 a expected|OVERFLOW:low64
  todouble p1 s1 a %.17g
  fromdouble hexfloat p s expected
"""
import decimal
import os
import random
import struct
import sys
from decimal import Decimal, ROUND_HALF_UP, ROUND_DOWN, ROUND_FLOOR, ROUND_CEILING

X = decimal.Context(prec=400, rounding=ROUND_HALF_UP, Emax=10**6, Emin=-10**6)
decimal.setcontext(X)


def adjust(p, s):
    if p <= 38:
        return p, s
    return 38, max(38 - (p - s), min(s, 6))


def t_add(a, b):
    s = max(a[1], b[1])
    return adjust(max(a[0] - a[1], b[0] - b[1]) + s + 1, s)


def t_mul(a, b):
    return adjust(a[0] + b[0] + 1, a[1] + b[1])


def t_div(a, b):
    s = max(6, a[1] + b[0] + 1)
    return adjust(a[0] - a[1] + b[1] + s, s)


def t_mod(a, b):
    s = max(a[1], b[1])
    return adjust(min(a[0] - a[1], b[0] - b[1]) + s, s)


def t_round(a, n):
    p, s = a
    if n >= s:
        return a
    if n < 0:
        return min(38, p - s + 1), 0
    return p - s + n + 1, n


def fix(v, p, s, rounding=ROUND_HALF_UP):
    """v into DECIMAL(p, s): its plain text, or OVERFLOW."""
    q = v.quantize(Decimal(1).scaleb(-s), rounding=rounding)
    if abs(q.scaleb(s)) >= 10 ** p:
        return "OVERFLOW"
    if q == 0:
        q = abs(q)
    return "{:f}".format(q)


def rand_val(rng, p, s):
    kind = rng.random()
    if kind < 0.4:
        nd = p
    elif kind < 0.8:
        nd = rng.randint(1, p)
    else:
        nd = rng.randint(1, min(p, 3))
    u = rng.randint(0, 10 ** nd - 1)
    if rng.random() < 0.1:
        u = 10 ** nd - 1
    if rng.random() < 0.5:
        u = -u
    return Decimal(u).scaleb(-s)


def rand_type(rng):
    r = rng.random()
    if r < 0.3:
        p = rng.randint(1, 12)
    elif r < 0.6:
        p = rng.randint(13, 30)
    else:
        p = rng.randint(31, 38)
    s = rng.randint(0, p) if rng.random() < 0.7 else rng.randint(0, min(p, 4))
    return p, s


def txt(v, s):
    return fix(v, 38, s) if abs(v.scaleb(s)) < 10 ** 38 else None


def quotient(a, b, p, s):
    q = decimal.Context(prec=38, rounding=ROUND_HALF_UP).divide(a, b)
    return fix(q, p, s)


def main():
    rng = random.Random(20261207)
    out = []
    for _ in range(1500):
        ta, tb = rand_type(rng), rand_type(rng)
        a, b = rand_val(rng, *ta), rand_val(rng, *tb)
        at, bt = fix(a, *ta), fix(b, *tb)
        for op in ("add", "sub", "mul", "div", "mod"):
            if op in ("add", "sub"):
                t = t_add(ta, tb)
                e = fix(a + b if op == "add" else a - b, *t)
            elif op == "mul":
                t = t_mul(ta, tb)
                e = fix(a * b, *t)
            elif op == "div":
                t = t_div(ta, tb)
                e = "DIVZERO" if b == 0 else quotient(a, b, *t)
            else:
                t = t_mod(ta, tb)
                e = "DIVZERO" if b == 0 else fix(a.remainder_near(b) if False else a % b, *t)
            out.append(f"{op} {ta[0]} {ta[1]} {at} {tb[0]} {tb[1]} {bt} {t[0]} {t[1]} {e}")
        out.append(f"cmp {ta[0]} {ta[1]} {at} {tb[0]} {tb[1]} {bt} {(a > b) - (a < b)}")
        # rescale into a random type
        tr = rand_type(rng)
        out.append(f"rescale {ta[0]} {ta[1]} {at} {tr[0]} {tr[1]} {fix(a, *tr)}")
        n = rng.randint(-5, ta[1] + 2)
        t = t_round(ta, n)
        r = a.quantize(Decimal(1).scaleb(-n), rounding=ROUND_HALF_UP)
        out.append(f"round {ta[0]} {ta[1]} {at} {n} {t[0]} {t[1]} {fix(r, *t)}")
        r = a.quantize(Decimal(1).scaleb(-n), rounding=ROUND_DOWN)
        out.append(f"trunc {ta[0]} {ta[1]} {at} {n} {t[0]} {t[1]} {fix(r, *t)}")
        t = (ta[0], 0)  # FLOOR / CEIL keep the precision
        out.append(f"floor {ta[0]} {ta[1]} {at} {t[0]} {t[1]} "
                   f"{fix(a.to_integral_value(rounding=ROUND_FLOOR), *t)}")
        out.append(f"ceil {ta[0]} {ta[1]} {at} {t[0]} {t[1]} "
                   f"{fix(a.to_integral_value(rounding=ROUND_CEILING), *t)}")
        i = int(a.to_integral_value(rounding=ROUND_DOWN))
        if -2 ** 63 <= i < 2 ** 63:
            out.append(f"toint {ta[0]} {ta[1]} {at} {i}")
        else:
            low = ((i % 2 ** 64) + 2 ** 63) % 2 ** 64 - 2 ** 63
            out.append(f"toint {ta[0]} {ta[1]} {at} OVERFLOW:{low}")
        if ta[0] <= 18:
            d = float(int(a.scaleb(ta[1]))) / float(10 ** ta[1])
        else:
            d = float(a)
        out.append(f"todouble {ta[0]} {ta[1]} {at} {d!r}")
    # text: blanks, signs, exponents, rounding at the last digit
    for _ in range(1500):
        t = rand_type(rng)
        v = rand_val(rng, max(1, min(38, t[0] + rng.randint(-2, 3))), max(0, t[1] + rng.randint(-3, 3)))
        form = rng.random()
        if form < 0.5:
            text = "{:f}".format(v)
        elif form < 0.75:
            text = "{:E}".format(v) if v != 0 else "0E+3"
        else:
            sgn, digits, exp = v.as_tuple()
            text = ("-" if sgn else "+") + "".join(map(str, digits)) + "e" + str(exp)
        if rng.random() < 0.2:
            text = "_" + text + "__"
        out.append(f"parse {t[0]} {t[1]} {text} {fix(Decimal(text.replace('_', '')), *t)}")
    # Flink 2.3's answers: short text into p <= 18 may leave digits out;
    # otherwise (p > 18, or more than 18 bytes) Java's BigDecimal text rules
    for p, sc, text, want in [(10, 2, ".", "0.00"), (10, 2, "e5", "0.00"), (10, 2, ".e1", "0.00"),
                          (10, 2, "1e", "1.00"), (10, 2, "e", "0.00"), (10, 2, "+e", "0.00"),
                          (10, 2, "-.", "0.00"), (10, 2, "1.e", "1.00"), (18, 2, "1e", "1.00"),
                          (10, 2, "_" * 15 + "1e", "1.00"), (10, 2, "_" * 18 + "1e", "SYNTAX"),
                          (20, 2, ".", "SYNTAX"), (20, 2, "1e", "SYNTAX"), (19, 2, "e5", "SYNTAX"),
                          (20, 2, "1.", "1.00"), (20, 2, ".5", "0.50"), (10, 2, "+.5", "0.50"),
                          (10, 2, "-.5", "-0.50"), (10, 2, "00012.50", "12.50"), (10, 2, "5e-3", "0.01"),
                          (10, 2, "-5e-3", "-0.01"), (10, 2, "-0.004", "0.00"),
                          (10, 2, "1234567890.123456789", "OVERFLOW"),
                          (18, 9, "12345678.1234567895", "12345678.123456790"),
                          (30, 0, "_123456789012345678901234.5_", "123456789012345678901235")]:
        out.append(f"parse {p} {sc} {text} {want}")
    for text in ("abc", "1.2.3", "-", "+", "_", "___", "1_2", "0x10", "1e+", "1E-", "--1",
                 "1,5", "1e5.5", "NaN", "1_.5"):
        out.append(f"parse 10 2 {text} SYNTAX")
        out.append(f"parse 30 2 {text} SYNTAX")
    # doubles: random bits, decimal-looking values, halves
    for _ in range(1000):
        r = rng.random()
        if r < 0.4:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if x != x or x in (float("inf"), float("-inf")):
                continue
            x = x if abs(x) < 1e40 and abs(x) > 1e-40 else rng.uniform(-1e6, 1e6)
        elif r < 0.8:
            x = float(f"{rng.randint(-10**9, 10**9)}e{rng.randint(-12, 6)}")
        else:
            x = rng.randint(-10**6, 10**6) + 0.5 * rng.choice([1, -1])
        t = rand_type(rng)
        # the shortest repr that reads back (Python's repr is that)
        e = fix(Decimal(repr(x)), *t)
        out.append(f"fromdouble {x.hex()} {t[0]} {t[1]} {e}")
    # quotients whose 38-digit rounding turns a 4 into a 5 (see decimal.h)
    for _ in range(300):
        # a (scale 38) / b (scale 0) into DECIMAL(38, 38): Q = floor(a * 10^39 / b)
        # = x - 1 (ending in 4) with remainder b - 5, so the digits after Q
        # are 9s then a 5 or more within 38 significant digits when
        # b >= 10^(39 - digits(x))
        nq = rng.randint(2, 37)
        b = rng.randrange(10 ** (39 - nq) + 1, 2 * 10 ** (39 - nq), 2)
        x = rng.randrange(10 ** (nq - 1), 5 * 10 ** (nq - 1)) // 10 * 10 + 5
        num = x * b - 5
        assert num % 10 == 0 and num // 10 < 10 ** 38
        a = Decimal(num // 10).scaleb(-38)
        tb = (len(str(b)), 0)
        assert t_div((38, 38), tb) == (38, 38)
        e = quotient(a, Decimal(b), 38, 38)
        assert e != fix(a / Decimal(b), 38, 38)  # the double rounding shows
        out.append(f"div 38 38 {fix(a, 38, 38)} {tb[0]} 0 {b} 38 38 {e}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
