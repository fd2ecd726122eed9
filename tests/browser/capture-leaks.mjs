#!/usr/bin/env node
// Captures heap snapshots of leak-page.html in headless Chromium over the DevTools
// protocol, the way memlab takes them: a baseline, the action, the target, the way back,
// the final snapshot. The `web` scenario runs its steps one after another, so that the
// final snapshot of one step is the baseline of the next; with --rounds N, a scenario
// runs N action/back rounds with a snapshot after each "back" (a series). Before every snapshot the garbage collector runs six times
// (HeapProfiler.collectGarbage, 200 ms apart, as memlab's driver does), and each
// snapshot is taken with HeapProfiler.takeHeapSnapshot {captureNumericValue: true}.
//
//   node tests/browser/capture-leaks.mjs --scenario web --out DIR
//       DIR/web-00.heapsnapshot.gz before the first step; web-01 after step 1's action
//       (its target), web-02 after its way back (its final, and step 2's baseline), …
//   node tests/browser/capture-leaks.mjs --scenario listeners --rounds 4 --out DIR
//       DIR/listeners-0.heapsnapshot.gz (before any action) … listeners-4…
//
// Options: --chromium PATH (default $CHROMIUM, then /usr/bin/chromium), --timeout-ms N
// (the whole session; default 180000), --no-gzip. The snapshots are written gzipped
// (gzip level 9, no name or time in the header, so the same bytes give the same file).
// A line of JSON per snapshot on stdout: {"file", "label", "nodes", "bytes", "ms"}.
// Needs Node.js 20 and Chromium; cdp.mjs starts Chromium in a fresh profile with
// --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
// --disable-background-networking --disable-component-update --disable-sync.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launch } from './cdp.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const { values } = parseArgs({
  options: {
    scenario: { type: 'string' },
    rounds: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
    'timeout-ms': { type: 'string', default: '180000' },
    'no-gzip': { type: 'boolean', default: false },
  },
});
if (!values.scenario || !values.out) {
  process.stderr.write('usage: capture-leaks.mjs --scenario NAME --out DIR [--rounds N] [--chromium PATH]\n');
  process.exit(2);
}
const rounds = values.rounds === undefined ? null : Number(values.rounds);
fs.mkdirSync(values.out, { recursive: true });

// The driver finds what it clicks as Puppeteer does: through a utility script it injects
// into the page once (named pptr:internal, as Puppeteer names its own) and keeps a handle
// to, called with Runtime.callFunctionOn. The snapshots hold that script and what it
// compiles and keeps: the inspection's own objects, which arkdiff leaves out of leaks.
const UTILITY = `(() => {
  const seen = new Map();
  return {
    center(selector) {
      const el = document.querySelector(selector);
      seen.set(selector, (seen.get(selector) ?? 0) + 1);
      const box = el.getBoundingClientRect();
      return { x: box.left + box.width / 2, y: box.top + box.height / 2 };
    },
  };
})()
//# sourceURL=pptr:internal`;

async function injectUtility(page) {
  const r = await page.send('Runtime.evaluate', { expression: UTILITY, returnByValue: false, objectGroup: 'driver' });
  if (r.exceptionDetails) throw new Error(`the utility script failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
  return r.result.objectId;
}

/** Clicks the element matching selector, found through the utility script. */
async function click(page, utility, selector) {
  const r = await page.send('Runtime.callFunctionOn', {
    objectId: utility,
    functionDeclaration: 'function (selector) {\n  return this.center(selector);\n//# sourceURL=pptr:evaluate\n}',
    arguments: [{ value: selector }],
    returnByValue: true,
  });
  if (r.exceptionDetails) throw new Error(`finding ${selector} failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
  const { x, y } = r.result.value;
  const base = { x, y, button: 'left', clickCount: 1 };
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, button: 'none', buttons: 0 });
  await page.send('Input.dispatchMouseEvent', { ...base, type: 'mousePressed', buttons: 1 });
  await page.send('Input.dispatchMouseEvent', { ...base, type: 'mouseReleased', buttons: 0 });
}

/** Runs the collector six times, 200 ms apart, as memlab does before a snapshot. */
async function fullGc(page) {
  for (let i = 0; i < 6; ++i) {
    await page.send('HeapProfiler.collectGarbage');
    await sleep(200);
  }
}

/** Takes a snapshot after a full GC and writes it to DIR/NAME.heapsnapshot(.gz). */
async function snapshot(browser, page, name, label = name) {
  await fullGc(page);
  const started = Date.now();
  const chunks = [];
  const off = browser.on('HeapProfiler.addHeapSnapshotChunk', (params, sessionId) => {
    if (sessionId === page.sessionId) chunks.push(params.chunk);
  });
  try {
    await page.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: true }, { timeoutMs: 120_000 });
  } finally {
    off();
  }
  const text = chunks.join('');
  const parsed = JSON.parse(text); // also proves the snapshot is whole
  const gzip = !values['no-gzip'];
  const file = path.join(values.out, `${name}.heapsnapshot${gzip ? '.gz' : ''}`);
  const bytes = gzip ? zlib.gzipSync(Buffer.from(text), { level: 9 }) : Buffer.from(text);
  fs.writeFileSync(file, bytes);
  const line = { file, label, nodes: parsed.snapshot.node_count, bytes: bytes.length, ms: Date.now() - started };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const browser = await launch({ chromium: values.chromium, timeoutMs: Number(values['timeout-ms']) });
try {
  const url = `${pathToFileURL(path.join(here, 'leak-page.html')).href}?s=${values.scenario}`;
  const page = await browser.open(url);
  await page.waitFor(() => document.body.dataset.ready, 'the leak page');
  const ready = await page.evaluate(() => document.body.dataset.ready);
  if (ready !== '1') throw new Error(`the page has no scenario ${values.scenario}`);
  await page.send('HeapProfiler.enable');
  const utility = await injectUtility(page);
  const s = values.scenario;
  if (rounds === null) {
    const steps = await page.evaluate(() => window.__webSteps ?? []);
    if (!steps.length) throw new Error(`scenario ${s} has no steps: give --rounds`);
    const name = (i) => `${s}-${String(i).padStart(2, '0')}`;
    await snapshot(browser, page, name(0));
    for (const [i, step] of steps.entries()) {
      await click(page, utility, '[data-testid="action"]');
      await snapshot(browser, page, name(2 * i + 1), `${step} target`);
      await click(page, utility, '[data-testid="back"]');
      await snapshot(browser, page, name(2 * i + 2), `${step} final`);
    }
  } else {
    await snapshot(browser, page, `${s}-0`);
    for (let i = 1; i <= rounds; ++i) {
      await click(page, utility, '[data-testid="action"]');
      await click(page, utility, '[data-testid="back"]');
      await snapshot(browser, page, `${s}-${i}`);
    }
  }
  const problems = [...page.console, ...page.exceptions];
  if (problems.length) throw new Error(`the page reported: ${JSON.stringify(problems)}`);
} finally {
  await browser.close();
}
