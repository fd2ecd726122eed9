#!/usr/bin/env node
// Drive headless Chromium over the DevTools protocol to capture CPU profiles and heap
// snapshots of a page. Used by capture-browser.sh and tests/data/gen/dom.sh; needs only
// Node.js 20 and Chromium, no npm packages.
//
// Usage:
//   node capture-browser-cdp.js trace    URL OUT RUNS
//       Trace Event JSON (object form, as Chromium streams it) recorded with
//       Tracing.start / Tracing.end on the browser target, while the page at URL calls
//       window.runPlain() RUNS times.
//   node capture-browser-cdp.js selfprof URL OUT
//       The string returned by window.runProfiled() (JS Self-Profiling API), written as-is.
//       The page must be served with `Document-Policy: js-profiling`.
//   node capture-browser-cdp.js heap URL OUT-PREFIX EXPRESSION
//       Two heap snapshots of the page at URL (HeapProfiler.takeHeapSnapshot, each after
//       HeapProfiler.collectGarbage): OUT-PREFIX-0.heapsnapshot once the page has loaded,
//       and OUT-PREFIX-1.heapsnapshot after evaluating EXPRESSION in it. Chromium also gets
//       --disable-gpu and --disable-quic here.
//
// Every capture uses a fresh browser with a fresh profile directory. Chromium is started
// with --remote-debugging-pipe: the protocol runs over file descriptors 3 (to the browser)
// and 4 (from the browser), one JSON message per NUL-terminated record, so no WebSocket
// client is needed. The environment variable CHROMIUM names the browser binary (default
// "chromium").

'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Categories for the `trace` mode. The CPU profiler category is the one that matters
// (Profile / ProfileChunk events); the others add the usual DevTools timeline events around
// it, as a Performance-panel recording has.
const TRACE_CATEGORIES = [
  'disabled-by-default-v8.cpu_profiler',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8.execute',
];

// Quiet time before and after the workload, so that the page has settled when the
// workload starts and the profiler has a few idle samples on either side.
const SETTLE_MS = 500;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function usage() {
  process.stderr.write(
    'usage: capture-browser-cdp.js trace URL OUT RUNS\n' +
      '       capture-browser-cdp.js selfprof URL OUT\n' +
      '       capture-browser-cdp.js heap URL OUT-PREFIX EXPRESSION\n',
  );
  process.exit(2);
}

class Browser {
  constructor(extraArgs = []) {
    this.profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'capture-browser-'));
    const args = [
      '--headless',
      '--remote-debugging-pipe',
      `--user-data-dir=${this.profileDir}`,
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-extensions',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      ...extraArgs,
      'about:blank',
    ];
    // Chromium refuses to start its sandbox as root.
    if (typeof process.getuid === 'function' && process.getuid() === 0) args.unshift('--no-sandbox');

    this.nextId = 1;
    this.pending = new Map(); // command id -> { resolve, reject, method }
    this.listeners = []; // functions called with every event message
    this.stderr = '';

    this.child = spawn(process.env.CHROMIUM || 'chromium', args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => resolve(`chromium exited (code ${code}, signal ${signal})`));
      this.child.on('error', (err) => resolve(`cannot run chromium: ${err.message}`));
    });
    this.exited.then((why) => {
      for (const { reject } of this.pending.values()) reject(new Error(`${why}\n${this.stderr}`));
      this.pending.clear();
    });
    this.child.stderr.on('data', (d) => {
      this.stderr += d;
    });

    this.toBrowser = this.child.stdio[3];
    this.toBrowser.on('error', () => {}); // reported through `exited`
    let buffered = Buffer.alloc(0);
    this.child.stdio[4].on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      let end;
      while ((end = buffered.indexOf(0)) !== -1) {
        const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
        buffered = buffered.subarray(end + 1);
        this.dispatch(message);
      }
    });
  }

  dispatch(message) {
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${waiter.method}: ${JSON.stringify(message.error)}`));
      else waiter.resolve(message.result);
      return;
    }
    for (const listener of [...this.listeners]) listener(message);
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.toBrowser.write(JSON.stringify(message) + '\0');
    });
  }

  // Resolves with the params of the next event `method` (on `sessionId`, if given).
  waitFor(method, sessionId = undefined, timeoutMs = 120000) {
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${method}`));
      }, timeoutMs);
      const listener = (message) => {
        if (message.method !== method) return;
        if (sessionId && message.sessionId !== sessionId) return;
        done();
        resolve(message.params);
      };
      this.listeners.push(listener);
    });
  }

  // Attaches to the browser's first tab and returns the session id.
  async attachToPage() {
    const { targetInfos } = await this.send('Target.getTargets');
    const page = targetInfos.find((t) => t.type === 'page');
    if (!page) throw new Error('chromium has no page target');
    const { sessionId } = await this.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    await this.send('Page.enable', {}, sessionId);
    await this.send('Runtime.enable', {}, sessionId);
    return sessionId;
  }

  async navigate(sessionId, url) {
    const loaded = this.waitFor('Page.loadEventFired', sessionId);
    const { errorText } = await this.send('Page.navigate', { url }, sessionId);
    if (errorText) throw new Error(`navigating to ${url}: ${errorText}`);
    await loaded;
  }

  async evaluate(sessionId, expression) {
    const { result, exceptionDetails } = await this.send(
      'Runtime.evaluate',
      { expression, awaitPromise: true, returnByValue: true },
      sessionId,
    );
    if (exceptionDetails) {
      const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
      throw new Error(`evaluating ${expression}: ${text}`);
    }
    return result.value;
  }

  async close() {
    this.send('Browser.close').catch(() => {}); // the browser may exit before it answers
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20000);
    await this.exited;
    clearTimeout(timer);
    fs.rmSync(this.profileDir, { recursive: true, force: true });
  }
}

async function captureTrace(url, out, runs) {
  const browser = new Browser();
  try {
    const session = await browser.attachToPage();
    // Started on the browser target (no session), so every process is traced: the browser,
    // the page's renderer and whatever other renderers Chromium runs.
    await browser.send('Tracing.start', {
      traceConfig: {
        recordMode: 'recordAsMuchAsPossible',
        includedCategories: TRACE_CATEGORIES,
        excludedCategories: ['*'],
      },
      transferMode: 'ReturnAsStream',
      streamFormat: 'json',
      streamCompression: 'none',
    });
    await browser.navigate(session, url);
    await sleep(SETTLE_MS);
    for (let i = 0; i < runs; i++) await browser.evaluate(session, 'window.runPlain()');
    await sleep(SETTLE_MS);
    const complete = browser.waitFor('Tracing.tracingComplete');
    await browser.send('Tracing.end');
    const { stream } = await complete;
    const fd = fs.openSync(out, 'w');
    try {
      for (;;) {
        const { data, eof, base64Encoded } = await browser.send('IO.read', { handle: stream, size: 1 << 20 });
        fs.writeSync(fd, Buffer.from(data, base64Encoded ? 'base64' : 'utf8'));
        if (eof) break;
      }
    } finally {
      fs.closeSync(fd);
    }
    await browser.send('IO.close', { handle: stream });
  } finally {
    await browser.close();
  }
}

async function captureSelfProfile(url, out) {
  const browser = new Browser();
  try {
    const session = await browser.attachToPage();
    await browser.navigate(session, url);
    await sleep(SETTLE_MS);
    const json = await browser.evaluate(session, 'window.runProfiled()');
    if (typeof json !== 'string') throw new Error(`runProfiled() returned a ${typeof json}, not a string`);
    fs.writeFileSync(out, json);
  } finally {
    await browser.close();
  }
}

// Writes the page's heap snapshot to `out`, from the chunks Chromium streams.
async function takeHeapSnapshot(browser, session, out) {
  await browser.send('HeapProfiler.collectGarbage', {}, session);
  const fd = fs.openSync(out, 'w');
  const listener = (message) => {
    if (message.method === 'HeapProfiler.addHeapSnapshotChunk' && message.sessionId === session) {
      fs.writeSync(fd, message.params.chunk);
    }
  };
  browser.listeners.push(listener);
  try {
    await browser.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, session);
  } finally {
    browser.listeners = browser.listeners.filter((l) => l !== listener);
    fs.closeSync(fd);
  }
}

async function captureHeapSnapshots(url, prefix, expression) {
  const browser = new Browser(['--disable-gpu', '--disable-quic']);
  try {
    const session = await browser.attachToPage();
    await browser.send('HeapProfiler.enable', {}, session);
    await browser.navigate(session, url);
    await sleep(SETTLE_MS);
    await takeHeapSnapshot(browser, session, `${prefix}-0.heapsnapshot`);
    await browser.evaluate(session, expression);
    await sleep(SETTLE_MS);
    await takeHeapSnapshot(browser, session, `${prefix}-1.heapsnapshot`);
  } finally {
    await browser.close();
  }
}

async function main() {
  const [mode, url, out, runsText, ...rest] = process.argv.slice(2);
  if (!url || !out || rest.length) usage();
  if (mode === 'trace') {
    const runs = Number(runsText);
    if (!Number.isInteger(runs) || runs < 1) usage();
    await captureTrace(url, out, runs);
  } else if (mode === 'heap') {
    if (runsText === undefined) usage();
    await captureHeapSnapshots(url, out, runsText);
  } else if (mode === 'selfprof') {
    if (runsText !== undefined) usage();
    await captureSelfProfile(url, out);
  } else {
    usage();
  }
}

main().catch((err) => {
  process.stderr.write(`capture-browser-cdp: ${err.stack || err}\n`);
  process.exit(1);
});
