"""A small driver for headless Chromium over the DevTools protocol, on a pipe (no extra packages).

Chromium started with --remote-debugging-pipe reads protocol messages from its file descriptor 3
and writes them to 4, each a JSON object ended by a NUL byte. The report uses it to print the PDF
(page numbers, an outline, folded blocks printed open) and the browser test to load the page,
collect console errors, measure the layout at phone width and take screenshots.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

# Quiet and reproducible: no network calls of the browser's own, a fresh profile each run.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio"]


class BrowserError(Exception):
    pass


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, chromium=None, timeout_s=300):
        self.chromium = chromium or find_chromium()
        if not self.chromium:
            raise BrowserError("no chromium on PATH (scripts/setup-deps.sh installs it)")
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="workbook-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_pipes():  # in the child: the protocol's fixed descriptors 3 and 4
            # Move both ends clear of 3 and 4 first: a pipe end may itself be 3 or 4.
            read_end = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(
            [self.chromium, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire_pipes)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    # -- protocol -------------------------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError("chromium closed the protocol pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, params=None, session=True, timeout_s=None):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and hasattr(self, "session"):
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, event, timeout_s=None):
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == event:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    # -- page -----------------------------------------------------------------------------------
    def open(self, url, width=1280, height=900, mobile=False):
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.viewport(width, height, mobile)
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def viewport(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def console_errors(self):
        errors = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                errors.append(p["exceptionDetails"].get("exception", {}).get("description")
                              or p["exceptionDetails"].get("text"))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append(f"{p['entry'].get('source')}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return errors

    def screenshot(self, path, full_page=False, clip=None):
        params = {"format": "png"}
        if clip:
            params["clip"] = {**clip, "scale": 1}
            params["captureBeyondViewport"] = True
        elif full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def print_pdf(self, path, title=""):
        """Prints the loaded page as the reader would want it on paper: every folded block open,
        page numbers in the footer, the headings as the PDF's outline."""
        self.evaluate("document.querySelectorAll('details').forEach(d => d.open = true); true")
        footer = ('<div style="font: 8px sans-serif; color: #666; width: 100%; padding: 0 12mm; '
                  'display: flex; justify-content: space-between;">'
                  f'<span>{title}</span><span><span class="pageNumber"></span> / '
                  '<span class="totalPages"></span></span></div>')
        params = {"printBackground": True, "displayHeaderFooter": True, "headerTemplate": "<span></span>",
                  "footerTemplate": footer, "marginTop": 0.5, "marginBottom": 0.6, "marginLeft": 0.5,
                  "marginRight": 0.5, "paperWidth": 8.27, "paperHeight": 11.69,
                  "generateDocumentOutline": True, "generateTaggedPDF": True}
        # A hundred pages take a while on a busy machine: a generous deadline for this one call.
        try:
            data = self.call("Page.printToPDF", params, timeout_s=600)["data"]
        except BrowserError as e:
            if "did not answer" in str(e) or "closed" in str(e):
                raise
            for key in ("generateDocumentOutline", "generateTaggedPDF"):  # an older Chromium without them
                params.pop(key)
            data = self.call("Page.printToPDF", params, timeout_s=600)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", session=False)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
