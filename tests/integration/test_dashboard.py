"""Browser tests of the dashboard (web/) against a live local cluster.

Debian's headless Chromium, driven by chromium-driver through Selenium, opens
the dashboard a real JobManager serves and checks what the pages render: the
overview's TaskManager and slot counts (and that they follow a TaskManager
joining), a job waiting for slots with its reason, the job graph of a job
whose sink is throttled (the upstream vertex backpressured and grey, the sink
busy and red, with the fill colour recomputed here from the vertex's own
figures by Flink's blend), a vertex's subtasks with their TaskManagers,
submitting and cancelling a job from the page, a failed job's exceptions, the
checkpoint count rising while the page is open, and no JavaScript errors from
the dashboard's scripts in the browser console over the whole run.

Expected values come from the jobs and clusters the tests build (slot counts,
reasons, TaskManager ids, colours), and where the page shows live figures
they are compared with the REST API at the same moment. Nothing sleeps: every
wait is on a condition (WebDriverWait in the page, wait_for on REST).

One browser serves the whole module (a window of 1280x900, hard page-load,
script and command timeouts); each test gets its own cluster from conftest.
After every test the browser leaves the page (so its refresh loop stops
before the cluster goes away) and hands its console log to the last test.
Screenshots go to $SLUICE_ARTIFACTS (default <build>/test-reports/dashboard),
and the backpressured job graph also to /tmp/sluice-dashboard.png.
"""
import json
import os
import re
import shutil

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.remote_connection import RemoteConnection
from selenium.webdriver.support.ui import WebDriverWait

from conftest import BUILD, wait_for

pytestmark = pytest.mark.release_only

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = os.environ.get("SLUICE_ARTIFACTS", os.path.join(BUILD, "test-reports", "dashboard"))
SCREENSHOT = "/tmp/sluice-dashboard.png"

PAGE_LOAD_TIMEOUT = 20   # s, driver.get
SCRIPT_TIMEOUT = 10      # s, execute_script
COMMAND_TIMEOUT = 60     # s, any WebDriver command (a hung browser fails, never hangs)
UI_TIMEOUT = 15          # s, waiting for the page to show something

# Browser console entries from every test, gathered for the console test.
CONSOLE = []


# --------------------------------------------------------------------------
# browser fixtures and helpers

@pytest.fixture(scope="module")
def driver():
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        assert os.access(path, os.X_OK), f"{path} missing: run scripts/install-deps.sh ({pkg})"
    RemoteConnection.set_timeout(COMMAND_TIMEOUT)
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--lang=en-US"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        d.set_window_size(1280, 900)
        d.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
        d.set_script_timeout(SCRIPT_TIMEOUT)
        yield d
    finally:
        d.quit()


@pytest.fixture
def browser(driver):
    """The module's browser for one test. List it after the cluster fixture
    so it is torn down first: the page is left before the cluster stops."""
    yield driver
    try:
        driver.get("about:blank")
    finally:
        CONSOLE.extend(driver.get_log("browser"))


def wait_ui(driver, cond, what, timeout=UI_TIMEOUT):
    """Waits until cond(driver) is truthy and returns it; a stale element
    (the page replaced it mid-check) just means "look again"."""
    return WebDriverWait(driver, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(
        cond, message=f"page never showed {what}")


# Chromium aborts requests in flight when the host's network configuration
# changes (other work on the machine adding or removing interfaces, e.g.
# container bridges); that is the host's doing, not the dashboard's.
NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def open_page(driver, cluster, route, page, attempts=3):
    """Loads the dashboard at #<route> and waits until the router mounted
    `page`. A load is retried only when Chromium reports that the host's
    network changed under it (a script of the page then fails to load)."""
    for attempt in range(attempts):
        if attempt:
            driver.get("about:blank")  # same URL again would only move the hash
        driver.get(f"{cluster.url}/#{route}")
        try:
            wait_ui(driver, lambda d: d.execute_script("return document.body.dataset.page") == page,
                    f"page {page}")
            return
        except TimeoutException:
            entries = driver.get_log("browser")
            CONSOLE.extend(entries)
            if attempt == attempts - 1 or not any(NETWORK_CHANGED in e.get("message", "")
                                                  for e in entries):
                raise


def css(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def attr_of(driver, selector, name):
    """Attribute `name` of the first element matching selector, or None."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return e ? e.getAttribute(arguments[1]) : null;", selector, name)


def text_of(driver, selector):
    """textContent of the first element matching selector (None when absent);
    textContent, not .text, so hidden parts and SVG text read the same."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return e ? e.textContent : null;", selector)


def shown(driver, selector):
    els = css(driver, selector)
    return bool(els) and els[0].is_displayed()


def screenshot(driver, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name + ".png")
    assert driver.save_screenshot(path), f"could not write {path}"
    return path


def vertex_ids(cluster, jid):
    """{vertex name: vertex id} from GET /jobs/<jid>."""
    return {v["name"]: v["id"] for v in cluster.job(jid)["vertices"]}


# --------------------------------------------------------------------------
# Flink's vertex colour, computed here independently of web/js/colors.js

IDLE, BUSY, BACKPRESSURED = "#5db1ff", "#ee6464", "#888888"


def rgb(hexstr):
    return tuple(int(hexstr[i:i + 2], 16) for i in (1, 3, 5))


def expected_fill(busy, backpressured):
    """Idle blue toward busy red by busy/1000, then toward grey by
    backpressured/1000, per channel (unrounded; the page may round each step)."""
    idle, red, grey = rgb(IDLE), rgb(BUSY), rgb(BACKPRESSURED)
    mid = [i + (r - i) * busy / 1000 for i, r in zip(idle, red)]
    return [m + (g - m) * backpressured / 1000 for m, g in zip(mid, grey)]


def close_colour(got, want):
    return all(abs(g - w) <= 1 for g, w in zip(got, want))


# One snapshot of every graph vertex, read in a single script so all figures
# come from the same refresh of the page.
GRAPH_SNAPSHOT = """
return Array.from(document.querySelectorAll('#job-graph g.vertex')).map((g) => {
  const rect = g.querySelector('rect.vertex-box');
  return {
    id: g.getAttribute('data-vertex-id'),
    busy: g.getAttribute('data-busy'),
    bp: g.getAttribute('data-backpressured'),
    level: g.getAttribute('data-bp-level'),
    fill: g.getAttribute('data-fill'),
    rendered: rect ? getComputedStyle(rect).fill : null,
    badge: (g.querySelector('.bp-badge text') || {}).textContent || null,
    table: (document.querySelector(
      `.vertex-row[data-vertex-id="${CSS.escape(g.getAttribute('data-vertex-id'))}"] .bp-pill`)
      || {getAttribute: () => null}).getAttribute('data-bp-level'),
  };
});
"""


def css_rgb(value):
    """'rgb(93, 177, 255)' -> (93, 177, 255)."""
    m = re.fullmatch(r"rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*[\d.]+)?\)", value or "")
    assert m, f"not a CSS colour: {value!r}"
    return tuple(int(x) for x in m.groups())


# --------------------------------------------------------------------------
# jobs

def endless_job(name="endless", p=1, rate=1000):
    return {"name": name, "parallelism": p,
            "vertices": [{"id": "gen", "type": "datagen",
                          "schema": [{"name": "x", "type": "BIGINT"}],
                          "config": {"rows-per-second": str(rate)}},
                         {"id": "sink", "type": "blackhole"}],
            "edges": [{"from": "gen", "to": "sink", "strategy": "rebalance"}]}


def throttled_job():
    """A fast source feeding a sink throttled to 2000 rows/s through a
    filter; rebalance edges keep all three as separate vertices."""
    return {"name": "throttled sink", "parallelism": 1,
            "vertices": [{"id": "gen", "type": "datagen",
                          "schema": [{"name": "x", "type": "BIGINT"}],
                          "config": {"rows-per-second": "2000000"}},
                         {"id": "calc", "type": "calc", "config": {"filter": "x IS NOT NULL"}},
                         {"id": "sink", "type": "blackhole",
                          "config": {"sink.rows-per-second": "2000"}}],
            "edges": [{"from": "gen", "to": "calc", "strategy": "rebalance"},
                      {"from": "calc", "to": "sink", "strategy": "rebalance"}]}


DIVIDE_EXPR = "10 / x"


def divide_job():
    """Divides by a sequence that starts at 0: fails on its first row."""
    return {"name": "divide", "vertices": [
        {"id": "g", "type": "datagen", "schema": [{"name": "x", "type": "INT"}],
         "config": {"fields.x.kind": "sequence", "fields.x.start": "0", "fields.x.end": "10"}},
        {"id": "c", "type": "calc", "config": {"projection": [DIVIDE_EXPR + " AS y"]}},
        {"id": "s", "type": "blackhole"}],
        "edges": [{"from": "g", "to": "c"}, {"from": "c", "to": "s"}]}


# --------------------------------------------------------------------------
# tests

def overview_numbers(d):
    return {k: attr_of(d, f'#overview [data-metric="{k}"]', "data-value")
            for k in ("taskmanagers", "slots-total", "slots-available")}


def test_overview_counts_taskmanagers_and_slots(cluster, browser):
    d = browser
    slots = [2, 1]
    for n in slots:
        cluster.add_tm(slots=n)
    open_page(d, cluster, "/overview", "overview")
    want = {"taskmanagers": "2", "slots-total": str(sum(slots)), "slots-available": str(sum(slots))}
    wait_ui(d, lambda d: overview_numbers(d) == want, f"overview {want}")
    assert text_of(d, '#overview [data-metric="taskmanagers"]') == "2"
    assert text_of(d, '#overview [data-metric="slots-total"]') == "3"
    assert attr_of(d, '#nav a[data-nav="overview"]', "class") == "active"
    page = css(d, "#overview")[0]

    # a third TaskManager joins: the open page follows without a reload
    slots.append(4)
    cluster.add_tm(slots=4)
    want = {"taskmanagers": "3", "slots-total": str(sum(slots)), "slots-available": str(sum(slots))}
    wait_ui(d, lambda d: overview_numbers(d) == want, f"overview {want}")
    assert page.is_displayed()  # still the same element: patched in place, not reloaded
    screenshot(d, "overview")

    # the TaskManagers page lists each with its own slots
    css(d, '#nav a[data-nav="taskmanagers"]')[0].click()
    rows = lambda d: sorted((r.get_attribute("data-tm-id"), r.get_attribute("data-slots-total"),
                             r.get_attribute("data-slots-free")) for r in css(d, ".tm-row"))
    want_rows = [("tm-0", "2", "2"), ("tm-1", "1", "1"), ("tm-2", "4", "4")]
    wait_ui(d, lambda d: rows(d) == want_rows, f"TaskManager rows {want_rows}")
    screenshot(d, "taskmanagers")


def test_job_waiting_for_slots_shows_its_reason(cluster, browser):
    d = browser
    cluster.add_tm(slots=1)
    p, free = 3, 1
    job = endless_job("too wide", p=p)
    jid = cluster.submit(job)
    reason = f"waiting for {p} slots, {free} free"
    open_page(d, cluster, "/overview", "overview")
    item = f'#waiting-jobs .waiting-job[data-jid="{jid}"]'
    wait_ui(d, lambda d: text_of(d, item + " .state-reason") == reason, f"reason {reason!r}")
    assert shown(d, "#waiting-jobs")
    assert attr_of(d, item + " [data-job-state]", "data-job-state") == "CREATED"
    assert text_of(d, item + " a.job-name") == "too wide"
    assert text_of(d, f'.job-row[data-jid="{jid}"] .state-reason') == reason
    assert cluster.get(f"/sluice/jobs/{jid}")["state-reason"] == reason  # the REST API says the same
    # Flink's /overview counts the waiting job as running; the page tells them apart
    assert cluster.get("/overview")["jobs-running"] == 1
    counts = lambda d: {k: attr_of(d, f'#overview [data-metric="{k}"]', "data-value")
                        for k in ("jobs-running", "jobs-scheduled")}
    wait_ui(d, lambda d: counts(d) == {"jobs-running": "0", "jobs-scheduled": "1"}, "running 0, scheduled 1")
    screenshot(d, "overview-waiting")

    # the job page's header carries it too, with the slots it needs
    d.find_element(By.CSS_SELECTOR, item + " a.job-name").click()
    wait_ui(d, lambda d: text_of(d, "#job-state-reason") == reason, "job page reason")
    assert shown(d, "#job-state-reason")
    assert attr_of(d, "#job", "data-jid") == jid
    assert text_of(d, '[data-field="slots-needed"]') == str(p)
    # none of its vertices runs: no backpressure level is claimed for them, "OK" least of all
    badges = lambda d: [b.get_attribute("class") for b in css(d, "#job-graph g.vertex .bp-badge")]
    wait_ui(d, lambda d: len(badges(d)) == 2, "the two vertices' badges")
    assert badges(d) == ["bp-badge bp-none"] * 2, badges(d)
    assert [b.text for b in css(d, "#job-graph g.vertex .bp-badge")] == ["N/A", "N/A"]


def test_backpressured_job_graph_colours(cluster, browser):
    d = browser
    # default 32 kB buffers: a writer waits ~0.7 s for each at the sink's
    # pace, longer than a heartbeat, so this also checks that a wait still in
    # progress is reported as backpressure
    cluster.add_tm(slots=1)
    jid = cluster.submit(throttled_job())
    cluster.wait_state(jid, "RUNNING")
    ids = vertex_ids(cluster, jid)
    assert sorted(ids) == ["calc", "gen", "sink"]
    name_of = {v: k for k, v in ids.items()}

    open_page(d, cluster, f"/jobs/{jid}", "job")
    wait_ui(d, lambda d: len(css(d, "#job-graph g.vertex")) == 3, "three vertices")
    edges = wait_ui(d, lambda d: sorted(
        (name_of.get(e.get_attribute("data-from")), name_of.get(e.get_attribute("data-to")),
         e.get_attribute("data-ship-strategy")) for e in css(d, "#job-graph path.edge")) or None,
        "edges")
    assert edges == [("calc", "sink", "REBALANCE"), ("gen", "calc", "REBALANCE")]

    def settled(d):
        snap = {name_of[v["id"]]: v for v in d.execute_script(GRAPH_SNAPSHOT)}
        up, sink = snap.get("calc"), snap.get("sink")
        if not (up and sink and up["bp"] and sink["busy"]):
            return None
        if (up["level"] == "high" and int(up["bp"]) > 500
                and int(sink["busy"]) > 500 and sink["level"] != "high"):
            return snap
        return None

    snap = wait_ui(d, settled, "calc backpressured (high, >500) and the sink busy (>500)", timeout=30)
    for name, v in snap.items():
        busy, bp = int(v["busy"]), int(v["bp"])
        assert 0 <= busy <= 1000 and 0 <= bp <= 1000, (name, v)
        want = expected_fill(busy, bp)
        assert re.fullmatch(r"#[0-9a-f]{6}", v["fill"]), (name, v)
        assert close_colour(rgb(v["fill"]), want), (name, v, want)
        assert close_colour(css_rgb(v["rendered"]), want), (name, v, want)
    assert snap["calc"]["badge"] == "HIGH"
    assert snap["sink"]["badge"] in ("OK", "LOW")
    # the sink is red-dominant, the backpressured upstream greyer than pure busy
    sink_rgb, up_rgb = rgb(snap["sink"]["fill"]), rgb(snap["calc"]["fill"])
    assert sink_rgb[0] > sink_rgb[2] and abs(up_rgb[0] - 0x88) < abs(sink_rgb[0] - 0x88)

    # the vertex table agrees with the graph on the level, and so does the REST API
    assert snap["calc"]["table"] == "high" and snap["sink"]["table"] == snap["sink"]["level"]
    wait_for(lambda: cluster.get(f"/jobs/{jid}/vertices/{ids['calc']}/backpressure")
             ["backpressure-level"] == "high", timeout=10, what="REST level high for calc")
    assert cluster.get(f"/jobs/{jid}/vertices/{ids['sink']}/backpressure")["backpressure-level"] != "high"

    path = screenshot(d, "job-graph-backpressure")
    shutil.copyfile(path, SCREENSHOT)


def test_clicking_a_vertex_lists_its_subtasks_and_taskmanagers(cluster, browser):
    d = browser
    cluster.add_tm(slots=1)
    cluster.add_tm(slots=1)
    job = endless_job("two wide", p=2, rate=200)
    job["vertices"][0]["parallelism"] = 1
    jid = cluster.submit(job)
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: sum(v["tasks"]["RUNNING"] for v in cluster.job(jid)["vertices"]) == 3,
             what="3 tasks running")
    vid = vertex_ids(cluster, jid)["sink"]

    open_page(d, cluster, f"/jobs/{jid}", "job")
    vertex = f'#job-graph g.vertex[data-vertex-id="{vid}"]'
    wait_ui(d, lambda d: css(d, vertex), "the sink vertex")
    assert not shown(d, "#subtasks")
    css(d, vertex)[0].click()

    rows = lambda d: sorted((r.get_attribute("data-subtask"), r.find_element(By.CSS_SELECTOR, "td.tm").text)
                            for r in css(d, "#subtasks .subtask-row"))
    got = wait_ui(d, lambda d: len(rows(d)) == 2 and rows(d), "two subtask rows")
    assert shown(d, "#subtasks") and attr_of(d, "#subtasks", "data-vertex-id") == vid
    assert attr_of(d, vertex, "aria-pressed") == "true"
    assert d.current_url.endswith(f"#/jobs/{jid}/graph/{vid}")
    rest = cluster.get(f"/sluice/jobs/{jid}/vertices/{vid}/subtasks")["subtasks"]
    assert got == sorted((str(s["subtask"]), s["taskmanager-id"]) for s in rest)
    # two subtasks on two TaskManagers of one slot each: one on each
    assert sorted(tm for _, tm in got) == ["tm-0", "tm-1"]
    screenshot(d, "job-graph-subtasks")

    css(d, vertex)[0].click()  # again: closes
    wait_ui(d, lambda d: not shown(d, "#subtasks"), "subtasks closed")
    assert attr_of(d, vertex, "aria-pressed") == "false"


def test_submit_then_cancel_from_the_page(cluster, browser):
    d = browser
    cluster.add_tm(slots=2)
    job = endless_job("from the browser", p=1, rate=500)
    open_page(d, cluster, "/submit", "submit")
    d.find_element(By.ID, "submit-json").send_keys(json.dumps(job))
    d.find_element(By.ID, "submit-parallelism").send_keys("2")
    d.find_element(By.ID, "submit-button").click()
    jid = wait_ui(d, lambda d: attr_of(d, "#submit-result", "data-jid"), "a job id")
    assert re.fullmatch(r"[0-9a-f]{32}", jid)
    assert text_of(d, "#submit-result") == f"Job has been submitted with JobID {jid}"
    j = cluster.job(jid)
    assert j["name"] == "from the browser"
    assert [v["parallelism"] for v in j["vertices"]] == [2, 2]  # the form's parallelism won
    screenshot(d, "submit")

    d.find_element(By.ID, "submitted-job-link").click()
    wait_ui(d, lambda d: attr_of(d, "#job", "data-jid") == jid
            and attr_of(d, "#job", "data-state") == "RUNNING", "the job running")
    assert not shown(d, "#btn-cancel-confirm")
    d.find_element(By.ID, "btn-cancel").click()
    wait_ui(d, lambda d: shown(d, "#btn-cancel-confirm"), "the confirmation")
    assert cluster.job(jid)["state"] == "RUNNING"  # one click alone cancels nothing
    d.find_element(By.ID, "btn-cancel-confirm").click()
    cluster.wait_state(jid, "CANCELED", timeout=20)
    wait_ui(d, lambda d: attr_of(d, "#job", "data-state") == "CANCELED"
            and attr_of(d, "#job-state", "data-job-state") == "CANCELED", "state CANCELED")
    assert attr_of(d, "#job-action-status", "data-op-state") == "completed"
    assert not shown(d, "#job-actions")  # nothing left to do with a cancelled job


def test_exceptions_tab_of_a_failed_job(cluster, browser):
    d = browser
    cluster.add_tm(slots=1)
    jid = cluster.submit(divide_job())
    assert cluster.wait_state(jid, ["FAILED", "FINISHED"])["state"] == "FAILED"

    open_page(d, cluster, f"/jobs/{jid}/exceptions", "job")
    wait_ui(d, lambda d: attr_of(d, "#exception-list", "data-count") == "1", "one exception")
    assert attr_of(d, "#job", "data-tab") == "exceptions"
    msg = f"division by zero at position {DIVIDE_EXPR.index('/') + 1}"
    name = text_of(d, "#exception-list details.exception .ex-name")
    assert msg in name and "vertex 'c'" in name
    assert text_of(d, "#exception-list .ex-task") == "g -> c -> s (1/1)"
    assert text_of(d, "#exception-list .ex-location") == "@ tm-0"
    trace = css(d, "#exception-list details.exception pre.stacktrace")[0]
    assert trace.is_displayed() and msg in trace.text  # the newest entry starts open
    rest = cluster.get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"]
    assert [(e["exceptionName"], e["stacktrace"]) for e in rest] == [(name, trace.text)]
    assert msg in text_of(d, "#job-state-reason")
    screenshot(d, "job-exceptions")


def test_checkpoint_count_rises_while_the_page_is_open(make_cluster, browser):
    d = browser
    c = make_cluster(jm_conf={"execution.checkpointing.interval": "500 ms"})
    c.add_tm(slots=1)
    jid = c.submit(endless_job("checkpointed", rate=1000))
    c.wait_state(jid, "RUNNING")
    assert c.get(f"/jobs/{jid}/checkpoints/config")["interval"] == 500

    open_page(d, c, f"/jobs/{jid}/checkpoints", "job")
    count = wait_ui(d, lambda d: (css(d, "#checkpoint-count[data-count]") or [None])[0], "the count")
    first = int(count.get_attribute("data-count"))
    # the JobManager completes checkpoints
    wait_for(lambda: c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= first + 2,
             timeout=10, what="two more completed checkpoints in REST")
    # ... and the open page follows: same element, no reload
    wait_ui(d, lambda d: int(count.get_attribute("data-count")) >= first + 2, "the count rising")
    shown_count = int(count.get_attribute("data-count"))
    assert c.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= shown_count
    wait_ui(d, lambda d: css(d, '#checkpoint-history .checkpoint-row[data-status="COMPLETED"]'),
            "a completed checkpoint in the history")
    # its alignment comes from Sluice's own endpoint (Flink's history has no such field)
    row = css(d, '#checkpoint-history .checkpoint-row[data-status="COMPLETED"]')[0]
    cpid = int(row.get_attribute("data-checkpoint-id"))
    own = {x["id"]: x for x in c.get(f"/sluice/jobs/{jid}/checkpoints")["history"]}
    ms = own[cpid]["alignment_duration"]
    want = f"{ms} ms" if ms < 1000 else f"{ms / 1000:.2f} s"  # the page's format, below 10 s
    assert row.find_elements(By.CSS_SELECTOR, "td.align")[1].text == want
    # what it wrote anew is shown next to its state size
    rest = [h for h in c.get(f"/jobs/{jid}/checkpoints")["history"] if h["id"] == cpid]
    cell = row.find_element(By.CSS_SELECTOR, "td.checkpointed-size").text
    assert rest and cell and cell != "\u2014" and re.search(r"\d", cell), (cell, rest)
    screenshot(d, "job-checkpoints")


def dashboard_errors(entries):
    """SEVERE console entries caused by the dashboard's own files: errors its
    scripts raise or log, and its scripts, styles or page failing to load.
    Failed REST calls are not counted (a refresh may race a cluster stopping,
    and optional endpoints may answer 404 by design), nor loads the host's
    network changes aborted."""
    own = re.compile(r"^https?://127\.0\.0\.1:\d+/(?:[?#]|index\.html|js/|css/|favicon\.svg|\s)")
    bad = []
    for e in entries:
        if e.get("level") != "SEVERE":
            continue
        msg = e.get("message", "")
        if NETWORK_CHANGED in msg:
            continue
        if e.get("source") in ("javascript", "console-api") and own.match(msg):
            bad.append(msg)
        elif e.get("source") == "network" and own.match(msg):
            bad.append(msg)
    return bad



def test_regular_join_shows_its_warning_and_growing_state(cluster, browser, workdir):
    """The seed's failure made visible: a regular join's job page says its
    state is unbounded (and which setting bounds it) and its live state
    entries climb."""
    from test_joins import ONE_SOURCE, join_vertex
    from test_sql import job_ids, run_sql
    d = browser
    cluster.add_tm(slots=1)
    r = run_sql(cluster, workdir, "regular.sql", ONE_SOURCE + """
INSERT INTO sink SELECT o.order_id, o.amount, p.pay_id FROM orders o JOIN payments p
  ON o.order_id = p.order_id;
""")
    assert r.returncode == 0, r.stdout + r.stderr
    jid = job_ids(r.stdout)[0]
    cluster.wait_state(jid, "RUNNING")
    vid = join_vertex(cluster, jid, "join")
    open_page(d, cluster, f"/jobs/{jid}", "job")
    wait_ui(d, lambda d: shown(d, "#job-warnings"), "the unbounded-state warning")
    item = '#job-warnings li[data-setting="table.exec.state.ttl"]'
    assert "regular join 'join' keeps state per key (order_id)" in text_of(d, item)
    cell = f'#vertices-table tr[data-vertex-id="{vid}"] td.state-entries'
    entries = lambda d: int(attr_of(d, cell, "data-state-entries") or 0)
    first = wait_ui(d, lambda d: entries(d) >= 1000 and entries(d), "state entries shown")
    wait_ui(d, lambda d: entries(d) >= first + 2000, "state entries growing")
    assert text_of(d, f'#vertices-table tr[data-vertex-id="{vid}"] td.state-bytes').endswith("iB")
    screenshot(d, "job-unbounded-state")
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")

def test_no_javascript_errors_in_the_console(cluster, browser):
    """Visits every page and tab (with a running and a failed job), then
    checks the console of the whole module's run."""
    d = browser
    cluster.add_tm(slots=2)
    running = cluster.submit(endless_job("console check", rate=200))
    failed = cluster.submit(divide_job())
    cluster.wait_state(running, "RUNNING")
    cluster.wait_state(failed, "FAILED")
    vid = vertex_ids(cluster, running)["sink"]

    open_page(d, cluster, "/overview", "overview")
    wait_ui(d, lambda d: css(d, f'.job-row[data-jid="{running}"]'), "the running job")
    css(d, '#nav a[data-nav="jobs"]')[0].click()
    wait_ui(d, lambda d: css(d, f'#completed-jobs .job-row[data-jid="{failed}"]'), "the failed job")
    screenshot(d, "jobs")
    css(d, f'#running-jobs .job-row[data-jid="{running}"] a.job-name')[0].click()
    wait_ui(d, lambda d: css(d, f'#job-graph g.vertex[data-vertex-id="{vid}"][data-busy]'), "graph")
    css(d, f'#job-graph g.vertex[data-vertex-id="{vid}"]')[0].click()
    wait_ui(d, lambda d: css(d, "#subtasks .subtask-row"), "subtasks")
    css(d, '#job-tabs a[data-tab="checkpoints"]')[0].click()
    wait_ui(d, lambda d: css(d, "#checkpoint-count[data-count]"), "checkpoint counts")
    css(d, '#job-tabs a[data-tab="exceptions"]')[0].click()
    wait_ui(d, lambda d: attr_of(d, "#exception-list", "data-count") == "0", "no exceptions")
    css(d, '#nav a[data-nav="taskmanagers"]')[0].click()
    wait_ui(d, lambda d: css(d, '.tm-row[data-tm-id="tm-0"] .allocation'), "allocations")
    css(d, '#nav a[data-nav="submit"]')[0].click()
    wait_ui(d, lambda d: css(d, "#submit-json"), "the submit form")
    d.find_element(By.ID, "submit-json").send_keys('{"vertices": [}')
    d.find_element(By.ID, "submit-button").click()
    wait_ui(d, lambda d: (text_of(d, "#submit [data-role=errors]") or "").startswith(
        "The job file is not valid JSON"), "a JSON error")
    open_page(d, cluster, "/no/such/page", "notfound")
    open_page(d, cluster, f"/jobs/{failed}/graph", "job")
    wait_ui(d, lambda d: len(css(d, "#job-graph g.vertex[data-busy]")) == 1, "failed job graph")

    # the log really reaches us: a probe logged from the page comes back
    d.execute_script("console.error('sluice-console-probe')")
    entries = CONSOLE + d.get_log("browser")
    assert any("sluice-console-probe" in e.get("message", "") and e.get("level") == "SEVERE"
               for e in entries), entries[-5:]
    assert dashboard_errors(entries) == []


def test_upload_and_run_a_c_job_from_the_page(cluster, browser, workdir):
    """features.web-submit: the submit page uploads the SilenceDetector's
    shared object and runs it with its program arguments; the job's GAPs
    are those test_datastream's replay works out."""
    from test_datastream import JOB as SILENCE, ms, read, replay
    d = browser
    cluster.add_tm(slots=2)
    assert cluster.get("/config")["features"]["web-submit"] is True
    out = os.path.join(workdir, "out")
    open_page(d, cluster, "/submit", "submit")
    wait_ui(d, lambda d: shown(d, "#jar-form"), "the C job form")
    d.find_element(By.ID, "jar-file").send_keys(SILENCE)
    d.find_element(By.ID, "jar-args").send_keys(f"{out} 3000")
    d.find_element(By.ID, "jar-button").click()
    jid = wait_ui(d, lambda d: attr_of(d, "#jar-result", "data-jid"), "a job id")
    assert text_of(d, "#jar-result") == f"Job has been submitted with JobID {jid}"
    assert [f["name"] for f in cluster.get("/jars")["files"]] == ["silence.so"]
    job = cluster.wait_state(jid, {"FINISHED", "FAILED"}, timeout=120)
    assert job["state"] == "FINISHED", cluster.get(f"/jobs/{jid}/exceptions")
    gaps, _, _ = replay(3000)
    assert sorted((g["sensor"], ms(g["deadline"])) for g in read(out, "gaps")) == sorted(gaps)


def test_flinks_routes_open_the_same_pages(cluster, browser):
    """Links and bookmarks made for Flink's UI: #/job/running/<id>/<tab>,
    #/job/completed/<id>/<tab>, #/job/<id>/<tab>, #/job/running, #/task-manager/<id>/..."""
    d = browser
    cluster.add_tm(slots=1)
    jid = cluster.submit(endless_job("flink routes", rate=200))
    cluster.wait_state(jid, "RUNNING")
    for route, tab in ((f"/job/running/{jid}/overview", "graph"),
                       (f"/job/completed/{jid}/exceptions", "exceptions"),
                       (f"/job/{jid}/checkpoints", "checkpoints"),
                       (f"/job/running/{jid}", "graph")):
        open_page(d, cluster, route, "job")
        wait_ui(d, lambda d: attr_of(d, "#job", "data-jid") == jid and attr_of(d, "#job", "data-tab") == tab,
                f"job {jid} on its {tab} tab from #{route}")
        wait_ui(d, lambda d: attr_of(d, "#job", "data-state") == "RUNNING", "the job's state")
    screenshot(d, "flink-route-job-checkpoints")
    for route in ("/job/running", "/job/completed"):
        open_page(d, cluster, route, "jobs")
    open_page(d, cluster, "/task-manager/tm-0", "taskmanagers")
    wait_ui(d, lambda d: css(d, '.tm-row.highlight[data-tm-id="tm-0"]'), "the TaskManager's row, highlighted")
    screenshot(d, "flink-route-task-manager")
    open_page(d, cluster, "/task-manager/tm-0/metrics", "taskmanager")
    wait_ui(d, lambda d: attr_of(d, "#process", "data-tab") == "metrics", "the TaskManager's metrics tab")


def test_jobmanager_and_taskmanager_pages_show_logs_stdout_and_threads(cluster, browser):
    """#/jobmanager/<tab> and #/taskmanagers/<id>/<tab> (and Flink's #/job-manager/...,
    #/task-manager/<id>/...): the daemons' own log and stdout files, their threads
    (the names /proc shows), the JobManager's configuration and environment."""
    d = browser
    cluster.add_tm(slots=1)
    open_page(d, cluster, "/jobmanager/log", "jobmanager")
    wait_ui(d, lambda d: "REST port" in text_of(d, "#process-text"), "the JobManager's log")
    with open(cluster.jm.log_path) as f:
        assert f.read().startswith(text_of(d, "#process-text")[:200])
    screenshot(d, "jobmanager-log")
    for route, tab in (("/jobmanager/thread-dump", "thread-dump"), ("/job-manager/config", "config"),
                       ("/jobmanager/environment", "environment"), ("/job-manager/stdout", "stdout")):
        open_page(d, cluster, route, "jobmanager")
        wait_ui(d, lambda d: attr_of(d, "#process", "data-tab") == tab, f"the {tab} tab")
    open_page(d, cluster, "/jobmanager/thread-dump", "jobmanager")
    pid = cluster.jm.proc.pid
    names = {open(f"/proc/{pid}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{pid}/task")}
    got = wait_ui(d, lambda d: {e.get_attribute("data-thread-name") for e in css(d, "#thread-dump pre.thread")},
                  "the thread dump")
    assert got == names, (got, names)
    screenshot(d, "jobmanager-thread-dump")
    open_page(d, cluster, "/jobmanager/config", "jobmanager")
    wait_ui(d, lambda d: css(d, '#process-config tr[data-key="rest.port"]'), "the configuration")
    open_page(d, cluster, "/jobmanager/environment", "jobmanager")
    wait_ui(d, lambda d: text_of(d, '#process-environment [data-field="arch"]') == os.uname().machine,
            "the environment")

    # a TaskManager: from its row in the list, then Flink's route
    open_page(d, cluster, "/taskmanagers", "taskmanagers")
    wait_ui(d, lambda d: css(d, '.tm-row[data-tm-id="tm-0"] a.tm-link'), "the TaskManager's link")
    css(d, '.tm-row[data-tm-id="tm-0"] a.tm-link')[0].click()
    wait_ui(d, lambda d: d.execute_script("return document.body.dataset.page") == "taskmanager", "its page")
    wait_ui(d, lambda d: "registered at the JobManager as tm-0" in text_of(d, "#process-text"),
            "the TaskManager's log")
    screenshot(d, "taskmanager-log")
    open_page(d, cluster, "/task-manager/tm-0/thread-dump", "taskmanager")
    pid = cluster.tms[0].proc.pid
    names = {open(f"/proc/{pid}/task/{t}/comm").read().strip() for t in os.listdir(f"/proc/{pid}/task")}
    got = wait_ui(d, lambda d: {e.get_attribute("data-thread-name") for e in css(d, "#thread-dump pre.thread")},
                  "the TaskManager's thread dump")
    assert got == names, (got, names)
    screenshot(d, "taskmanager-thread-dump")
    open_page(d, cluster, "/taskmanagers/tm-0/stdout", "taskmanager")
    wait_ui(d, lambda d: attr_of(d, "#process", "data-tab") == "stdout"
            and attr_of(d, "#process-text", "data-bytes") is not None, "the stdout tab")
    # a TaskManager that is not there: the server's reason, shown
    open_page(d, cluster, "/taskmanagers/nope/log", "taskmanager")
    wait_ui(d, lambda d: "TaskManager nope not found" in text_of(d, '#process [data-role="errors"]'),
            "the error")


def metric_cards(d):
    """{metric id: (shown value, data-value, points in its chart)} of the metrics tab."""
    out = {}
    for card in css(d, "#metric-cards .metric-card"):
        val = card.find_element(By.CSS_SELECTOR, ".metric-value")
        chart = card.find_element(By.CSS_SELECTOR, "svg.metric-chart")
        out[card.get_attribute("data-metric")] = (val.text, val.get_attribute("data-value"),
                                                  int(chart.get_attribute("data-points") or 0))
    return out


def test_metrics_tabs_of_the_jobmanager_and_a_taskmanager(cluster, browser):
    """The Metrics tab of #/jobmanager/metrics and #/taskmanagers/<id>/metrics, as
    Flink's UI has it: the picker offers the ids GET .../metrics lists, the chosen
    metrics show their value and a chart that gains a point every refresh; adding
    and removing one works and the choice survives a reload. Values are compared
    with REST and with the daemons' /proc."""
    d = browser
    cluster.add_tm(slots=1)
    d.get(cluster.url + "/")
    d.execute_script("localStorage.clear()")
    for route, page, base, pid in (("/jobmanager/metrics", "jobmanager", "/jobmanager", cluster.jm.proc.pid),
                                   ("/taskmanagers/tm-0/metrics", "taskmanager", "/taskmanagers/tm-0",
                                    cluster.tms[0].proc.pid)):
        ids = sorted(m["id"] for m in cluster.get(base + "/metrics"))
        assert {"Status.JVM.CPU.Load", "Status.JVM.CPU.Time", "Status.JVM.Threads.Count",
                "Status.ProcessTree.Memory.RSS", "Status.ProcessTree.Memory.Virtual"} <= set(ids), ids
        open_page(d, cluster, route, page)
        wait_ui(d, lambda d: attr_of(d, "#process", "data-tab") == "metrics", f"the {page}'s metrics tab")
        # the two chosen by default, charts filling as the page refreshes
        got = wait_ui(d, lambda d: (lambda c: c if set(c) == {"Status.JVM.CPU.Load", "Status.ProcessTree.Memory.RSS"}
                                    and all(p >= 3 for _, _, p in c.values()) else None)(metric_cards(d)),
                      f"the {page}'s default metrics with 3 readings")
        offered = [o.get_attribute("value") for o in css(d, "#metric-picker option")]
        assert offered == [i for i in ids if i not in got], offered
        rss = int(got["Status.ProcessTree.Memory.RSS"][1])
        with open(f"/proc/{pid}/statm") as f:
            now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        assert 0.5 * now < rss < 2 * now, (rss, now)
        assert got["Status.ProcessTree.Memory.RSS"][0].endswith("MiB"), got
        assert 0 <= float(got["Status.JVM.CPU.Load"][1]) <= 1 and got["Status.JVM.CPU.Load"][0].endswith(" %")
        # add the thread count: its value is the process's thread count
        d.execute_script("const s = document.getElementById('metric-picker');"
                         "s.value = 'Status.JVM.Threads.Count'; s.dispatchEvent(new Event('change'));")
        css(d, "#metric-add")[0].click()
        threads = wait_ui(d, lambda d: metric_cards(d).get("Status.JVM.Threads.Count"), "the added metric")
        assert abs(int(threads[1]) - len(os.listdir(f"/proc/{pid}/task"))) <= 4, threads
        assert "Status.JVM.Threads.Count" not in [o.get_attribute("value") for o in css(d, "#metric-picker option")]
        screenshot(d, f"{page}-metrics")
        # remove the CPU load; the choice outlives a reload
        css(d, '.metric-card[data-metric="Status.JVM.CPU.Load"] .metric-remove')[0].click()
        wait_ui(d, lambda d: "Status.JVM.CPU.Load" not in metric_cards(d), "the removed metric gone")
        d.refresh()
        wait_ui(d, lambda d: set(metric_cards(d)) == {"Status.ProcessTree.Memory.RSS", "Status.JVM.Threads.Count"},
                "the choice after a reload")
        d.execute_script("localStorage.clear()")
    # REST: the TaskManager's values come with its heartbeats; the aggregate over TaskManagers
    tm = cluster.get("/taskmanagers/tm-0/metrics?get=Status.JVM.Threads.Count,Status.Flink.Memory.Managed.Total")
    assert [m["id"] for m in tm] == ["Status.JVM.Threads.Count", "Status.Flink.Memory.Managed.Total"], tm
    assert int(tm[1]["value"]) == cluster.get("/taskmanagers/tm-0")["hardware"]["managedMemory"]

    def aggregate_agrees():  # a heartbeat may land between the two reads: read again
        one = cluster.get("/taskmanagers/tm-0/metrics?get=Status.JVM.Threads.Count")[0]["value"]
        agg = cluster.get("/taskmanagers/metrics?get=Status.JVM.Threads.Count&agg=min,max,sum")
        return agg == [{"id": "Status.JVM.Threads.Count", "min": float(one), "max": float(one), "sum": float(one)}]
    wait_for(aggregate_agrees, what="the aggregate over the one TaskManager")


def test_rescale_from_the_job_page(cluster, browser):
    """The rescales tab lists each vertex at its parallelism; setting 1 and
    clicking Rescale rescales the running job (same id) and the history row
    shows it, as REST does."""
    d = browser
    cluster.add_tm(slots=2)
    jid = cluster.submit(endless_job("rescaled from the page", p=2, rate=200))
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["status"] == "RUNNING" for v in cluster.job(jid)["vertices"]), what="tasks")
    open_page(d, cluster, f"/jobs/{jid}/rescales", "job")
    vertices = cluster.job(jid)["vertices"]
    wait_ui(d, lambda d: len(css(d, "#rescale-vertices tr")) == len(vertices), "the vertex rows")
    assert [tuple(c.text for c in css(tr, "td")[:2]) for tr in css(d, "#rescale-vertices tr")] == \
        [(v["name"], "2") for v in vertices]
    assert attr_of(d, "#rescale-history", "data-count") == "0"
    for field in css(d, "#rescale-vertices input"):
        field.clear()
        field.send_keys("1")
    d.find_element(By.ID, "btn-rescale").click()
    wait_ui(d, lambda d: attr_of(d, "#rescale-history", "data-count") == "1"
            and attr_of(d, "#rescale-history tr", "data-state") == "COMPLETED", "the rescale done")
    hist = cluster.get(f"/jobs/{jid}/rescales/history")
    assert [h["terminalState"] for h in hist] == ["COMPLETED"]
    assert cluster.job(jid)["state"] == "RUNNING"
    assert [v["parallelism"] for v in cluster.job(jid)["vertices"]] == [1] * len(vertices)
    row = css(d, "#rescale-history tr td")[2].text
    assert row == ", ".join(f"{v['name']}: 2 \u2192 1" for v in vertices), row
    screenshot(d, "job-rescales")
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
    cluster.wait_state(jid, "CANCELED")


def test_flame_graph_tab_of_a_vertex(cluster, browser):
    """The selected vertex's Flame Graph tab draws the JobManager's flame graph:
    "sampling" first, then frames, among them the busy source's run function
    (named from the TaskManager's symbol table); On-CPU and Off-CPU redraw
    with what the REST API answers for those types."""
    d = browser
    cluster.add_tm(slots=1)
    jid = cluster.submit(endless_job("flames", p=1, rate=50_000_000))
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["tasks"]["RUNNING"] == v["parallelism"] for v in cluster.job(jid)["vertices"]),
             what="the tasks to run")
    vid = vertex_ids(cluster, jid)["gen"]

    open_page(d, cluster, f"/jobs/{jid}/graph/{vid}", "job")
    wait_ui(d, lambda d: shown(d, "#vertex-tab-flamegraph"), "the vertex's tabs")
    assert not shown(d, "#flamegraph")
    css(d, "#vertex-tab-flamegraph")[0].click()
    wait_ui(d, lambda d: shown(d, "#flamegraph"), "the flame graph tab")
    frame = '#flamegraph-canvas .frame[data-name="datagen_run"]'
    wait_ui(d, lambda d: css(d, frame), "the source's run function in the flame graph", timeout=60)
    assert not shown(d, "#subtasks .subtasks-table")
    full = cluster.get(f"/jobs/{jid}/vertices/{vid}/flamegraph")
    root = '#flamegraph-canvas .frame[data-name="root"]'
    assert attr_of(d, root, "data-value") == str(full["data"]["value"])
    assert int(attr_of(d, "#flamegraph", "data-end-timestamp")) == full["endTimestamp"]
    d.execute_script("document.getElementById('flamegraph').scrollIntoView()")
    screenshot(d, "job-vertex-flamegraph")

    for kind in ("on_cpu", "off_cpu"):
        css(d, f'#flamegraph button[data-flame-type="{kind}"]')[0].click()
        want = cluster.get(f"/jobs/{jid}/vertices/{vid}/flamegraph?type={kind}")["data"]["value"]
        wait_ui(d, lambda d: attr_of(d, "#flamegraph", "data-type") == kind and
                (want == 0 and not css(d, root) or attr_of(d, root, "data-value") == str(want)),
                f"the {kind} graph")
    d.execute_script("document.getElementById('flamegraph').scrollIntoView()")
    screenshot(d, "job-vertex-flamegraph-off-cpu")

    # one subtask: the picker lists the vertex's one subtask; its graph is its own sampling
    wait_ui(d, lambda d: [o.get_attribute("value") for o in css(d, "#flamegraph-subtask option")] == ["", "0"],
            "the subtask picker")
    d.execute_script("const s = document.getElementById('flamegraph-subtask');"
                     "s.value = '0'; s.dispatchEvent(new Event('change'));")
    one = f"/jobs/{jid}/vertices/{vid}/flamegraph?type=off_cpu&subtaskindex=0"
    g = wait_for(lambda: (lambda g: g if g["endTimestamp"] > 0 else None)(cluster.get(one)),
                 timeout=60, what="subtask 0's flame graph")
    wait_ui(d, lambda d: attr_of(d, "#flamegraph", "data-end-timestamp") == str(g["endTimestamp"]),
            "subtask 0's graph drawn", timeout=60)


def test_subtask_drawer_shows_that_subtasks_flame_graph(cluster, browser):
    """Clicking a subtask row opens its drawer: where it runs, and the flame
    graph of that subtask's thread alone (subtaskindex=i), the same graph the
    REST API serves; another row switches the drawer, Close closes it."""
    d = browser
    cluster.add_tm(slots=2)
    jid = cluster.submit(endless_job("subtask flames", p=2, rate=50_000_000))
    cluster.wait_state(jid, "RUNNING")
    wait_for(lambda: all(v["tasks"]["RUNNING"] == v["parallelism"] for v in cluster.job(jid)["vertices"]),
             what="the tasks to run")
    vid = vertex_ids(cluster, jid)["gen"]

    open_page(d, cluster, f"/jobs/{jid}/graph/{vid}", "job")
    row = '#subtasks .subtask-row[data-subtask="1"]'
    wait_ui(d, lambda d: css(d, row), "subtask 1's row")
    assert not shown(d, "#subtask-drawer")
    css(d, row)[0].click()
    wait_ui(d, lambda d: shown(d, "#subtask-drawer") and attr_of(d, "#subtask-drawer", "data-subtask") == "1",
            "subtask 1's drawer")
    assert attr_of(d, "#subtask-drawer", "data-vertex-id") == vid
    assert "TaskManager tm-0" in text_of(d, "#subtask-drawer-facts")
    assert not shown(d, "#subtask-flamegraph-subtask")  # no picker: this subtask alone
    frame = '#subtask-flamegraph-canvas .frame[data-name="datagen_run"]'
    wait_ui(d, lambda d: css(d, frame), "the source's run function in subtask 1's graph", timeout=60)
    one = cluster.get(f"/jobs/{jid}/vertices/{vid}/flamegraph?type=full&subtaskindex=1")
    assert one["endTimestamp"] > 0
    assert attr_of(d, "#subtask-flamegraph", "data-end-timestamp") == str(one["endTimestamp"])
    assert attr_of(d, '#subtask-flamegraph-canvas .frame[data-name="root"]', "data-value") == \
        str(one["data"]["value"])
    d.execute_script("document.getElementById('subtask-drawer').scrollIntoView()")
    screenshot(d, "job-subtask-drawer-flamegraph")

    css(d, '#subtasks .subtask-row[data-subtask="0"]')[0].click()
    wait_ui(d, lambda d: attr_of(d, "#subtask-drawer", "data-subtask") == "0"
            and attr_of(d, "#subtask-flamegraph", "data-subtask") == "0", "subtask 0's drawer")
    zero = wait_for(lambda: (lambda g: g if g["endTimestamp"] > 0 else None)(
        cluster.get(f"/jobs/{jid}/vertices/{vid}/flamegraph?type=full&subtaskindex=0")),
        timeout=60, what="subtask 0's flame graph")
    wait_ui(d, lambda d: attr_of(d, "#subtask-flamegraph", "data-end-timestamp") == str(zero["endTimestamp"]),
            "subtask 0's graph drawn", timeout=60)
    css(d, "#subtask-drawer-close")[0].click()
    wait_ui(d, lambda d: not shown(d, "#subtask-drawer"), "the drawer closed")
    cluster.request("PATCH", f"/jobs/{jid}?mode=cancel")
