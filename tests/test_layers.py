"""The layer rule (docs/ARCHITECTURE.md): each folder is a layer with a
library of its own, and a call from a layer to one above it -- or between
the JobManager, the TaskManager and the CLI -- fails the build, first at
compile time (the header is not on the layer's include path) and, declared
by hand, at link time (scripts/check-layer.sh)."""
import os
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT

pytestmark = pytest.mark.release_only

LAYERS = ["lib", "core", "lang", "runtime", "operators", "sql", "api"]
TOPS = ["jobmanager", "taskmanager", "cli"]


def make_var(name):
    r = subprocess.run(["make", "-s", "--no-print-directory", f"B={os.path.relpath(BUILD, ROOT)}",
                        f"print-{name}"], cwd=ROOT, capture_output=True, text=True, check=True)
    return r.stdout.strip()


def check_layer(layer, lib, below):
    """Run the build's own layer check on `lib` as layer `layer`."""
    main_o = os.path.join(BUILD, "obj", "layer_check_main.o")
    libs = " ".join(os.path.join(BUILD, "lib", f"libsl_{b}.a") for b in below)
    ext = (make_var("LIBS") + " " + make_var(f"EXTRA_LIBS_{layer}")).strip()
    return subprocess.run(["./scripts/check-layer.sh", "cc -pthread", layer, main_o, lib, libs,
                           ext], cwd=ROOT, capture_output=True, text=True)


def below(layer):
    return make_var(f"BELOW_{layer}").split()


def test_every_layer_links_against_the_layers_under_it_alone():
    for layer in LAYERS + TOPS:
        r = check_layer(layer, os.path.join(BUILD, "lib", f"libsl_{layer}.a"), below(layer))
        assert r.returncode == 0, r.stderr
    # the order itself: each layer sees exactly the ones before it
    for i, layer in enumerate(LAYERS):
        assert below(layer) == list(reversed(LAYERS[:i]))
    for top in TOPS:
        assert below(top) == list(reversed(LAYERS))


@pytest.mark.parametrize("layer,callee,symbol", [
    ("core", "sql", "sl_sql_session_new"),        # the core calling the SQL planner
    ("lang", "operators", "sl_ops_register_builtin"),
    ("operators", "taskmanager", "tm_collect_send"),  # an operator calling its host
    ("runtime", "operators", "sl_ops_register_builtin"),
    ("jobmanager", "taskmanager", "tm_collect_send"),  # a daemon calling the other
    ("cli", "jobmanager", "jm_rest_start"),
])
def test_a_call_upward_fails_to_link(tmp_path, layer, callee, symbol):
    # the symbol exists, one layer up (or beside): the call is real
    nm = subprocess.run(["nm", "--defined-only", os.path.join(BUILD, "lib", f"libsl_{callee}.a")],
                        capture_output=True, text=True, check=True).stdout
    assert f" T {symbol}\n" in nm
    src = tmp_path / "upward.c"
    src.write_text(f"void {symbol}(void);\nvoid upward_probe(void) {{ {symbol}(); }}\n")
    subprocess.run(["cc", "-c", str(src), "-o", str(tmp_path / "upward.o")], check=True)
    lib = tmp_path / f"libsl_{layer}.a"
    shutil.copy(os.path.join(BUILD, "lib", f"libsl_{layer}.a"), lib)
    subprocess.run(["ar", "rs", str(lib), str(tmp_path / "upward.o")], check=True,
                   capture_output=True)
    r = check_layer(layer, str(lib), below(layer))
    assert r.returncode == 1
    assert f"layer check: layer '{layer}' reaches outside the layers under it" in r.stderr
    assert f"  {symbol}  (called from upward.o" in r.stderr


@pytest.mark.parametrize("layer,header", [
    ("lib", "row.h"),          # core
    ("core", "expr.h"),        # lang
    ("core", "sql.h"),         # sql
    ("lang", "runtime.h"),     # runtime
    ("runtime", "agg.h"),      # operators
    ("operators", "sql.h"),
    ("operators", "tm.h"),     # the TaskManager
    ("sql", "datastream.h"),   # api
    ("jobmanager", "tm.h"),
    ("taskmanager", "jm.h"),
    ("cli", "jm.h"),
])
def test_a_header_from_above_is_not_on_the_include_path(tmp_path, layer, header):
    inc = make_var(f"INC_{layer}").split()
    src = tmp_path / "upward.c"
    src.write_text(f'#include "{header}"\n')
    r = subprocess.run(["cc", "-std=c11", "-fsyntax-only"] + inc + [str(src)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert f"{header}: No such file or directory" in r.stderr
    # and the same header is there for the layers it belongs to
    owner = next(d for d in LAYERS + TOPS if os.path.exists(os.path.join(ROOT, d, header)))
    ok = subprocess.run(["cc", "-std=c11", "-fsyntax-only", "-D_GNU_SOURCE"]
                        + make_var(f"INC_{'jobmanager' if owner == 'api' else owner}").split()
                        + make_var("PKG_CFLAGS").split() + [str(src)],
                        cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
