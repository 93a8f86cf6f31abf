"""Shared fixtures for the browser tests: a real MotionServer on an ephemeral port and a
headless Chromium (Debian's `chromium`, driven by Playwright for Python).

Run them with `make test-browser` (part of `make test`). Environment:
  MOTION_SERVER_BINARY  the server to start (default .build/debug/motion-server)
  CHROMIUM              the browser executable (default: `chromium` on PATH)
Screenshots and other artefacts go to .build/test-output/browser/ (see `output_dir`).
"""
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Server:
    """A motion-server process on 127.0.0.1 and an ephemeral port."""

    def __init__(self, binary, *arguments):
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", "--log-level", "error", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes) of one request; `body` may be a dict (sent as JSON)."""
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def post_json(self, path, body):
        """The decoded JSON answer of a POST that must succeed."""
        status, _, payload = self.request("POST", path, body)
        assert status == 200, f"{path} answered {status}: {payload[:500]!r}"
        return json.loads(payload)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("MOTION_SERVER_BINARY", str(ROOT / ".build/debug/motion-server"))
    if not os.path.exists(binary):
        pytest.fail(f"{binary} is missing: build it first (`swift build`)")
    instance = Server(binary)
    yield instance
    instance.stop()


@pytest.fixture(scope="session")
def browser():
    executable = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not executable:
        pytest.fail("chromium is missing: `make test-browser` installs it (scripts/install-deps.sh --test)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        instance = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=["--no-sandbox"])
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    instance = context.new_page()
    yield instance
    context.close()


@pytest.fixture(scope="session")
def output_dir():
    """Where tests save screenshots for people to look at."""
    folder = ROOT / ".build/test-output/browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
