"""The broker's console in a real browser (issue 30): Debian's headless Chromium driven by
Selenium (with Debian's chromedriver: nothing is downloaded), against a broker the test starts.

A signed-in operator watches a queue's depth change as messages are sent (the page refreshes
itself), reads a message, sees the connections, consumers and durable subscriptions, and moves
messages from the dead-letter queue back; a read-only user tries to purge and the page tells
them why not.

``CONSOLE_SCREENSHOTS=DIR`` saves the pages as PNGs there (how docs/images/console-*.png are made).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_helpers import RULES, USERS

from amqp_jms import ConnectionFactory, Queue, Topic

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="needs Debian's chromium and chromium-driver (./scripts/install)")

SHOTS = os.environ.get("CONSOLE_SCREENSHOTS")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,900",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def _send(url: str, queue: str, n: int, first: int = 0) -> None:
    with ConnectionFactory(url, username="root", password="r-pw").create_connection() as c:
        s = c.create_session()
        p = s.create_producer(Queue(queue))
        for i in range(first, first + n):
            m = s.create_text_message(f"order {i}")
            m.set_string_property("region", "EU")
            p.send(m)


def _waiter(driver: Any, seconds: float) -> Any:
    """A wait that takes any WebDriver error while it polls for "not yet": pages replace their
    content every 2 s, so an element found a moment ago may be gone when its text is read, which
    Chromium reports as "Node with given id does not belong to the document" (a plain
    WebDriverException, not a StaleElementReferenceException). A real failure still ends in the
    wait's TimeoutException, carrying the last error."""
    from selenium.common.exceptions import WebDriverException

    return WebDriverWait(driver, seconds, ignored_exceptions=(WebDriverException,))


def _shot(driver: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(SHOTS) / f"console-{name}.png"))


def _sign_in(driver: Any, base: str, user: str) -> None:
    driver.get(base + "logout")
    driver.get(base)
    driver.find_element(By.NAME, "user").send_keys(user)
    driver.find_element(By.NAME, "password").send_keys(USERS[user])
    _click(driver, By.CSS_SELECTOR, "form.login button")
    _waiter(driver, 10).until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Overview"))


def _click(driver: Any, by: str, value: str) -> None:
    """Find and click, again if the page was being replaced meanwhile (pages refresh their
    content every 2 s, and a form's answer replaces the page): an element found just before that
    is gone when clicked."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + 10
    while True:
        try:
            driver.find_element(by, value).click()
            return
        except WebDriverException:
            try:
                if not driver.find_elements(by, value):
                    return  # the click went through and the page moved on: the caller's wait decides
            except WebDriverException:
                pass
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _depth_cell(driver: Any, queue: str) -> str:
    row = driver.find_element(By.XPATH, f"//a[text()='{queue}']/ancestor::tr")
    return str(row.find_elements(By.TAG_NAME, "td")[2].text)


def test_an_operator_watches_reads_and_repairs_in_a_browser(broker_factory: Any, browser: Any) -> None:
    broker = broker_factory(users=USERS, authorization=RULES, console=True, metrics="127.0.0.1:0")
    base = broker.console_url
    wait = _waiter(browser, 15)
    _send(broker.url, "orders.eu", 3)
    _send(broker.url, "DLQ", 2)

    _sign_in(browser, base, "root")
    _shot(browser, "overview")
    _click(browser, By.LINK_TEXT, "Queues")
    wait.until(lambda d: _depth_cell(d, "orders.eu") == "3")
    _send(broker.url, "orders.eu", 2, 3)  # the open page follows, with no reload
    wait.until(lambda d: _depth_cell(d, "orders.eu") == "5")
    _shot(browser, "queues")

    _click(browser, By.LINK_TEXT, "orders.eu")
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "order 4"))
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "region (String) = EU"))
    _shot(browser, "queue")

    with ConnectionFactory(broker.url, username="root", password="r-pw").create_connection() as conn:
        conn.set_client_id("billing")
        conn.start()
        session = conn.create_session()
        session.create_durable_consumer(Topic("prices"), "daily", "currency = 'EUR'")
        session.create_consumer(Queue("orders.us"), "region = 'US'")
        _click(browser, By.LINK_TEXT, "Connections")  # who is connected, reading what, with what credit
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "region = 'US'"))
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "billing"))
        _shot(browser, "connections")
        _click(browser, By.LINK_TEXT, "Subscriptions")
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "billing:daily"))
        wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "currency = 'EUR'"))
        _shot(browser, "subscriptions")

    browser.get(base + "queues/DLQ")
    browser.find_element(By.NAME, "destination").send_keys("orders.eu")
    browser.find_element(By.TAG_NAME, "h1").click()  # the field loses the focus, its text stays
    time.sleep(4.5)  # two refresh periods: what the operator typed is not wiped by a refresh
    assert browser.find_element(By.NAME, "destination").get_attribute("value") == "orders.eu"
    _click(browser, By.XPATH, "//button[text()='Move messages']")
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Confirm"))
    _click(browser, By.XPATH, "//button[starts-with(text(), 'Yes')]")
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "done (2 messages)"))
    _shot(browser, "moved")
    _click(browser, By.LINK_TEXT, "Queues")
    wait.until(lambda d: _depth_cell(d, "orders.eu") == "7" and _depth_cell(d, "DLQ") == "0")

    _sign_in(browser, base, "bob")
    browser.get(base + "queues/orders.eu")
    _click(browser, By.XPATH, "//button[text()='Purge']")
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Confirm"))
    _click(browser, By.XPATH, "//button[starts-with(text(), 'Yes')]")
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "may not manage"))
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "main"), "bob"))
    _shot(browser, "refused")
    assert broker.metrics().queue("orders.eu").depth == 7  # nothing purged
