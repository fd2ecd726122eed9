#!/usr/bin/env node
// How long HTML reports take to draw in headless Chromium: for each report, the median
// over RUNS loads of the time to DOMContentLoaded (the page's script runs while the page
// is parsed, so this is parsing plus drawing every chart, table and the flame graph),
// and of sorting its first table by a change column twice.
//
//   node tests/browser/render-time.mjs [--runs N] [--chromium PATH] REPORT.html...
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { launch } from './cdp.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '5' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
  },
});
const runs = Number(values.runs);
if (!positionals.length || !(runs >= 1)) {
  console.error('usage: render-time.mjs [--runs N] [--chromium PATH] REPORT.html...');
  process.exit(2);
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const browser = await launch({ chromium: values.chromium, timeoutMs: 60_000 + 20_000 * runs * positionals.length });
try {
  for (const file of positionals) {
    const loaded = [];
    const sorted = [];
    for (let i = 0; i < runs; i++) {
      const page = await browser.open(pathToFileURL(path.resolve(file)).href);
      await page.waitFor('document.body?.dataset.rendered === "1"', 'body[data-rendered="1"]', { timeoutMs: 30_000 });
      loaded.push(await page.evaluate('performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd'));
      sorted.push(
        await page.evaluate(() => {
          const th = document.querySelector('table.data th[data-key$="_delta"]');
          const t0 = performance.now();
          th.click();
          th.click();
          return performance.now() - t0;
        }),
      );
      await page.close();
    }
    const kb = (fs.statSync(file).size / 1024).toFixed(0);
    console.log(`${file}: ${kb} KiB, drawn in ${median(loaded).toFixed(0)} ms, two sorts in ${median(sorted).toFixed(0)} ms (median of ${runs})`);
  }
} finally {
  await browser.close();
}
