"""Neo4j Browser, for real: the queries of cypher/browser/ and the style in docs/browser/.

The Browser test drives headless Chromium (Debian's `chromium` and `chromium-driver`)
against the Browser the server serves on http://127.0.0.1:7474/browser/: it connects,
loads the style, sets the parameters with `:param`, runs the Mappe query for the worked
example, reads the drawn graph from the DOM and saves a screenshot to
docs/browser-mappe.png. It skips only when Chromium is missing and cannot be installed,
or when a test server named by KG_TEST_NEO4J_URI comes without KG_BROWSER_URL and no
Browser answers on port 7474 (the server a session starts always sets it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from cli.browser import body, header_examples, param_lines, parameters
from cli.worked_example import build
from kg.api import SyncMemory
from kg.mappe import render
from kg.settings import Settings
from tests.conftest import Pair, explain_with_examples, new_user_id, raw_cypher, t
from tests.test_bitemporal import lena_in_kassel_to_come

ROOT = Path(__file__).resolve().parent.parent
BROWSER_QUERIES = ROOT / "cypher" / "browser"
STYLE = ROOT / "docs" / "browser" / "style.grass"
SCREENSHOT = ROOT / "docs" / "browser-mappe.png"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--window-size=1400,900",
]


def browser_query(name: str) -> tuple[str, dict[str, str]]:
    """A Browser query's Cypher (comments dropped) and its documented `:param` lines."""
    text = (BROWSER_QUERIES / name).read_text(encoding="utf-8")
    return body(text), header_examples(text)


# -- the queries themselves (no browser needed) --------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in BROWSER_QUERIES.glob("*.cypher")))
def test_browser_query_documents_its_params_and_runs(name: str, pair: Pair) -> None:
    body, documented = browser_query(name)
    assert set(re.findall(r"\$(\w+)", body)) == set(documented), "`:param` lines != $params"
    pair.store.run(explain_with_examples(pair.store, body, documented))  # the header runs
    worked_example(pair)
    first = pair.cypher("MATCH (t:TimelineEintrag {user_id: $u}) RETURN t.id AS id LIMIT 1",
                        u=pair.user_id)[0]["id"]
    values = parameters(name.removesuffix(".cypher"), user_id=pair.user_id, character_id="nova",
                        entity="Lena", beziehung="wohnt_in", eintrag_id=first)
    assert set(values) == set(documented)
    rows = pair.cypher(body, **values)
    assert rows, f"{name} found nothing for the worked example"


def test_browser_history_of_a_partner_reads_both_ends(pair: Pair) -> None:
    """A stranger's attack (2026-12-05): "Tom partner Anna", then "Ben partner Anna";
    `kg history Anna --beziehung partner` listed both, `historie.cypher` nothing (it
    followed Anna's outgoing edges only). A relation that is not symmetric still reads
    the entity's own facts only."""
    pair.write(t("Tom", "partner", "Anna"), zeitpunkt="2024-01-01T00:00:00Z")
    pair.write(t("Ben", "partner", "Anna"))
    pair.write(t("Anna", "hat_haustier", "Bello"))
    body, _ = browser_query("historie.cypher")
    values = parameters("historie", user_id=pair.user_id, character_id="nova",
                        entity="Anna", beziehung="partner")
    assert values["beide_richtungen"] is True
    rows = pair.cypher(body, **values)  # (every version: Tom's first, current until Ben)
    assert [(r["subjekt"], r["objekt"], r["aktiv"]) for r in rows if r["ersetzt"] is None] == [
        ("Anna", "Tom", False), ("Anna", "Ben", True)]
    values = parameters("historie", user_id=pair.user_id, character_id="nova",
                        entity="Bello", beziehung="hat_haustier")
    assert values["beide_richtungen"] is False
    assert pair.cypher(body, **values) == []
    with pytest.raises(ValueError, match="partnerin"):
        parameters("historie", user_id=pair.user_id, character_id="nova",
                   entity="Anna", beziehung="partnerin")


def drawn_edges(rows: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """The edges of the paths `p1` and `p2` a Browser query returns, in the order each
    path walks them (not their direction): (from, TYPE, to), a node by name or value."""
    def label(node: dict[str, Any]) -> str:
        return str(node.get("name", node.get("wert")))

    return {
        (label(start), kind, label(end))
        for row in rows for key in ("p1", "p2") if row[key]
        for start, kind, end in zip(row[key][:-1:2], row[key][1::2], row[key][2::2],
                                    strict=True)
    }


def test_browser_mappe_draws_the_values_that_still_hold(pair: Pair) -> None:
    """Lena lives in Berlin until a day ahead ("noch bis" in `kg mappe`), with Ben until
    an event ahead: the library's Mappe reaches through both, the Browser's drew neither
    (only active facts), so a maintainer saw Lena nowhere but Kassel. A value superseded
    in the past, and one that begins and ends ahead, stay out, as in the library."""
    now = datetime.now(UTC)
    pair.write(t("Lena", "wohnt_in", "München"), zeitpunkt="2020-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2024-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Hamburg"), zeitpunkt=(now + timedelta(days=30)).isoformat())
    pair.write(t("Lena", "wohnt_in", "Kassel"), zeitpunkt=(now + timedelta(days=90)).isoformat())
    pair.write(t("Berlin", "liegt_in", "Deutschland"), t("München", "liegt_in", "Bayern"),
               t("Hamburg", "liegt_in", "Norddeutschland"))
    pair.write(t("Lena", "beruf", wert="Lehrerin"), zeitpunkt="2024-01-01T00:00:00Z")
    pair.write(t("Lena", "beruf", wert="Ärztin"), zeitpunkt=(now + timedelta(days=90)).isoformat())
    pair.write(t("Ben", "partner", "Lena"), zeitpunkt="2024-01-01T00:00:00Z")
    pair.write(t("Ben", "hat_haustier", "Rex"))
    ahead = (now + timedelta(days=60)).date().isoformat()
    pair.write({**t("Lena", "partner", "Tom"),
                "ereignis": {"titel": "Lena trifft Tom", "beginn": ahead}})
    body, _ = browser_query("mappe.cypher")
    values = parameters("mappe", user_id=pair.user_id, character_id="nova", entity="Lena")
    assert "PARTNER" in values["symmetrisch"]
    edges = drawn_edges(pair.cypher(body, **values))
    assert {("Lena", "WOHNT_IN", "Berlin"), ("Berlin", "LIEGT_IN", "Deutschland"),
            ("Lena", "WOHNT_IN", "Kassel"), ("Lena", "PARTNER", "Ben"),
            ("Ben", "HAT_HAUSTIER", "Rex"), ("Lena", "PARTNER", "Tom"),
            ("Lena", "BERUF", "Lehrerin"), ("Lena", "BERUF", "Ärztin")} <= edges, edges
    names = {name for edge in edges for name in (edge[0], edge[2])}
    assert not {"München", "Bayern", "Hamburg", "Norddeutschland"} & names, edges
    # The library's Mappe says the same: Berlin and Ben still hold, and it reaches on.
    m = pair.store.run(pair.store.memory.mappe(pair.user_id, "nova", pair.id_of("Lena")))
    text = render(m, budget=5000)
    assert "wohnt in Berlin (noch bis" in text and "Ben (noch bis" in text, text
    assert "Lehrerin" in text and "(noch bis" in text.split("Lehrerin", 1)[1], text
    assert {(f.subjekt.name, f.objekt.name) for f in m.fakten
            if f.grad == 2 and f.subjekt and f.objekt} >= {
        ("Berlin", "Deutschland"), ("Ben", "Rex")}


def test_browser_mappe_draws_the_type_that_holds_and_the_type_to_come(pair: Pair) -> None:
    """Bello is a tier until a day ahead, an objekt from then: the library's Mappe says
    tier, the Browser's drew only the objekt (the active version)."""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2026-01-01T00:00:00Z")
    pair.write(t("Bello", "typ", wert="objekt", ereignis={
        "titel": "Umbau", "typ": "ereignis", "beginn": "2099-01-01", "genauigkeit": "tag"}))
    body, _ = browser_query("mappe.cypher")
    values = parameters("mappe", user_id=pair.user_id, character_id="nova", entity="Bello")
    edges = drawn_edges(pair.cypher(body, **values))
    assert {("Bello", "TYP", "tier"), ("Bello", "TYP", "objekt")} <= edges, edges
    assert pair.store.run(pair.store.memory.mappe(
        pair.user_id, "nova", pair.id_of("Bello"))).typ == "tier"


def test_browser_mappe_draws_a_value_that_still_holds_from_its_object(pair: Pair) -> None:
    """Lena lives in Kassel with Tom until she moves to Paris in 2099: Kassel's Mappe
    draws her (and reaches on to Tom), Tom's draws her home at degree 2, as the
    library's Mappe shows them (the Browser's drew neither)."""
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Lena", "partner", "Tom"))
    pair.write(t("Lena", "wohnt_in", "Paris"), zeitpunkt="2099-03-01T00:00:00Z")
    body, _ = browser_query("mappe.cypher")

    def drawn(name: str) -> set[tuple[str, str, str]]:
        values = parameters("mappe", user_id=pair.user_id, character_id="nova", entity=name)
        return drawn_edges(pair.cypher(body, **values))

    assert {("Kassel", "WOHNT_IN", "Lena"), ("Lena", "PARTNER", "Tom")} <= drawn("Kassel")
    assert {("Tom", "PARTNER", "Lena"), ("Lena", "WOHNT_IN", "Kassel"),
            ("Lena", "WOHNT_IN", "Paris")} <= drawn("Tom")
    # Paris resting: Kassel goes with it, as in the library's Mappe.
    pair.cypher("MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->"
                "(:Entitaet {name: 'Paris'}) SET r.staerke_decay = 0.05", u=pair.user_id)
    assert not {e for e in drawn("Kassel") if "WOHNT_IN" in e}
    assert not {e for e in drawn("Tom") if "WOHNT_IN" in e}


def test_browser_mappe_draws_a_value_to_come_that_ends_from_its_object_only(
    pair: Pair,
) -> None:
    """Lena in Bonn with Tom, Kassel from 2099 until Paris in 2100: Kassel's Mappe draws
    her, Tom's draws her Kassel at degree 2, as the library's Mappe shows them; Lena's
    own draws Kassel not (a line of her history) and reaches nowhere from it."""
    lena_in_kassel_to_come(pair)
    # A bond to come that ends, told from its other end: it reaches nowhere from Max.
    pair.write(t("Tom", "partner", "Max"), zeitpunkt="2099-03-01T00:00:00Z")
    pair.write(t("Tom", "partner", "Ben"), zeitpunkt="2100-01-01T00:00:00Z")
    body, _ = browser_query("mappe.cypher")

    def drawn(name: str) -> set[tuple[str, str, str]]:
        values = parameters("mappe", user_id=pair.user_id, character_id="nova", entity=name)
        return drawn_edges(pair.cypher(body, **values))

    assert ("Kassel", "WOHNT_IN", "Lena") in drawn("Kassel")
    assert ("Lena", "WOHNT_IN", "Kassel") in drawn("Tom")
    assert not {e for e in drawn("Lena") if "Kassel" in e or "Hessen" in e}
    assert not {e for e in drawn("Ulm") if "WOHNT_IN" in e}
    assert not {e for e in drawn("Max") if "PARTNER" in e}


def test_style_gives_each_kind_a_caption_and_its_own_colour() -> None:
    rules = dict(re.findall(r"^([\w.]+) \{$(.*?)^\}$", STYLE.read_text(encoding="utf-8"),
                            re.MULTILINE | re.DOTALL))
    captions = {k: re.search(r'caption:\s*"([^"]*)"', v) for k, v in rules.items()}
    assert {k: c.group(1) for k, c in captions.items() if c and k.startswith("node.")} == {
        "node.Entitaet": "{name}", "node.Wert": "{wert}", "node.TimelineEintrag": "{titel}",
        "node.Auftrag": "{id}", "node.Nutzer": "{id}",
    }
    colours = [re.search(r"\bcolor:\s*(#\w+)", rules[f"node.{label}"]).group(1)  # type: ignore[union-attr]
               for label in ("Entitaet", "Wert", "TimelineEintrag", "Auftrag")]
    assert len(set(colours)) == 4


# -- the real Browser ------------------------------------------------------------------------


def worked_example(pair: Pair) -> None:
    """The worked example (cli/worked_example.py) for the pair, the event in November;
    another character's facts on Kassel are never shown."""
    pair.store.run(build(pair.store.memory, pair.user_id, move=False))


def ensure_chromium() -> None:
    """Install Debian's chromium and chromium-driver when absent; skip only if that fails."""
    if Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists():
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("chromium/chromium-driver are missing and cannot be installed here "
                    "(needs apt-get as root): apt-get install chromium chromium-driver")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log = []
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"]):
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"installing chromium failed: {' '.join(cmd)}: {exc}")
        log.append(done.stdout[-300:] + done.stderr[-300:])
        if done.returncode != 0:
            pytest.skip(f"installing chromium failed: {' '.join(cmd)}: {log[-1].strip()}")
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(f"chromium installed but {CHROMIUM} / {CHROMEDRIVER} are missing")


@pytest.fixture
def chrome() -> Iterator[WebDriver]:
    ensure_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="kg-browser-test-")
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class Browser:
    """The few moves a person makes in Neo4j Browser."""

    def __init__(self, driver: WebDriver, timeout: float = 20) -> None:
        self.d = driver
        self.wait = WebDriverWait(driver, timeout)

    def frames(self) -> list[WebElement]:
        return self.d.find_elements(By.CSS_SELECTOR, "[data-testid=frame]")

    def connect(self, url: str, bolt_host_port: str, user: str, password: str) -> None:
        self.d.get(url)

        def shown(selector: str) -> WebElement | None:
            found = self.d.find_elements(By.CSS_SELECTOR, selector)
            return found[0] if found and found[0].is_displayed() and found[0].is_enabled() else None

        # The form renders in steps: wait until the fields a person types into are usable.
        self.wait.until(
            lambda d: shown("[data-testid=boltaddress]") and shown("[data-testid=connect]")
        )
        Select(self.d.find_element(By.CSS_SELECTOR, "[data-testid=bolt-scheme-select]")
               ).select_by_visible_text("bolt://")
        address = self.d.find_element(By.CSS_SELECTOR, "[data-testid=boltaddress]")
        address.send_keys(Keys.CONTROL, "a")
        address.send_keys(bolt_host_port)
        self.d.find_element(By.CSS_SELECTOR, "[data-testid=username]").send_keys(user)
        self.d.find_element(By.CSS_SELECTOR, "[data-testid=password]").send_keys(password)
        self.d.find_element(By.CSS_SELECTOR, "[data-testid=connect]").click()
        self.wait.until(lambda d: "connected as user" in self.stream_text())

    def stream_text(self) -> str:
        return str(self.d.find_element(By.CSS_SELECTOR, "[data-testid=stream]").text)

    def run(self, command: str) -> WebElement:
        """Type one command into the editor, run it, return its (newest) result frame."""
        before = len(self.frames())
        editor = self.d.find_element(By.CSS_SELECTOR, "[data-testid=activeEditor]")
        editor.click()
        # Typed as one input event (like a paste): key by key is slow and auto-closes brackets.
        self.d.execute_cdp_cmd("Input.insertText", {"text": command})
        editor.find_element(By.TAG_NAME, "textarea").send_keys(Keys.CONTROL, Keys.ENTER)
        self.wait.until(lambda d: len(self.frames()) > before)
        return self.frames()[0]


def one_line(text: str) -> str:
    return " ".join(text.split())


def browser_of(host: str) -> str:
    """The test server's own Browser: KG_BROWSER_URL (a server whose HTTP port is mapped,
    or the one the session started), else port 7474 of its host, if a Browser answers."""
    url = os.environ.get("KG_BROWSER_URL")
    if url:
        return url
    url = f"http://{host}:7474/browser/"
    try:
        with urllib.request.urlopen(url, timeout=5):
            return url
    except OSError as exc:
        pytest.skip(f"no Neo4j Browser answers at {url} ({exc}): set KG_BROWSER_URL to the "
                    "Browser of the test server (KG_TEST_NEO4J_URI)")


def test_browser_shows_the_mappe(
    chrome: WebDriver, store: SyncMemory, neo4j_settings: Settings, tmp_path: Path
) -> None:
    # KG_UPDATE_SCREENSHOT=1 refreshes the README's picture; otherwise the tree stays clean.
    shot = SCREENSHOT if os.environ.get("KG_UPDATE_SCREENSHOT") else tmp_path / SCREENSHOT.name
    pair = Pair(store, new_user_id("browser"))
    worked_example(pair)
    bolt = urlparse(neo4j_settings.neo4j_uri)
    browser_url = browser_of(bolt.hostname or "127.0.0.1")
    try:
        browser = Browser(chrome)
        browser.connect(browser_url, f"{bolt.hostname}:{bolt.port or 7687}",
                        neo4j_settings.neo4j_username,
                        neo4j_settings.neo4j_password.get_secret_value())
        # Only the query's own relationships: never other pairs' facts between shown nodes.
        browser.run(":config autoComplete: false")
        browser.run(":style " + one_line(STYLE.read_text(encoding="utf-8")))
        body, _ = browser_query("mappe.cypher")
        # The values as `kg browser mappe` prints them: normalised name, configured threshold.
        for line in param_lines(parameters("mappe", user_id=pair.user_id, character_id="nova",
                                           entity="Lena")):
            browser.run(line)
        frame = browser.run(one_line(body))
        browser.wait.until(lambda d: "Displaying" in frame.text or "ERROR" in frame.text)
        labels = [e.text for e in frame.find_elements(By.CSS_SELECTOR, "svg text")]
        drawn = set(labels)
        summary = frame.text
        for button in ("button[title='Collapse the node properties display']",
                       "button[aria-label=zoom-to-fit]"):
            time.sleep(1)  # let the force layout settle, then fit it into the frame
            frame.find_element(By.CSS_SELECTOR, button).click()
        time.sleep(1)
        frame.screenshot(str(shot))
    except WebDriverException as exc:
        pytest.fail(f"driving Neo4j Browser at {browser_url} failed: {exc.msg}")
    finally:
        store.run(store.memory.purge(pair.user_id))
    assert "ERROR" not in summary, summary
    assert {"Lena", "Kassel", "Bello", "Hessen", "Deutschland", "Hund"} <= drawn, drawn
    assert "WOHNT_IN" in drawn and "HAT_HAUSTIER" in drawn and "BEGLEITET" in drawn
    assert "Berlin" not in drawn  # superseded: not in the Mappe
    assert labels.count("LIEGT_IN") == 2, labels  # Hessen in Deutschland is degree 3
    assert "Herkules-Denkmal" not in drawn and "Nordhessen" not in drawn  # luna's facts
    assert any(text.startswith("Lena zieht") for text in drawn)  # the move event
    assert shot.stat().st_size > 10_000
    assert store.run(raw_cypher(store, "MATCH (e:Entitaet {user_id: $u}) RETURN e",
                                u=pair.user_id)) == []
