"""The page in a real browser: Debian's chromium driven by Selenium through chromium-driver (no
browser is downloaded; .ci/run installs both with apt when they are missing).

``ciyuan serve --port 0`` runs as a subprocess on a free local port with two small tokenizers
and a dictionary. The tests type English and Chinese text and check that the token count and
every coloured span (id, start, end) equal ``Tokenizer.encode``'s, compare the two tokenizers
and their boundary differences, click a token to select its span, switch segmentation methods,
train a small tokenizer with the progress bar, use it and download it, and save screenshots
under the test's temporary folder. The tests of this module run in order, on one page.

The browser is kept off the network: it resolves no name but 127.0.0.1 and runs without its
background services.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

from ciyuan import Tokenizer
from ciyuan.segment import Dictionary, Segmenter
from tests.serve.conftest import CORPUS

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

# Typed with the keyboard (ChromeDriver types characters of the Basic Multilingual Plane only;
# the emoji test sets the text instead).
TYPED = "The lazy dog sleeps.\n研究生命起源，他说的确实在理。  ok"
#: Headless, and kept off the network: no background services, and no name resolves but this
#: machine's own, so nothing can leave it.
BROWSER_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
    "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-domain-reliability", "--no-pings", "--disable-client-side-phishing-detection",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)
WAIT = 60  # seconds a step may take on a loaded two-core machine before the test fails

#: What `make sanitize` sets for ciyuan (the preloaded ASan runtime and its options).
SANITIZER_ENV = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")


def _browser_env() -> Dict[str, str]:
    """The browser's environment: this one without the sanitizer runtime. Under `make sanitize`
    it is preloaded for ciyuan (the server keeps it); chromedriver, a position-independent
    executable, aborts with it ("Shadow memory range interleaves with an existing memory
    mapping"), and the browser is not what is under test."""
    return {k: v for k, v in os.environ.items() if k not in SANITIZER_ENV}


def _need_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        reason = f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server(tiny_files: Path) -> Iterator[str]:
    """``ciyuan serve --port 0`` with the small files; yields the page's address."""
    _need_browser()
    command = [sys.executable, "-m", "ciyuan", "serve", "--port", "0",
               f"bpe={tiny_files / 'tok-bpe.json'}", f"wp={tiny_files / 'wp' / 'tokenizer.json'}",
               "--dict", str(tiny_files / "words.txt")]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first: List[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)  # type: ignore
    reader.start()
    reader.join(WAIT)
    try:
        if not first or "http://" not in first[0]:
            proc.kill()
            pytest.fail(f"ciyuan serve did not start: {first} {proc.stderr.read() if proc.stderr else ''}")
        yield first[0].split()[2]  # "ciyuan serve: http://127.0.0.1:PORT/ (Ctrl-C to stop)"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def driver(server: str) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the page's console, read at the end
    for flag in BROWSER_FLAGS:
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER, env=_browser_env()))
    try:
        browser.get(server)
        _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true",
              "the page to start")
        yield browser
    finally:
        browser.quit()


def _wait(driver: Any, condition: Callable[[Any], Any], what: str, shown: Any = None) -> Any:
    """Wait for ``condition``; on time-out fail with ``shown(driver)``, what the page shows."""
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.1).until(condition)
    except TimeoutException:
        pytest.fail(f"the page did not show {what} within {WAIT}s" + (f": {shown(driver)}" if shown else ""))


def _tokens(driver: Any, name: str) -> List[Tuple[int, int, int]]:
    """(id, start, end) of every coloured token of tokenizer ``name``, read from the page."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(`#results .result[data-name='${arguments[0]}'] .tok`))"
        ".map(s => [Number(s.dataset.id), Number(s.dataset.start), Number(s.dataset.end)]);", name)


def _expected(tok: Tokenizer, text: str) -> List[Tuple[int, int, int]]:
    enc = tok.encode(text)
    return [[i, s, e] for i, (s, e) in zip(enc.ids, enc.offsets)]  # type: ignore[misc]


def _type(driver: Any, selector: str, text: str) -> None:
    box = driver.find_element(By.CSS_SELECTOR, selector)
    box.clear()
    box.send_keys(text)


def _tab(driver: Any, view: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f"#tabs button[data-view={view}]").click()


def _choose(driver: Any, name: str, chosen: bool) -> None:
    box = driver.find_element(By.CSS_SELECTOR, f"#tokenizer-list input[value='{name}']")
    if box.is_selected() != chosen:
        box.click()


def test_the_page_starts_with_the_command_line_tokenizers(driver: Any) -> None:
    names = [c.get_attribute("data-name") for c in driver.find_elements(By.CSS_SELECTOR, "#results .result")]
    assert names == ["bpe", "wp"]


def test_typed_text_shows_the_tokens_of_encode(driver: Any, tiny_files: Path, tmp_path: Path) -> None:
    bpe = Tokenizer.load(tiny_files / "tok-bpe.json")
    _choose(driver, "wp", False)
    _type(driver, "#text", TYPED)
    expected = _expected(bpe, TYPED)
    _wait(driver, lambda d: _tokens(d, "bpe") == expected, "the typed text's tokens")
    card = driver.find_element(By.CSS_SELECTOR, "#results .result[data-name=bpe]")
    assert card.find_element(By.CSS_SELECTOR, ".count-tokens").text == str(len(expected))
    assert card.find_element(By.CSS_SELECTOR, ".count-chars").text == str(len(TYPED))
    assert card.find_element(By.CSS_SELECTOR, ".count-bytes").text == str(len(TYPED.encode()))
    # Hover text: the id and the bytes of each token.
    spans = card.find_elements(By.CSS_SELECTOR, ".tok")
    for span, token_id in zip(spans[:5], bpe.encode(TYPED).ids):
        title = span.get_attribute("title")
        assert f"id {token_id} " in title and f"bytes {bpe.decode_bytes([token_id]).hex(' ')}" in title
    # Whitespace made visible, and Chinese that falls apart into bytes marked as such.
    kinds = {s.get_attribute("data-kind") for s in spans}
    assert {"space", "byte"} <= kinds
    driver.save_screenshot(str(tmp_path / "tokenize.png"))
    assert (tmp_path / "tokenize.png").stat().st_size > 10_000


def test_text_set_with_an_emoji(driver: Any, tiny_files: Path) -> None:
    text = "emoji 🙂 and 中文 after it"
    driver.execute_script("const t = document.querySelector('#text'); t.value = arguments[0];"
                          "t.dispatchEvent(new Event('input'));", text)
    expected = _expected(Tokenizer.load(tiny_files / "tok-bpe.json"), text)
    _wait(driver, lambda d: _tokens(d, "bpe") == expected, "the emoji text's tokens")


def test_two_tokenizers_side_by_side_and_their_differences(driver: Any, tiny_files: Path) -> None:
    _type(driver, "#text", TYPED)
    _choose(driver, "wp", True)
    wp = Tokenizer.load(tiny_files / "wp" / "tokenizer.json")
    bpe = Tokenizer.load(tiny_files / "tok-bpe.json")
    _wait(driver, lambda d: _tokens(d, "wp") == _expected(wp, TYPED), "the WordPiece tokens",
          lambda d: (_tokens(d, "wp"), _expected(wp, TYPED), d.find_element(By.ID, "results").text))
    assert _tokens(driver, "bpe") == _expected(bpe, TYPED)
    counts = {c.get_attribute("data-name"): c.find_element(By.CSS_SELECTOR, ".count-tokens").text
              for c in driver.find_elements(By.CSS_SELECTOR, "#results .result")}
    assert counts == {"bpe": str(len(bpe.encode(TYPED).ids)), "wp": str(len(wp.encode(TYPED).ids))}
    cuts = []
    for tok in (bpe, wp):
        cut = set()
        for s, e in tok.encode(TYPED).offsets:
            if e > s:
                cut.update(p for p in (s, e) if 0 < p < len(TYPED))
        cuts.append(cut)
    assert driver.find_element(By.ID, "differ").is_displayed()
    marks = [int(m.get_attribute("data-pos")) for m in driver.find_elements(By.CSS_SELECTOR, "#differ-text .cut")]
    assert marks == sorted(cuts[0] ^ cuts[1]) and marks


def test_clicking_a_token_selects_its_span(driver: Any, tiny_files: Path) -> None:
    bpe = Tokenizer.load(tiny_files / "tok-bpe.json")
    enc = bpe.encode(TYPED)
    # The first token that covers Chinese text.
    index = next(i for i, (s, e) in enumerate(enc.offsets) if "\u4e00" <= TYPED[s] <= "\u9fff")
    span = driver.find_elements(By.CSS_SELECTOR, "#results .result[data-name=bpe] .tok")[index]
    span.click()
    start, end = enc.offsets[index]
    selected = driver.execute_script("const t = document.querySelector('#text');"
                                     "return [t.selectionStart, t.selectionEnd];")
    # The text box counts UTF-16 units; this text has none outside the BMP, so they are characters.
    assert selected == [start, end]
    assert "active" in span.get_attribute("class")
    info = driver.find_element(By.ID, "selection")
    assert (info.get_attribute("data-start"), info.get_attribute("data-end")) == (str(start), str(end))


def test_upload_a_tokenizer_file_on_the_page(driver: Any, tiny_files: Path) -> None:
    driver.find_element(By.CSS_SELECTOR, "details.load summary").click()
    # A file input takes the file's path as typed keys (what choosing the file does).
    driver.find_element(By.ID, "upload-tokenizer").send_keys(str(tiny_files / "wp" / "tokenizer.json"))
    wp = Tokenizer.load(tiny_files / "wp" / "tokenizer.json")
    text = driver.execute_script("return document.querySelector('#text').value;")
    _wait(driver, lambda d: _tokens(d, "tokenizer") == _expected(wp, text), "the uploaded tokenizer's tokens")
    label = driver.find_element(By.CSS_SELECTOR, "#tokenizer-list label[data-name=tokenizer]")
    assert "upload" in label.text
    _choose(driver, "tokenizer", False)


def test_decode_ids(driver: Any, tiny_files: Path) -> None:
    bpe = Tokenizer.load(tiny_files / "tok-bpe.json")
    ids = bpe.encode(TYPED).ids
    # The ids the page shows under the tokens, pasted back into the decode box.
    shown = driver.execute_script(
        "return document.querySelector(`#results .result[data-name='bpe'] details.ids code`).textContent;")
    assert shown == ", ".join(map(str, ids))
    driver.find_element(By.CSS_SELECTOR, "#decode-box summary").click()
    Select(driver.find_element(By.ID, "decode-tokenizer")).select_by_value("bpe")
    _type(driver, "#decode-ids", shown)
    driver.find_element(By.CSS_SELECTOR, "#decode-form button").click()
    _wait(driver, lambda d: d.find_element(By.ID, "decode-text").get_attribute("data-state") == "ready",
          "the decoded text")
    assert driver.execute_script("return document.querySelector('#decode-text').textContent;") == bpe.decode(ids)
    decoded = [int(s.get_attribute("data-id")) for s in driver.find_elements(By.CSS_SELECTOR, "#decode-tokens .tok")]
    assert decoded == ids
    _type(driver, "#decode-ids", "1, 99999999")
    driver.find_element(By.CSS_SELECTOR, "#decode-form button").click()
    _wait(driver, lambda d: d.find_element(By.ID, "decode-text").get_attribute("data-state") == "error", "the error")
    assert "99999999" in driver.find_element(By.ID, "decode-text").text


def test_segmentation_methods_side_by_side_and_switched(driver: Any, tiny_files: Path) -> None:
    _tab(driver, "segment")
    text = "研究生命起源。他说的确实在理。结婚的和尚未结婚的都来了。"
    _type(driver, "#seg-text", text)
    dictionary = Dictionary.load(tiny_files / "words.txt")

    def words(d: Any) -> dict:
        return d.execute_script(
            "const out = {}; for (const card of document.querySelectorAll('#seg-results .result'))"
            " out[card.dataset.method] = Array.from(card.querySelectorAll('.word'))"
            ".map(w => [Number(w.dataset.start), Number(w.dataset.end)]); return out;")

    expected = {m: [[s, e] for _, s, e in Segmenter(dictionary, m).tokenize(text)]
                for m in ("fmm", "bmm", "bimm", "dag")}
    _wait(driver, lambda d: words(d) == expected, "the four methods' words")
    assert expected["fmm"] != expected["bmm"]
    for method in ("fmm", "bmm"):
        driver.find_element(By.CSS_SELECTOR, f".seg-method[value={method}]").click()
    _wait(driver, lambda d: words(d) == {m: expected[m] for m in ("bimm", "dag")}, "BiMM and DAG only")
    driver.find_element(By.CSS_SELECTOR, ".seg-method[value=bimm]").click()
    _wait(driver, lambda d: words(d) == {"dag": expected["dag"]}, "DAG alone")
    assert not driver.find_element(By.ID, "seg-differ").is_displayed()


def test_train_a_tokenizer_then_use_and_download_it(driver: Any, server: str, tmp_path: Path) -> None:
    _tab(driver, "tokenize")
    corpus = "\n".join(CORPUS[:8])
    driver.execute_script("const t = document.querySelector('#text'); t.value = arguments[0];"
                          "t.dispatchEvent(new Event('input'));", corpus)
    _tab(driver, "train")
    Select(driver.find_element(By.ID, "train-model")).select_by_value("bpe")
    _type(driver, "#train-vocab", "300")
    _type(driver, "#train-name", "browser-bpe")
    driver.find_element(By.ID, "train-start").click()
    _wait(driver, lambda d: d.find_element(By.ID, "train-status").get_attribute("data-state") in ("done", "error"),
          "the end of training")
    status = driver.find_element(By.ID, "train-status")
    assert status.get_attribute("data-state") == "done", status.text
    assert driver.find_element(By.ID, "train-progress").get_attribute("value") == "100"
    driver.save_screenshot(str(tmp_path / "train.png"))
    # Download it as the link does, and load it.
    href = driver.find_element(By.ID, "train-download").get_attribute("href")
    assert href.endswith("/api/tokenizers/browser-bpe/tokenizer.json")
    saved = tmp_path / "tokenizer.json"
    with urllib.request.urlopen(href, timeout=WAIT) as response:  # noqa: S310 - the local server
        saved.write_bytes(response.read())
    trained = Tokenizer.load(saved)
    assert trained.vocab_size == 300
    # "Use it": the trained tokenizer is chosen in the Tokenize view, beside the others.
    driver.find_element(By.ID, "train-use").click()
    expected = _expected(trained, corpus)
    _wait(driver, lambda d: _tokens(d, "browser-bpe") == expected, "the trained tokenizer's tokens")
    count = driver.find_element(By.CSS_SELECTOR, "#results .result[data-name=browser-bpe] .count-tokens").text
    assert count == str(len(expected))
    driver.save_screenshot(str(tmp_path / "trained.png"))
    assert (tmp_path / "trained.png").stat().st_size > 10_000


def test_plots_view_measures_the_chosen_tokenizers(driver: Any, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    _tab(driver, "plots")
    driver.find_element(By.ID, "eval-start").click()
    _wait(driver, lambda d: d.find_element(By.ID, "eval-status").get_attribute("data-state") in ("done", "error"),
          "the end of the measurement")
    status = driver.find_element(By.ID, "eval-status")
    assert status.get_attribute("data-state") == "done", status.text
    chosen = driver.execute_script("return state.selected;")
    rows = driver.find_elements(By.CSS_SELECTOR, "#eval-table tr[data-tokenizer]")
    assert sorted(r.get_attribute("data-tokenizer") for r in rows) == sorted(chosen)
    images = driver.find_elements(By.CSS_SELECTOR, "#plots img")
    assert len(images) == 2  # no merge-list curve unless asked for
    _wait(driver, lambda d: all(d.execute_script("return arguments[0].naturalWidth", i) > 0 for i in images),
          "the plots drawn")
    driver.save_screenshot(str(tmp_path / "plots.png"))


def test_no_script_errors_on_the_page(driver: Any) -> None:
    """The console holds no JavaScript error from all the steps above. (The answers the tests
    asked to fail, such as decoding an unknown id, are logged as failed loads: those are left out.)"""
    errors = [e["message"] for e in driver.get_log("browser")
              if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]]
    assert errors == []
