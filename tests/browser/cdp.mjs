// A small, dependency-free Chrome DevTools Protocol client for Node 20.
//
// Chromium is started with --remote-debugging-pipe: it reads commands from
// its fd 3 and writes replies and events to its fd 4, each message being one
// JSON text followed by a NUL byte. Pages are driven through flattened
// sessions (the sessionId travels inside each message).
//
// Every wait is bounded: by its own timeout and by the overall deadline given
// to launch(). When the deadline passes, or the browser dies, the browser is
// killed and everything still waiting fails with a DriverError naming what it
// was waiting for. A condition that a page does not meet in time (waitFor)
// fails with a plain WaitTimeout instead, so callers can tell a failing page
// from a failing driver.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The browser or the protocol failed: no verdict about the page is possible. */
export class DriverError extends Error {
  name = 'DriverError';
}

/** A page condition was not met in time. */
export class WaitTimeout extends Error {
  name = 'WaitTimeout';
}

/** The point a click or hover would hit belongs to another element. */
export class HitTestError extends Error {
  name = 'HitTestError';
}

// Requests to these schemes stay on this machine; anything else is recorded.
const LOCAL_SCHEMES = new Set(['file:', 'data:', 'blob:', 'about:']);

// Console API types worth reporting (console.warn has type "warning").
const CONSOLE_TYPES = new Set(['error', 'warning', 'assert']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Resolves true when promise settles within ms, false otherwise; the timer
// does not keep Node running once the promise has won.
function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts Chromium and returns a Browser once it answers over the pipe.
 * timeoutMs bounds the whole session, from launch to close.
 */
export async function launch({
  chromium = '/usr/bin/chromium',
  timeoutMs = 60_000,
  width = 1280,
  height = 900,
  args = [],
} = {}) {
  const browser = new Browser({ chromium, timeoutMs, width, height, args });
  try {
    await browser.start();
  } catch (err) {
    await browser.close();
    throw err;
  }
  return browser;
}

export class Browser {
  #child = null;
  #nextId = 1;
  #pending = new Map(); // id -> { method, resolve, reject, timer }
  #listeners = new Map(); // method -> Set of fn(params, sessionId)
  #waiters = new Set(); // reject functions of once() and waitFor() calls
  #readBuf = Buffer.alloc(0);
  #stderrTail = '';
  #overallTimer = null;
  #exited = null; // promise resolved when the process is gone
  #exitHook = null;
  #closing = false;

  constructor({ chromium, timeoutMs, width, height, args }) {
    this.chromium = chromium;
    this.timeoutMs = timeoutMs;
    this.width = width;
    this.height = height;
    this.extraArgs = args;
    this.deadline = Date.now() + timeoutMs;
    this.activity = 'the browser to start';
    this.failure = null; // the DriverError that ended the session, if any
    this.version = null;
    this.userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkdiff-chromium-'));
  }

  /** The browser's process id (its process group id too). */
  get pid() {
    return this.#child?.pid;
  }

  /** Milliseconds left before the overall deadline. */
  remaining() {
    return Math.max(0, this.deadline - Date.now());
  }

  async start() {
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-extensions',
      '--mute-audio',
      '--hide-scrollbars',
      `--window-size=${this.width},${this.height}`,
      `--user-data-dir=${this.userDataDir}`,
      '--remote-debugging-pipe',
      ...this.extraArgs,
      'about:blank',
    ];
    // detached: Chromium gets its own process group, so that killing the
    // group also ends its renderer and utility processes.
    const child = spawn(this.chromium, args, {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.once('exit', resolve);
      child.once('error', resolve);
    });
    this.#exitHook = () => this.#killNow(true);
    process.on('exit', this.#exitHook);

    child.once('error', (err) => {
      this.#fail(`could not start ${this.chromium}: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      if (!this.#closing) {
        const how = signal ? `signal ${signal}` : `code ${code}`;
        this.#fail(`chromium exited (${how}) while waiting for ${this.activity}`);
      }
    });
    child.stdout.resume(); // Chromium hardly writes there; just drain it.
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s) => {
      this.#stderrTail = (this.#stderrTail + s).slice(-4000);
    });
    child.stdio[3].on('error', () => {}); // EPIPE when Chromium dies; 'exit' reports it
    child.stdio[4].on('data', (chunk) => this.#onData(chunk));

    this.#overallTimer = setTimeout(() => {
      const pending = [...new Set([...this.#pending.values()].map((p) => p.method))];
      const detail = pending.length ? ` (no reply yet to ${pending.join(', ')})` : '';
      this.#fail(`overall timeout of ${this.timeoutMs} ms exceeded while waiting for ${this.activity}${detail}`, false);
    }, this.timeoutMs);

    const v = await this.send('Browser.getVersion', {}, undefined, { what: 'the browser to answer' });
    this.version = v.product;
    this.activity = 'the next command';
  }

  // Splits the byte stream into NUL-terminated JSON messages. Bytes are kept
  // until a whole message is there, so multi-byte characters are never cut.
  #onData(chunk) {
    this.#readBuf = this.#readBuf.length ? Buffer.concat([this.#readBuf, chunk]) : chunk;
    let end;
    while ((end = this.#readBuf.indexOf(0)) !== -1) {
      const text = this.#readBuf.subarray(0, end).toString('utf8');
      this.#readBuf = this.#readBuf.subarray(end + 1);
      let msg;
      try {
        msg = JSON.parse(text);
      } catch {
        this.#fail(`unparsable message from chromium: ${text.slice(0, 200)}`);
        return;
      }
      this.#dispatch(msg);
    }
  }

  #dispatch(msg) {
    if (msg.id !== undefined) {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) {
        p.reject(new DriverError(`${p.method} failed: ${msg.error.message}${msg.error.data ? ` (${msg.error.data})` : ''}`));
      } else {
        p.resolve(msg.result);
      }
      return;
    }
    for (const key of [msg.method, '*']) {
      for (const fn of this.#listeners.get(key) ?? []) {
        try {
          fn(msg.params ?? {}, msg.sessionId, msg.method);
        } catch (err) {
          process.stderr.write(`cdp: listener for ${msg.method} threw: ${err.stack}\n`);
        }
      }
    }
  }

  /**
   * Sends a command and resolves with its result. Fails with a DriverError on
   * a protocol error, or when no reply comes within timeoutMs (without it,
   * the overall deadline applies, and its timer reports what was awaited).
   */
  send(method, params = {}, sessionId = undefined, { timeoutMs, what } = {}) {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.#nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      let timer;
      if (timeoutMs !== undefined && timeoutMs < this.remaining()) {
        timer = setTimeout(() => {
          this.#pending.delete(id);
          reject(new DriverError(`timed out after ${timeoutMs} ms waiting for ${what ?? `a reply to ${method}`}`));
        }, timeoutMs);
      }
      this.#pending.set(id, { method, resolve, reject, timer });
      this.#child.stdio[3].write(JSON.stringify(msg) + '\0');
    });
  }

  /** Subscribes to an event ('*' for all); returns a function that unsubscribes. */
  on(method, fn) {
    if (!this.#listeners.has(method)) this.#listeners.set(method, new Set());
    this.#listeners.get(method).add(fn);
    return () => this.#listeners.get(method)?.delete(fn);
  }

  /**
   * Resolves with the params of the next `method` event for which
   * predicate(params, sessionId) holds. Create it before the command that
   * triggers the event. A timeout is a DriverError: events are the driver's
   * business, page conditions go through Page.waitFor.
   */
  once(method, predicate, what, timeoutMs) {
    let off, timer, rejectFn;
    const promise = new Promise((resolve, reject) => {
      rejectFn = reject;
      if (this.failure) return reject(this.failure);
      this.#waiters.add(reject);
      if (timeoutMs !== undefined && timeoutMs < this.remaining()) {
        timer = setTimeout(() => reject(new DriverError(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      }
      off = this.on(method, (params, sessionId) => {
        if (!predicate || predicate(params, sessionId)) resolve(params);
      });
    });
    const cleanup = () => {
      off?.();
      clearTimeout(timer);
      this.#waiters.delete(rejectFn);
    };
    promise.then(cleanup, cleanup);
    return promise;
  }

  /** Registers an extra rejection for the duration of a waitFor(). */
  _trackWaiter(reject) {
    this.#waiters.add(reject);
    return () => this.#waiters.delete(reject);
  }

  /** Opens a new tab, attaches to it and navigates to url. */
  async open(url, { width = this.width, height = this.height } = {}) {
    this.activity = 'a new tab';
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, targetId, width, height);
    await page.init();
    if (url) await page.goto(url);
    return page;
  }

  // Ends the session for good: every pending command and waiter fails with
  // the same DriverError, and the browser is killed. With withStderr, the
  // last lines Chromium wrote to stderr are appended, but for its D-Bus
  // complaints, which it always makes in a container.
  #fail(message, withStderr = true) {
    if (this.failure || this.#closing) return;
    const lines = withStderr ? this.#stderrTail.split('\n').filter((l) => l.trim() && !/dbus/i.test(l)) : [];
    const tail = lines.slice(-8).join('\n');
    this.failure = new DriverError(tail ? `${message}\n--- chromium stderr (last lines) ---\n${tail}` : message);
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      p.reject(this.failure);
      this.#pending.delete(id);
    }
    for (const reject of this.#waiters) reject(this.failure);
    this.#waiters.clear();
    this.#killNow(false);
  }

  #killNow(removeDir) {
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL'); // the whole group we created
      } catch {
        try {
          child.kill('SIGKILL');
        } catch {}
      }
    }
    if (removeDir) fs.rmSync(this.userDataDir, { recursive: true, force: true });
  }

  /**
   * Closes the browser (politely first, then SIGKILL), waits for it to exit
   * and removes the temporary profile. Safe to call more than once and after
   * a failure.
   */
  async close() {
    if (this.#closing) return;
    this.#closing = true;
    clearTimeout(this.#overallTimer);
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      p.reject(new DriverError(`browser closed while waiting for a reply to ${p.method}`));
      this.#pending.delete(id);
    }
    const child = this.#child;
    if (child && child.exitCode === null && child.signalCode === null && child.pid) {
      if (!this.failure) {
        try {
          child.stdio[3].write(JSON.stringify({ id: this.#nextId++, method: 'Browser.close' }) + '\0');
        } catch {}
      }
      const gone = await within(this.#exited, 3000);
      // Kill the group even after a clean exit: helper processes may linger.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
      if (!gone) await within(this.#exited, 3000);
    }
    fs.rmSync(this.userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    if (this.#exitHook) process.off('exit', this.#exitHook);
  }
}

export class Page {
  #offs = [];

  constructor(browser, sessionId, targetId, width, height) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.targetId = targetId;
    this.width = width;
    this.height = height;
    this.console = []; // { type, text, url, line }
    this.exceptions = []; // { text, url, line }
    this.network = []; // { url, method, type, load }
    this.loads = 0; // entries carry the number of the load they happened in
  }

  send(method, params = {}, opts = {}) {
    return this.browser.send(method, params, this.sessionId, opts);
  }

  #on(method, fn) {
    this.#offs.push(
      this.browser.on(method, (params, sessionId) => {
        if (sessionId === this.sessionId) fn(params);
      }),
    );
  }

  async init() {
    this.#on('Runtime.consoleAPICalled', (p) => {
      if (!CONSOLE_TYPES.has(p.type)) return;
      const frame = p.stackTrace?.callFrames?.[0];
      this.console.push({
        type: p.type,
        text: (p.args ?? []).map(remoteToString).join(' '),
        url: frame?.url ?? '',
        line: frame ? frame.lineNumber + 1 : 0,
        load: this.loads,
      });
    });
    this.#on('Log.entryAdded', ({ entry }) => {
      if (entry.level !== 'error') return;
      this.console.push({
        type: `log-${entry.source}-error`,
        text: entry.text,
        url: entry.url ?? '',
        line: (entry.lineNumber ?? -1) + 1,
        load: this.loads,
      });
    });
    this.#on('Runtime.exceptionThrown', ({ exceptionDetails: d }) => {
      this.exceptions.push({
        text: d.exception?.description ?? d.text,
        url: d.url || d.stackTrace?.callFrames?.[0]?.url || '',
        line: d.lineNumber + 1,
        load: this.loads,
      });
    });
    this.#on('Network.requestWillBeSent', ({ request, type }) => {
      if (!isLocalUrl(request.url)) this.network.push({ url: request.url, method: request.method, type: type ?? '', load: this.loads });
    });
    this.#on('Network.webSocketCreated', ({ url }) => {
      if (!isLocalUrl(url)) this.network.push({ url, method: 'GET', type: 'WebSocket', load: this.loads });
    });
    this.#on('Inspector.targetCrashed', () => {
      this.exceptions.push({ text: 'the renderer process crashed', url: '', line: 0, load: this.loads });
    });

    await Promise.all([
      this.send('Page.enable'),
      this.send('Runtime.enable'),
      this.send('Log.enable'),
      this.send('Network.enable'),
      this.send('Inspector.enable'),
    ]);
    // Requests are still reported (requestWillBeSent comes first), but never
    // leave the machine.
    await this.send('Network.setBlockedURLs', { urls: ['http://*', 'https://*', 'ws://*', 'wss://*', 'ftp://*'] });
    await this.send('Emulation.setFocusEmulationEnabled', { enabled: true });
    await this.#setViewport(this.width, this.height);
  }

  #setViewport(width, height) {
    return this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  /** Navigates and waits for the load event. */
  async goto(url) {
    this.loads++;
    this.browser.activity = `the load event of ${url}`;
    const loaded = this.browser.once('Page.loadEventFired', (_, s) => s === this.sessionId, `the load event of ${url}`);
    loaded.catch(() => {});
    const r = await this.send('Page.navigate', { url });
    if (r.errorText) throw new DriverError(`navigation to ${url} failed: ${r.errorText}`);
    await loaded;
  }

  /** Reloads and waits for the load event. */
  async reload() {
    this.loads++;
    this.browser.activity = 'the load event after a reload';
    const loaded = this.browser.once('Page.loadEventFired', (_, s) => s === this.sessionId, 'the load event after a reload');
    loaded.catch(() => {});
    await this.send('Page.reload', { ignoreCache: true });
    await loaded;
  }

  /**
   * Evaluates an expression in the page and returns its value (promises are
   * awaited). A function may be given instead, with JSON-serialisable
   * arguments: evaluate((a, b) => a + b, 1, 2). Throws an Error carrying the
   * page's exception when the evaluation throws.
   */
  async evaluate(expr, ...args) {
    const expression = typeof expr === 'function' ? `(${expr})(...${JSON.stringify(args)})` : expr;
    const r = await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
      userGesture: true,
    });
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(`evaluation failed: ${d.exception?.description ?? d.text}`);
    }
    return r.result.value;
  }

  /**
   * Polls expr (an expression, or a function with args) until it returns a
   * truthy value, and returns that value. Throws a WaitTimeout naming `what`
   * after timeoutMs (default 5 s), or the overall deadline's DriverError if
   * that comes first.
   */
  async waitFor(expr, what, { timeoutMs = 5000, intervalMs = 50, args = [] } = {}) {
    const end = Date.now() + timeoutMs;
    const previous = this.browser.activity;
    let lastError = null;
    let untrack;
    // Lets a browser failure interrupt the sleep between two polls.
    const failed = new Promise((_, reject) => {
      untrack = this.browser._trackWaiter(reject);
    });
    failed.catch(() => {});
    try {
      for (;;) {
        this.browser.activity = what;
        try {
          const v = await this.evaluate(expr, ...args);
          if (v) return v;
          lastError = null;
        } catch (err) {
          if (err instanceof DriverError) throw err;
          lastError = err;
        }
        if (Date.now() >= end) break;
        await Promise.race([sleep(Math.min(intervalMs, Math.max(0, end - Date.now()))), failed]);
      }
    } finally {
      untrack();
      this.browser.activity = previous;
    }
    if (this.browser.failure) throw this.browser.failure;
    throw new WaitTimeout(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ''}`);
  }

  /**
   * Scrolls the index-th element matching selector into view and returns the
   * centre of its visible part, in viewport coordinates (with aim, the centre
   * of the element's first descendant matching that selector, e.g.
   * ':scope > rect'). Unless hitTest is false, checks that the element found at
   * this point belongs to the target and not to an overlay or a nested match.
   */
  async #pointOf(selector, { index = 0, aim = null, hitTest = true } = {}) {
    const r = await this.evaluate(
      async (selector, index, aim) => {
        const el = document.querySelectorAll(selector)[index];
        if (!el) return { error: `no element matches ${selector} (index ${index})` };
        const part = (aim && el.querySelector(aim)) || el;
        part.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
        const b = part.getBoundingClientRect();
        // The part of the box inside the viewport.
        const left = Math.max(b.left, 0);
        const top = Math.max(b.top, 0);
        const right = Math.min(b.right, innerWidth);
        const bottom = Math.min(b.bottom, innerHeight);
        if (right <= left || bottom <= top) return { error: `${selector} (index ${index}) has no visible area (box ${b.width}x${b.height})` };
        const x = (left + right) / 2;
        const y = (top + bottom) / 2;
        const hit = document.elementFromPoint(x, y);
        const describe = (n) => (n ? `<${n.tagName.toLowerCase()}${n.id ? `#${n.id}` : ''}${n.classList.length ? `.${[...n.classList].join('.')}` : ''}>` : 'nothing');
        return { x, y, hitOk: Boolean(hit) && hit.closest(selector) === el, hit: describe(hit) };
      },
      selector,
      index,
      aim,
    );
    if (r.error) throw new Error(r.error);
    if (hitTest && !r.hitOk) {
      throw new HitTestError(`${selector} (index ${index}): the point (${r.x.toFixed(1)}, ${r.y.toFixed(1)}) hits ${r.hit} instead`);
    }
    return r;
  }

  /** Moves the mouse to a viewport point. */
  mouseMove(x, y) {
    return this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, button: 'none', buttons: 0 });
  }

  /** Moves the mouse over the centre of an element. */
  async hover(selector, opts = {}) {
    const { x, y } = await this.#pointOf(selector, opts);
    await this.mouseMove(x, y);
  }

  /** Clicks the centre of an element with the left button. */
  async click(selector, opts = {}) {
    const { x, y } = await this.#pointOf(selector, opts);
    await this.mouseMove(x, y);
    const base = { x, y, button: 'left', clickCount: 1 };
    await this.send('Input.dispatchMouseEvent', { ...base, type: 'mousePressed', buttons: 1 });
    await this.send('Input.dispatchMouseEvent', { ...base, type: 'mouseReleased', buttons: 0 });
  }

  /**
   * Focuses an input and inserts text as if typed. With replace, the current
   * value is cleared first (an `input` event reports the clearing). If the
   * insertion raised no `input` event, one is dispatched.
   */
  /** Presses and releases one key (`Enter`, `Escape`, …) on the focused element. */
  async press(key) {
    const codes = { Enter: 13, Escape: 27, ' ': 32 };
    const base = { key, code: key === ' ' ? 'Space' : key, windowsVirtualKeyCode: codes[key] ?? 0 };
    await this.send('Input.dispatchKeyEvent', { type: 'keyDown', ...base });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...base });
  }

  async type(selector, text, { replace = false } = {}) {
    const found = await this.evaluate(
      (selector, replace) => {
        const el = document.querySelector(selector);
        if (!el) return false;
        el.focus();
        if (replace && el.value !== '') {
          el.value = '';
          el.dispatchEvent(new Event('input', { bubbles: true }));
        }
        window.__cdpInputSeen = false;
        el.addEventListener('input', () => (window.__cdpInputSeen = true), { once: true });
        return true;
      },
      selector,
      replace,
    );
    if (!found) throw new Error(`no element matches ${selector}`);
    if (text === '') return;
    await this.send('Input.insertText', { text });
    await this.evaluate((selector) => {
      if (!window.__cdpInputSeen) document.querySelector(selector)?.dispatchEvent(new Event('input', { bubbles: true }));
      delete window.__cdpInputSeen;
    }, selector);
  }

  /**
   * Saves a PNG. With fullPage, the viewport is stretched to the content's
   * height for the capture (at most 16384 px) and restored afterwards.
   */
  async screenshot(file, { fullPage = false } = {}) {
    let data;
    if (fullPage) {
      const m = await this.send('Page.getLayoutMetrics');
      const size = m.cssContentSize ?? m.contentSize;
      const width = Math.max(this.width, Math.ceil(size.width));
      const height = Math.min(16384, Math.max(this.height, Math.ceil(size.height)));
      await this.#setViewport(width, height);
      try {
        await this.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        ({ data } = await this.send('Page.captureScreenshot', { format: 'png' }));
      } finally {
        await this.#setViewport(this.width, this.height);
      }
    } else {
      ({ data } = await this.send('Page.captureScreenshot', { format: 'png' }));
    }
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    fs.writeFileSync(file, Buffer.from(data, 'base64'));
  }

  /** Closes the tab and stops recording. */
  async close() {
    for (const off of this.#offs) off();
    this.#offs = [];
    if (!this.browser.failure) await this.browser.send('Target.closeTarget', { targetId: this.targetId }).catch(() => {});
  }
}

function isLocalUrl(url) {
  try {
    return LOCAL_SCHEMES.has(new URL(url).protocol);
  } catch {
    return false;
  }
}

// Renders a console argument (a Runtime.RemoteObject) as text.
function remoteToString(o) {
  if ('value' in o) return typeof o.value === 'string' ? o.value : JSON.stringify(o.value);
  return o.unserializableValue ?? o.description ?? o.type;
}
