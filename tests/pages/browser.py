"""Drive headless chromium through the DevTools protocol, for the page tests.

    with Page("viz/out.html") as page:
        page.eval("document.title")
        page.click("#button")
        assert not page.console_errors and not page.network_requests

Only Debian's python3 packages are needed: python3-websocket and python3-pil
(the latter for is_blank). Every wait has a timeout and its error names what
it waited for; chromium runs in a process group of its own that is killed on
close (and at interpreter exit, should a caller forget to close).
"""

import atexit
import base64
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"


def reexec_with_system_python_if_needed():
    """Re-run the calling script under Debian's python3 when this interpreter
    lacks python3-websocket or python3-pil (e.g. a pyenv shim comes first on
    PATH). Call it before anything else in a script's main."""
    try:
        import websocket  # noqa: F401
        import PIL  # noqa: F401
        return
    except ImportError:
        pass
    if os.path.exists(SYSTEM_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) \
            and not os.environ.get("HEED_PAGES_REEXEC"):
        os.environ["HEED_PAGES_REEXEC"] = "1"
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)


def find_chromium():
    """The chromium binary: /usr/bin/chromium, else chromium or
    chromium-browser on PATH, else None."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Page:
    """One headless chromium showing one local HTML file.

    console_errors: console.error / console.assert messages, uncaught
        exceptions and Log entries of level error, in arrival order.
    network_requests: URLs of every request except the page's own file://
        URL and data:/blob: URLs, including those the browser then blocked.
    blocked_requests: "URL (blocked: reason)" of those requests that the
        browser refused to make (reason "csp" for the Content-Security-Policy).
    console_messages: every console message as "type: text" (for diagnosis).

    before_load: JS run in the page before any of its own scripts (as
        DevTools runs it, whatever the page's Content-Security-Policy), e.g.
        to listen for securitypolicyviolation events from the start.
    """

    def __init__(self, html_path, width=1400, height=900, timeout=30, before_load=None):
        self.timeout = timeout
        self.width, self.height = width, height
        self.url = Path(html_path).resolve().as_uri()
        self.before_load = before_load
        self.console_errors = []
        self.console_messages = []
        self.network_requests = []
        self.blocked_requests = []
        self._request_urls = {}  # requestId -> URL, to name a request that fails
        self._proc = None
        self._ws = None
        self._next_id = 0
        self._events = []
        self._closed = False
        self._tmp = tempfile.mkdtemp(prefix="heed-chromium-")
        atexit.register(self.close)
        try:
            self._launch()
            self._open_page()
        except BaseException:
            self.close()
            raise

    # --- life cycle -----------------------------------------------------

    def _launch(self):
        binary = find_chromium()
        if binary is None:
            raise BrowserError("chromium not found")
        profile = os.path.join(self._tmp, "profile")
        os.mkdir(profile)
        # stderr goes to a file: a pipe nobody reads could fill and block chromium.
        self._stderr_path = os.path.join(self._tmp, "stderr.txt")
        args = [
            binary, "--headless=new", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--disable-component-update", "--disable-default-apps", "--mute-audio",
            "--hide-scrollbars", "--force-device-scale-factor=1",
            f"--window-size={self.width},{self.height}",
            f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank",
        ]
        with open(self._stderr_path, "wb") as err:
            self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=err, start_new_session=True)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        self._port = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BrowserError(f"chromium exited with status {self._proc.returncode} before opening "
                                   f"its DevTools port; its stderr ends:\n{self._stderr_tail()}")
            self._port = self._read_port(port_file)
            if self._port:
                return
            time.sleep(0.05)
        raise BrowserError(f"timed out after {self.timeout}s waiting for chromium's DevTools port "
                           f"(DevToolsActivePort file or 'DevTools listening on' in stderr); "
                           f"its stderr ends:\n{self._stderr_tail()}")

    def _read_port(self, port_file):
        try:
            with open(port_file) as f:
                first = f.readline().strip()
            if first.isdigit():
                return int(first)
        except OSError:
            pass
        try:
            with open(self._stderr_path, errors="replace") as f:
                for line in f:
                    if "DevTools listening on ws://" in line:
                        hostport = line.split("ws://", 1)[1].split("/", 1)[0]
                        return int(hostport.rsplit(":", 1)[1])
        except (OSError, ValueError, IndexError):
            pass
        return None

    def _stderr_tail(self, lines=15):
        try:
            with open(self._stderr_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no stderr)"

    def _open_page(self):
        import websocket  # python3-websocket

        # A fresh tab of our own; its websocket speaks to that page alone.
        base = f"http://127.0.0.1:{self._port}"
        try:
            req = urllib.request.Request(f"{base}/json/new?about:blank", method="PUT")
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                target = json.load(r)
        except OSError as e:
            raise BrowserError(f"could not open a tab through chromium's DevTools HTTP endpoint: {e}")
        # suppress_origin: chromium refuses DevTools websockets that send an Origin header.
        try:
            self._ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=self.timeout,
                                                   suppress_origin=True)
        except Exception as e:
            raise BrowserError(f"could not connect to the tab's DevTools websocket: {e}")
        for domain in ("Runtime", "Log", "Network", "Page"):
            self._send(f"{domain}.enable")
        self._send("Emulation.setDeviceMetricsOverride",
                   width=self.width, height=self.height, deviceScaleFactor=1, mobile=False)
        if self.before_load:
            self._send("Page.addScriptToEvaluateOnNewDocument", source=self.before_load)
        self._events.clear()
        result = self._send("Page.navigate", url=self.url)
        if result.get("errorText"):
            raise BrowserError(f"navigating to {self.url} failed: {result['errorText']}")
        self._wait_event("Page.loadEventFired", f"the load event of {self.url}")

    def close(self):
        if self._closed:
            return
        self._closed = True
        if self._ws is not None:
            try:
                self._ws.close()
            except Exception:
                pass
        if self._proc is not None and self._proc.poll() is None:
            # The whole group: chromium's zygote, renderer and GPU processes too.
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(self._proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self._proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._proc is not None:
            # Children may outlive the main process briefly; take the group down anyway.
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # --- protocol ---------------------------------------------------------

    def _recv(self, deadline, waiting_for):
        import websocket

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BrowserError(f"timed out after {self.timeout}s waiting for {waiting_for}")
        self._ws.settimeout(remaining)
        try:
            raw = self._ws.recv()
        except websocket.WebSocketTimeoutException:
            raise BrowserError(f"timed out after {self.timeout}s waiting for {waiting_for}")
        except (websocket.WebSocketException, OSError) as e:
            raise BrowserError(f"the DevTools connection broke while waiting for {waiting_for}: {e}")
        msg = json.loads(raw)
        if "method" in msg:
            self._on_event(msg)
        return msg

    def _on_event(self, msg):
        method, p = msg["method"], msg.get("params", {})
        self._events.append(msg)
        if method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_to_text(a) for a in p.get("args", []))
            self.console_messages.append(f"{p.get('type')}: {text}")
            if p.get("type") in ("error", "assert"):
                self.console_errors.append(f"console.{p.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            desc = d.get("exception", {}).get("description") or d.get("text", "exception")
            self.console_errors.append(f"uncaught: {desc} (line {d.get('lineNumber')})")
        elif method == "Log.entryAdded":
            e = p.get("entry", {})
            if e.get("level") == "error":
                self.console_errors.append(f"log: {e.get('text')} {e.get('url') or ''}".strip())
        elif method == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if url != self.url and not url.startswith(("data:", "blob:")) and url != "about:blank":
                self.network_requests.append(url)
                self._request_urls[p.get("requestId")] = url
        elif method == "Network.loadingFailed":
            url = self._request_urls.get(p.get("requestId"))
            if url is not None and p.get("blockedReason"):
                self.blocked_requests.append(f"{url} (blocked: {p['blockedReason']})")

    def _send(self, method, **params):
        self._next_id += 1
        mid = self._next_id
        self._ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._recv(deadline, f"the answer to {method}")
            if msg.get("id") == mid:
                if "error" in msg:
                    raise BrowserError(f"{method} failed: {msg['error'].get('message')} "
                                       f"{msg['error'].get('data', '')}".strip())
                return msg.get("result", {})

    def _wait_event(self, method, what):
        deadline = time.monotonic() + self.timeout
        for msg in self._events:
            if msg.get("method") == method:
                return msg
        while True:
            msg = self._recv(deadline, what)
            if msg.get("method") == method:
                return msg

    def pump(self, seconds=0.1):
        """Let events that arrive in the next `seconds` land in the lists."""
        import websocket

        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self._ws.settimeout(left)
            try:
                msg = json.loads(self._ws.recv())
            except websocket.WebSocketTimeoutException:
                return
            if "method" in msg:
                self._on_event(msg)

    # --- the API the tests use ---------------------------------------------

    def eval(self, js):
        """The value of the JS expression (promises awaited), by value.
        Raises BrowserError with the exception text if it throws."""
        r = self._send("Runtime.evaluate", expression=js, returnByValue=True, awaitPromise=True,
                       userGesture=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            desc = d.get("exception", {}).get("description") or d.get("text")
            raise BrowserError(f"JS threw: {desc}\n  in: {js[:200]}")
        return r.get("result", {}).get("value")

    def wait_for(self, js, what=None, timeout=None):
        """Poll the JS expression until it is truthy; return its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            v = self.eval(js)
            if v:
                return v
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out after {timeout or self.timeout}s waiting for {what or js}")
            self.pump(0.05)

    def _centre(self, selector):
        return self.centre(f"document.querySelector({json.dumps(selector)})", repr(selector))

    def centre(self, element_js, what=None):
        """The (x, y) centre of the element that the JS expression element_js gives, scrolled
        into view first: for elements a selector cannot name (one in a list, say)."""
        what = what or element_js
        pos = self.eval(f"""(() => {{
            const el = {element_js};
            if (!el) return null;
            el.scrollIntoView({{block: 'center', inline: 'center'}});
            const r = el.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height];
        }})()""")
        if pos is None:
            raise BrowserError(f"no element {what}")
        if pos[2] <= 0 or pos[3] <= 0:
            raise BrowserError(f"the element {what} has no size (hidden?)")
        # Wait a frame so that layout after scrolling has settled.
        self.eval("new Promise(r => requestAnimationFrame(() => r(0)))")
        return pos[0], pos[1]

    def _mouse(self, type_, x, y, **kw):
        self._send("Input.dispatchMouseEvent", type=type_, x=x, y=y, **kw)

    def click(self, selector, double=False):
        """Real mouse events at the element's centre (scrolled into view first).
        double=True sends two clicks, the second with clickCount 2, as a
        person's double-click does (so click, click, dblclick fire)."""
        self.click_at(*self._centre(selector), double=double)

    def click_at(self, x, y, double=False):
        """click() at (x, y) in CSS pixels of the viewport."""
        self._mouse("mouseMoved", x, y)
        for count in ((1, 2) if double else (1,)):
            self._mouse("mousePressed", x, y, button="left", buttons=1, clickCount=count)
            self._mouse("mouseReleased", x, y, button="left", buttons=0, clickCount=count)
        self.eval("new Promise(r => requestAnimationFrame(() => r(0)))")

    def move_to(self, x, y):
        """The mouse to (x, y) in CSS pixels of the viewport, as a person moves it."""
        self._mouse("mouseMoved", x, y)
        self.eval("new Promise(r => requestAnimationFrame(() => r(0)))")

    def hover(self, selector):
        self.move_to(*self._centre(selector))

    def drag(self, x0, y0, x1, y1):
        """The left button pressed at (x0, y0), moved to (x1, y1) and released there."""
        self._mouse("mouseMoved", x0, y0)
        self._mouse("mousePressed", x0, y0, button="left", buttons=1, clickCount=1)
        self._mouse("mouseMoved", x1, y1, button="left", buttons=1)
        self._mouse("mouseReleased", x1, y1, button="left", buttons=0, clickCount=1)
        self.eval("new Promise(r => requestAnimationFrame(() => r(0)))")

    def press_key(self, key, code=None, key_code=None):
        """A key press (keyDown + keyUp), e.g. press_key('Escape', 'Escape', 27)."""
        kw = {"key": key, "code": code or key}
        if key_code is not None:
            kw["windowsVirtualKeyCode"] = key_code
        self._send("Input.dispatchKeyEvent", type="keyDown", **kw)
        self._send("Input.dispatchKeyEvent", type="keyUp", **kw)

    def screenshot_png(self):
        r = self._send("Page.captureScreenshot", format="png")
        return base64.b64decode(r["data"])


def _remote_to_text(obj):
    if "value" in obj:
        return str(obj["value"])
    return obj.get("description") or obj.get("type", "")


def is_blank(png):
    """True when the PNG has a single colour."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        # getcolors(1) gives None as soon as a second colour appears.
        return im.convert("RGBA").getcolors(1) is not None


if __name__ == "__main__":
    # Smoke test: python3 tests/pages/browser.py some.html
    reexec_with_system_python_if_needed()
    with Page(sys.argv[1]) as p:
        print("title:", p.eval("document.title"))
        print("console errors:", p.console_errors)
        print("network requests:", p.network_requests)
        print("blank:", is_blank(p.screenshot_png()))
