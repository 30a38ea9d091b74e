"""Take the README's screenshot of ``ciyuan serve`` (docs/img/serve.png).

Starts ``ciyuan serve --port 0`` with GPT-2 and o200k_base from ../shared/data, opens the page in
Debian's headless chromium (Selenium, through chromium-driver; kept off the network as in
tests/serve/test_browser.py), types a mixed English and Chinese text, and saves the page.
Fonts for Chinese and emoji come from Debian's fonts-noto-cjk and fonts-noto-color-emoji.

    python scripts/serve_screenshot.py [--out docs/img/serve.png] [--view tokenize|segment|train|plots]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CIYUAN_SHARED_DATA", REPO.parent / "shared" / "data"))
TEXT = ("Tokenizers cut text into pieces: GPT-2 breaks Chinese into bytes, o200k keeps words.\n"
        "分词器把文本切成词元，每个词元都有一个编号。 Emoji 🙂 too.")
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
         "--disable-domain-reliability", "--no-pings", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / "docs" / "img" / "serve.png"))
    parser.add_argument("--view", default="tokenize", choices=("tokenize", "segment", "train", "plots"))
    parser.add_argument("--size", default="1400,960", help="window width,height")
    args = parser.parse_args()

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    tok = DATA / "tokenizers"
    server = subprocess.Popen(
        [sys.executable, "-m", "ciyuan", "serve", "--port", "0", f"gpt2={tok / 'gpt2' / 'tokenizer.json'}",
         f"o200k_base={tok / 'tiktoken' / 'o200k_base.tiktoken'}",
         "--dict", str(DATA / "dicts" / "jieba_dict_small.txt")],
        stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[2]  # type: ignore[union-attr]
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in (*FLAGS, f"--window-size={args.size}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))
        try:
            driver.get(url)
            while driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") != "true":
                time.sleep(0.1)
            driver.execute_script("const t = document.querySelector('#text'); t.value = arguments[0];"
                                  "t.dispatchEvent(new Event('input'));", TEXT)
            time.sleep(1.5)
            # Show one token's span, as a click does.
            spans = driver.find_elements(By.CSS_SELECTOR, "#results .result[data-name=o200k_base] .tok")
            if len(spans) > 22:
                spans[22].click()
            if args.view != "tokenize":
                driver.find_element(By.CSS_SELECTOR, f"#tabs button[data-view={args.view}]").click()
                time.sleep(1.5)
            driver.save_screenshot(args.out)
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait()
    print(args.out)


if __name__ == "__main__":
    main()
