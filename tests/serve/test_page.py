"""The page at `/` in a real headless browser (Debian's chromium, driven by Selenium): one input of each
modality, its label read from the page and its attention view drawn; a refused input shows its message."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve import launch
from tests.serve.conftest import require
from tests.serve.runs import png_bytes, wav_bytes

pytestmark = pytest.mark.slow

DRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")  # fmt: skip
CLASSES = {"text": {"neg", "pos"}, "image": {"bright", "dark"}, "audio": {"high", "low"},
           "protein": {"cytoplasm", "membrane"}}  # fmt: skip


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    chromium = shutil.which("chromium")
    require(
        chromium is not None and DRIVER.is_file(),
        "the page test needs Debian's chromium and chromium-driver: apt-get install chromium chromium-driver",
    )
    selenium = pytest.importorskip("selenium", reason="the page test needs selenium (pip install selenium)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert selenium is not None
    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def ask(driver: object, task: str, value: str | Path) -> None:
    """Choose the task, give the input (typed, or a file), clear the last answer and press Predict."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "task")).select_by_value(task)  # type: ignore[attr-defined]
    if isinstance(value, Path):
        driver.find_element(By.ID, "file").send_keys(str(value))  # type: ignore[attr-defined]
    else:
        box = driver.find_element(By.ID, "text")  # type: ignore[attr-defined]
        box.clear()
        box.send_keys(value)
    driver.execute_script(  # type: ignore[attr-defined]
        "document.getElementById('prediction').textContent = '';"
        "document.getElementById('attention').removeAttribute('data-drawn');"
        "document.getElementById('error').hidden = true;"
    )
    driver.find_element(By.ID, "predict").click()  # type: ignore[attr-defined]


def test_the_page_predicts_every_modality_and_draws_its_attention(
    joint_server: launch.Server, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    (tmp_path / "bright.png").write_bytes(png_bytes(210, size=16))
    (tmp_path / "tone.wav").write_bytes(wav_bytes(2500.0))
    cases = [
        ("text", "a good film, really good", "tokens"),
        ("image", tmp_path / "bright.png", "image"),
        ("audio", tmp_path / "tone.wav", "audio"),
        ("protein", "KRDEKRDEKKRRDDEE", "tokens"),
    ]
    browser.get(f"{joint_server.url}/")  # type: ignore[attr-defined]
    wait = WebDriverWait(browser, 60)
    wait.until(lambda d: d.find_element(By.ID, "predict").is_enabled())
    for task, value, kind in cases:
        ask(browser, task, value)
        wait.until(
            lambda d, kind=kind: d.find_element(By.ID, "attention").get_attribute("data-drawn") == kind
        )
        label = browser.find_element(By.ID, "prediction").text  # type: ignore[attr-defined]
        assert label in CLASSES[task], f"{task}: {label!r}"
        canvas = "picture" if kind != "tokens" else "matrix"
        assert browser.find_element(By.ID, canvas).is_displayed()  # type: ignore[attr-defined]
    ask(browser, "protein", "MKV1Z")
    wait.until(lambda d: d.find_element(By.ID, "error").is_displayed())
    message = browser.find_element(By.ID, "error").text  # type: ignore[attr-defined]
    assert message.startswith("422:") and "ESM alphabet" in message
