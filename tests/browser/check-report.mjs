#!/usr/bin/env node
// Opens an arkdiff HTML report in headless Chromium, exercises it against the
// DOM contract in README.md, saves a full-page screenshot and prints one JSON
// object on stdout.
//
//   node tests/browser/check-report.mjs --chromium /usr/bin/chromium \
//     --report report.html --screenshot report.png [--expect heap,cpu] \
//     [--timeout-ms 60000] [--wait-ms 3000] [--expect-paths] [--expect-leaks]
//
// Exit code: 0 all checks passed, 1 a check failed, 2 the driver failed
// (usage, browser would not start, overall timeout); the message is then on
// stderr and the JSON carries it as "error".

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { launch, DriverError, HitTestError } from './cdp.mjs';

const PARTS = ['heap', 'cpu', 'alloc'];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function usage(message) {
  const err = new Error(
    `${message}\nusage: check-report.mjs --chromium PATH --report FILE.html --screenshot OUT.png ` +
      '[--expect heap,cpu] [--timeout-ms N] [--wait-ms N] [--expect-paths] [--expect-leaks]',
  );
  err.usage = true;
  return err;
}

function parseCli(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
        report: { type: 'string' },
        screenshot: { type: 'string' },
        expect: { type: 'string' },
        'timeout-ms': { type: 'string', default: '60000' },
        'wait-ms': { type: 'string', default: '3000' },
        'expect-paths': { type: 'boolean', default: false },
        'expect-leaks': { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw usage(err.message);
  }
  if (!values.report) throw usage('--report is required');
  if (!values.screenshot) throw usage('--screenshot is required');
  const int = (name) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n <= 0) throw usage(`--${name} must be a positive integer, not ${values[name]}`);
    return n;
  };
  let expect = null; // null: check the parts the report has
  if (values.expect !== undefined) {
    expect = values.expect.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = expect.filter((p) => !PARTS.includes(p));
    if (bad.length || !expect.length) throw usage(`--expect takes a list of ${PARTS.join(', ')}, not "${values.expect}"`);
  }
  const report = path.resolve(values.report);
  if (!fs.existsSync(report)) throw usage(`no such report: ${report}`);
  return {
    chromium: values.chromium,
    report,
    screenshot: values.screenshot,
    expect,
    timeoutMs: int('timeout-ms'),
    waitMs: int('wait-ms'),
    expectPaths: values['expect-paths'],
    expectLeaks: values['expect-leaks'],
  };
}

// ---------------------------------------------------------------------------
// Functions run inside the page (serialised: they must be self-contained).

function pageTooltip() {
  const t = document.getElementById('tooltip');
  if (!t) return { visible: false, why: 'there is no #tooltip', text: '' };
  const cs = getComputedStyle(t);
  const box = t.getBoundingClientRect();
  const text = t.textContent.replace(/\s+/g, ' ').trim();
  const why = t.hidden
    ? '#tooltip has the hidden attribute'
    : cs.display === 'none'
      ? '#tooltip has display: none'
      : cs.visibility === 'hidden'
        ? '#tooltip has visibility: hidden'
        : Number(cs.opacity) === 0
          ? '#tooltip has opacity 0'
          : box.width === 0 || box.height === 0
            ? '#tooltip has no size'
            : !text
              ? '#tooltip is empty'
              : '';
  return { visible: !why, why, text };
}

// Rows carry their name (the cell under th[data-key="name"], else the first
// cell) and `all`: every cell's text and data-value, for filters that also
// match other columns.
function pageTable(tableSel, sortKey, countSel) {
  const table = document.querySelector(tableSel);
  if (!table) return { error: `there is no ${tableSel}` };
  const ths = [...table.querySelectorAll('thead th')];
  const sortTh = ths.find((th) => th.dataset.key === sortKey);
  const nameTh = ths.find((th) => th.dataset.key === 'name') ?? ths[0];
  const col = sortTh ? sortTh.cellIndex : -1;
  const nameCol = nameTh ? nameTh.cellIndex : 0;
  const shown = (tr) => {
    if (tr.hidden || tr.getClientRects().length === 0) return false;
    const v = getComputedStyle(tr).visibility;
    return v !== 'hidden' && v !== 'collapse';
  };
  return {
    headers: ths.map((th) => ({ key: th.dataset.key ?? null, sort: th.getAttribute('aria-sort') })),
    sortKeyFound: Boolean(sortTh),
    rows: [...table.querySelectorAll('tbody tr')].map((tr) => ({
      visible: shown(tr),
      name: (tr.cells[nameCol]?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      all: [...tr.cells].map((td) => `${td.textContent} ${td.dataset.value ?? ''}`).join(' '),
      value: col >= 0 ? (tr.cells[col]?.dataset.value ?? null) : null,
    })),
    countText: document.querySelector(countSel)?.textContent.replace(/\s+/g, ' ').trim() ?? null,
  };
}

function pageFlame() {
  const svg = document.querySelector('#flame svg');
  if (!svg) return { error: 'there is no #flame svg' };
  const frames = [...svg.querySelectorAll('g.frame')].map((g, i) => {
    const rect = g.querySelector(':scope > rect') ?? g.querySelector('rect');
    return { i, name: g.dataset.name ?? null, rect: Boolean(rect), w: rect ? rect.getBoundingClientRect().width : 0 };
  });
  return {
    svgW: svg.getBoundingClientRect().width,
    frames,
    legend: Boolean(document.getElementById('flame-legend')),
    reset: Boolean(document.getElementById('flame-reset')),
  };
}

// ---------------------------------------------------------------------------
// Helpers on the Node side.

/** A check's failure, with a message meant for the report's reader. */
class CheckFailed extends Error {}
const fail = (message) => {
  throw new CheckFailed(message);
};

/**
 * Polls get() until problem(value) returns null and returns that value; after
 * ms, fails with the last problem found. (At the overall deadline, get()
 * fails with the browser's DriverError.)
 */
async function settle(page, get, problem, what, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await get();
    const p = problem(value);
    if (!p) return value;
    if (Date.now() >= end) fail(`${what}: ${p} (still so after ${ms} ms)`);
    await sleep(50);
  }
}

/** Leading number of a count text such as "1,234 of 5,678 classes". */
function leadingNumber(text) {
  const m = /^\s*(\d[\d,\u00a0\u202f ]*)/.exec(text ?? '');
  return m ? Number(m[1].replace(/[^\d]/g, '')) : NaN;
}

// Swaps the case of each letter that has a one-letter other case.
const swapCase = (s) =>
  [...s]
    .map((c) => {
      const other = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
      return [...other].length === 1 ? other : c;
    })
    .join('');

/** A distinctive piece of a name: its longest word, at most 12 characters. */
function substringOf(name) {
  const words = name.split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length >= 2);
  const word = words.sort((a, b) => b.length - a.length)[0] ?? name;
  return word.slice(0, 12);
}

const quote = (s, n = 60) => JSON.stringify(s.length > n ? `${s.slice(0, n)}…` : s);

// Moves the mouse to each candidate in turn (skipping ones covered by
// something else) until the tooltip shows; returns the tooltip's text.
async function hoverForTooltip(page, selector, indices, opts, waitMs) {
  let lastHitError = null;
  for (const index of indices) {
    await page.mouseMove(0, 0);
    try {
      await page.hover(selector, { index, ...opts });
    } catch (err) {
      if (err instanceof HitTestError) {
        lastHitError = err;
        continue;
      }
      throw err;
    }
    const t = await settle(page, () => page.evaluate(pageTooltip), (t) => (t.visible ? null : t.why), `hovering ${selector} #${index}`, waitMs);
    return { index, text: t.text };
  }
  fail(`no ${selector} could be hovered: ${lastHitError?.message ?? 'none found'}`);
}

// ---------------------------------------------------------------------------
// The checks. Each returns a detail string on success and throws on failure.

async function checkVerdict(page) {
  const v = await page.evaluate(() => {
    const el = document.getElementById('verdict');
    return {
      found: Boolean(el),
      status: el?.dataset.status ?? null,
      violations: document.querySelectorAll('#violations tr.violation').length,
    };
  });
  if (!v.found) fail('there is no #verdict');
  if (!['pass', 'warn', 'fail'].includes(v.status)) fail(`#verdict has data-status=${JSON.stringify(v.status)}, not pass|warn|fail`);
  return { detail: `status ${v.status}, ${v.violations} violation row(s)`, verdict: { status: v.status, violations: v.violations } };
}

// An array or element appended as text shows as "[object …]".
async function checkObjectText(page) {
  const hit = await page.evaluate(() => {
    // The text of the document, but for scripts and styles.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement.closest('script, style, template') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    let text = '';
    while (walker.nextNode()) text += walker.currentNode.data;
    const i = text.indexOf('[object ');
    return i < 0 ? null : text.slice(Math.max(0, i - 40), i + 60).replace(/\s+/g, ' ');
  });
  if (hit !== null) fail(`the page shows ${quote(hit, 100)}`);
  return 'no "[object …]" in the text';
}

// The tables the page draws, by the name the report gives their columns under
// (script#report-columns).
const COLUMN_TABLES = { 'class-table': 'classes', 'leaklist-table': 'leaklist', 'category-table': 'categories', 'function-table': 'functions', 'alloc-table': 'alloc_functions' };

// Each table's headers are the report's columns for it: keys, labels, alignment and
// titles, in order. Keeps each table's headers and first-drawn rows (the text of each
// cell's first node: a name without its tags) in result.tables, for comparison with the
// text reports.
async function checkColumns(page, result) {
  const t = await page.evaluate((ids) => {
    const el = document.getElementById('report-columns');
    let model = null;
    try {
      model = JSON.parse(el?.textContent ?? 'null');
    } catch {
      // reported below
    }
    const tables = {};
    for (const [id, name] of Object.entries(ids)) {
      const table = document.getElementById(id);
      if (!table) continue;
      tables[id] = {
        columns: model?.[name] ?? null,
        headers: [...table.querySelectorAll('thead th')].map((th) => ({ key: th.dataset.key ?? null, label: th.textContent, num: th.classList.contains('num'), title: th.getAttribute('title') })),
        rows: [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((td) => td.firstChild?.textContent ?? '')),
      };
    }
    return { model: model !== null, tables };
  }, COLUMN_TABLES);
  if (!t.model) fail('there is no script#report-columns holding JSON');
  const ids = Object.keys(t.tables);
  if (!ids.length) fail('the page has none of the tables ' + Object.keys(COLUMN_TABLES).join(', '));
  for (const id of ids) {
    const { columns, headers } = t.tables[id];
    if (!columns) fail(`#${id} is drawn, but the report gives no columns for it`);
    const want = columns.map((c) => ({ key: c.key, label: c.label, num: c.align === 'right', title: c.title ?? null }));
    if (JSON.stringify(headers) !== JSON.stringify(want)) {
      fail(`#${id}'s headers are ${JSON.stringify(headers)}, the report's columns ${JSON.stringify(want)}`);
    }
  }
  result.tables = Object.fromEntries(ids.map((id) => [id, { headers: t.tables[id].headers.map((h) => h.label), rows: t.tables[id].rows }]));
  return `${ids.join(', ')}: headers as the report's columns`;
}

async function checkHeapChart(page, ctx) {
  const s = await page.evaluate(() => {
    const c = document.getElementById('heap-chart');
    if (!c) return null;
    return {
      empty: c.dataset.empty === '1',
      svg: Boolean(c.querySelector('svg')),
      series: [...c.querySelectorAll('svg path.series')].map((p) => p.dataset.name ?? null),
      points: c.querySelectorAll('svg circle.point').length,
    };
  });
  if (!s) fail('there is no #heap-chart');
  if (s.empty) {
    ctx.heapChartEmpty = true;
    return 'no chart: #heap-chart has data-empty="1" (a pair of snapshots)';
  }
  if (!s.svg) fail('#heap-chart has no svg (and no data-empty="1")');
  if (!s.series.length) fail('#heap-chart svg has no path.series');
  if (s.series.includes(null)) fail('a path.series has no data-name');
  const names = [...new Set(s.series)];
  if (!names.includes('total')) fail(`no path.series has data-name="total" (series: ${names.join(', ')})`);
  if (s.points < 2 * names.length || s.points % names.length !== 0) {
    fail(`${s.points} circle.point for ${names.length} series: expected one per series per snapshot, at least 2 snapshots`);
  }
  return `${names.length} series (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}), ${s.points} points (${s.points / names.length} snapshots)`;
}

async function checkHeapTooltip(page, ctx, opts) {
  if (ctx.heapChartEmpty) return 'skipped: no chart (data-empty="1")';
  const n = await page.evaluate(() => document.querySelectorAll('#heap-chart svg circle.point').length);
  if (!n) fail('no circle.point to hover');
  const indices = [...new Set([n - 1, 0, ...Array.from({ length: Math.min(n, 8) }, (_, i) => i)])];
  const { index, text } = await hoverForTooltip(page, '#heap-chart svg circle.point', indices, {}, opts.waitMs);
  return `hovering circle.point #${index} shows ${quote(text)}`;
}

// Clicks a header twice and checks both orders against the cells' data-value.
async function checkSort(page, t, opts) {
  const th = `${t.table} thead th[data-key="${t.sortKey}"]`;
  const state = () => page.evaluate(pageTable, t.table, t.sortKey, t.count);
  const s0 = await state();
  if (s0.error) fail(s0.error);
  if (!s0.sortKeyFound) fail(`there is no ${th}`);
  const dirs = [];
  let before = s0.headers.find((h) => h.key === t.sortKey).sort;
  for (let click = 1; click <= 2; click++) {
    await page.click(th);
    const wanted = click === 2 ? (dirs[0] === 'ascending' ? 'descending' : 'ascending') : null;
    const dir = await page.waitFor(
      (sel, before, wanted) => {
        const a = document.querySelector(sel)?.getAttribute('aria-sort');
        if (wanted) return a === wanted ? a : null;
        return (a === 'ascending' || a === 'descending') && a !== before ? a : null;
      },
      wanted ? `aria-sort="${wanted}" on ${th} after the second click` : `aria-sort="ascending|descending" on ${th} after a click (was ${JSON.stringify(before)})`,
      { timeoutMs: opts.waitMs, args: [th, before, wanted] },
    );
    dirs.push(dir);
    await settle(page, state, (s) => orderProblem(s, t.sortKey, dir), `after click ${click} on ${th}`, opts.waitMs);
    before = dir;
  }
  return `${s0.rows.length} rows ordered by data-value of ${t.sortKey}: ${dirs.join(', then ')}`;
}

function orderProblem(s, key, dir) {
  if (s.error) return s.error;
  const others = s.headers.filter((h) => h.key !== key && (h.sort === 'ascending' || h.sort === 'descending'));
  if (others.length) return `header ${others[0].key} also has aria-sort="${others[0].sort}"`;
  const values = [];
  for (const [i, r] of s.rows.entries()) {
    if (r.value === null) return `row ${i + 1} (${quote(r.name, 40)}) has no ${key} cell with data-value`;
    const v = Number(r.value);
    if (r.value.trim() === '' || Number.isNaN(v)) return `row ${i + 1} has a non-numeric data-value ${JSON.stringify(r.value)}`;
    values.push(v);
  }
  for (let i = 1; i < values.length; i++) {
    const bad = dir === 'ascending' ? values[i - 1] > values[i] : values[i - 1] < values[i];
    if (bad) return `not ${dir}: row ${i} has ${values[i - 1]}, row ${i + 1} has ${values[i]}`;
  }
  return null;
}

// Types a piece of the first row's name (case swapped), checks the rows and
// the count, then clears the filter and checks everything is back.
async function checkFilter(page, t, opts) {
  const state = () => page.evaluate(pageTable, t.table, t.sortKey, t.count);
  const s0 = await state();
  if (s0.error) fail(s0.error);
  if (s0.countText === null) fail(`there is no ${t.count}`);
  const shown0 = s0.rows.filter((r) => r.visible);
  if (!shown0.length) fail(`${t.table} shows no rows`);
  if (leadingNumber(s0.countText) !== shown0.length) fail(`before filtering, ${t.count} says ${quote(s0.countText)} but ${shown0.length} rows are shown`);
  const name = shown0[0].name;
  if (!name) fail('the first row has an empty name');
  const needle = substringOf(name);
  const typed = swapCase(needle);
  const lower = needle.toLowerCase();

  await page.type(t.filter, typed, { replace: true });
  const s1 = await settle(
    page,
    state,
    (s) => {
      const shown = s.rows.filter((r) => r.visible);
      if (!shown.length) return 'no row is shown';
      const stray = shown.find((r) => !(t.matchAllCells ? r.all : r.name).toLowerCase().includes(lower));
      if (stray) return `row ${quote(stray.name, 40)} is shown but its ${t.matchAllCells ? 'cells do' : 'name does'} not contain it`;
      if (leadingNumber(s.countText) !== shown.length) return `${t.count} says ${quote(s.countText)} but ${shown.length} rows are shown`;
      return null;
    },
    `after typing ${quote(typed)} (from ${quote(name, 40)}) into ${t.filter}`,
    opts.waitMs,
  );
  const shown1 = s1.rows.filter((r) => r.visible).length;

  await page.type(t.filter, '', { replace: true });
  await settle(
    page,
    state,
    (s) => {
      const shown = s.rows.filter((r) => r.visible).length;
      if (shown !== shown0.length) return `${shown} rows are shown, ${shown0.length} before filtering`;
      if (s.countText !== s0.countText) return `${t.count} says ${quote(s.countText)}, ${quote(s0.countText)} before filtering`;
      return null;
    },
    `after clearing ${t.filter}`,
    opts.waitMs,
  );
  return `${quote(typed)} (from ${quote(name, 40)}) shows ${shown1} of ${shown0.length} rows, count ${quote(s1.countText)}; cleared: back to ${quote(s0.countText)}`;
}

// Each .suspect-path shows its li.step items, or (no path was found) a note.
async function checkPaths(page, ctx, opts) {
  const paths = await page.evaluate(() =>
    [...document.querySelectorAll('.suspect-path')].map((p) => {
      const steps = [...p.querySelectorAll('li.step')];
      return { steps: steps.length, empty: steps.filter((li) => !li.textContent.trim()).length, text: p.textContent.trim().length };
    }),
  );
  if (!paths.length) {
    if (opts.expectPaths) fail('there is no .suspect-path (--expect-paths)');
    return 'no .suspect-path: no suspects';
  }
  const i = paths.findIndex((p) => p.empty > 0 || (p.steps === 0 && p.text === 0));
  if (i >= 0) fail(`.suspect-path #${i + 1} has ${paths[i].empty} empty li.step of ${paths[i].steps}${paths[i].text ? '' : ', and no text'}`);
  const withSteps = paths.filter((p) => p.steps > 0);
  if (opts.expectPaths && !withSteps.length) fail(`none of the ${paths.length} .suspect-path has a li.step (--expect-paths)`);
  const steps = withSteps.reduce((n, p) => n + p.steps, 0);
  const without = paths.length - withSteps.length;
  return `${paths.length} .suspect-path, ${steps} steps${without ? `; ${without} without a path (a note instead)` : ''}`;
}

// Where the report has leak traces (a pair of one process, memlab's protocol), their
// table filters like the others; --expect-leaks makes them required.
async function checkLeakTraces(page, opts) {
  const there = await page.evaluate(() => Boolean(document.querySelector('table#leak-table')));
  if (!there) {
    if (opts.expectLeaks) fail('there is no table#leak-table (--expect-leaks)');
    return 'no table#leak-table: no leak traces';
  }
  return checkFilter(page, TABLES.leaks, opts);
}

async function checkFlameFrames(page, ctx) {
  const s = await page.evaluate(pageFlame);
  if (s.error) fail(s.error);
  if (s.frames.length < 2) fail(`${s.frames.length} g.frame in #flame svg, expected more than 1`);
  const noRect = s.frames.filter((f) => !f.rect).length;
  const noName = s.frames.filter((f) => f.name === null).length;
  if (noRect || noName) fail(`${noRect} g.frame without rect, ${noName} without data-name`);
  if (!s.legend) fail('there is no #flame-legend');
  if (!s.reset) fail('there is no #flame-reset');
  // The root is the widest frame (the first of equals); the frame used for
  // hovering and zooming is the widest other one, preferably not already full.
  const root = s.frames.reduce((a, f) => (f.w > a.w ? f : a));
  const others = s.frames.filter((f) => f.i !== root.i && f.name !== root.name && f.w >= 4);
  if (!others.length) fail('no frame besides the root is wide enough to point at');
  const narrower = others.filter((f) => f.w < 0.9 * s.svgW);
  const target = (narrower.length ? narrower : others).reduce((a, f) => (f.w > a.w ? f : a));
  ctx.flame = { root, target, svgW: s.svgW };
  return `${s.frames.length} frames, root ${quote(root.name)} ${root.w.toFixed(0)} of ${s.svgW.toFixed(0)} px`;
}

const needFlame = (ctx) => ctx.flame ?? fail('skipped: the flame graph check failed');
const FRAME = '#flame svg g.frame';

async function checkFlameTooltip(page, ctx, opts) {
  const { target } = needFlame(ctx);
  const { text } = await hoverForTooltip(page, FRAME, [target.i], { aim: ':scope > rect' }, opts.waitMs);
  if (!text.includes(target.name)) fail(`hovering ${quote(target.name)} shows ${quote(text)}, without the frame's name`);
  return `hovering ${quote(target.name)} shows ${quote(text)}`;
}

async function checkFlameZoom(page, ctx, opts) {
  const { target } = needFlame(ctx);
  await page.mouseMove(0, 0);
  await page.click(FRAME, { index: target.i, aim: ':scope > rect' });
  const s = await settle(
    page,
    () => page.evaluate(pageFlame),
    (s) => {
      if (s.error) return s.error;
      const best = Math.max(0, ...s.frames.filter((f) => f.name === target.name).map((f) => f.w));
      return best >= 0.95 * s.svgW ? null : `the widest frame named ${quote(target.name)} is ${best.toFixed(1)} of ${s.svgW.toFixed(1)} px`;
    },
    `after clicking ${quote(target.name)} (${target.w.toFixed(1)} px wide)`,
    opts.waitMs,
  );
  ctx.zoomed = true;
  return `clicking ${quote(target.name)} widens it from ${target.w.toFixed(1)} px to the svg's ${s.svgW.toFixed(1)} px`;
}

async function checkFlameReset(page, ctx, opts) {
  const { root, target } = needFlame(ctx);
  if (!ctx.zoomed) fail('skipped: the zoom check failed');
  await page.click('#flame-reset');
  await settle(
    page,
    () => page.evaluate(pageFlame),
    (s) => {
      if (s.error) return s.error;
      const rootW = Math.max(0, ...s.frames.filter((f) => f.name === root.name).map((f) => f.w));
      if (rootW < 0.95 * s.svgW) return `the root ${quote(root.name)} is ${rootW.toFixed(1)} of ${s.svgW.toFixed(1)} px`;
      const back = s.frames.some((f) => f.name === target.name && Math.abs(f.w - target.w) <= Math.max(2, 0.02 * s.svgW));
      return back ? null : `no frame named ${quote(target.name)} is back to its ${target.w.toFixed(1)} px`;
    },
    'after clicking #flame-reset',
    opts.waitMs,
  );
  return `the root spans the svg again and ${quote(target.name)} is back to ${target.w.toFixed(1)} px`;
}

async function checkFlameSearch(page, ctx, opts) {
  const { target } = needFlame(ctx);
  const needle = substringOf(target.name);
  await page.type('#flame-search', needle.toUpperCase(), { replace: true });
  const s = await settle(
    page,
    () => page.evaluate(() => [...document.querySelectorAll('#flame svg g.frame.match')].map((g) => g.dataset.name)),
    (names) => {
      if (!names.length) return 'no g.frame.match';
      const wrong = names.find((n) => !n.toLowerCase().includes(needle.toLowerCase()));
      return wrong === undefined ? null : `${quote(wrong)} is highlighted but does not contain the search`;
    },
    `after typing ${quote(needle.toUpperCase())} in #flame-search`,
    opts.waitMs,
  );
  await page.type('#flame-search', '', { replace: true });
  await settle(
    page,
    () => page.evaluate(() => document.querySelectorAll('#flame svg g.frame.match').length),
    (n) => (n ? `${n} frames still highlighted after clearing the search` : null),
    'after clearing #flame-search',
    opts.waitMs,
  );
  return `${quote(needle.toUpperCase())} highlights ${s.length} frame(s); cleared: none`;
}

async function checkFlameColour(page, ctx, opts) {
  needFlame(ctx);
  const fills = () => page.evaluate(() => [...document.querySelectorAll('#flame svg g.frame rect')].map((r) => r.getAttribute('fill')).join('|'));
  const legend = () => page.evaluate(() => document.getElementById('flame-legend')?.textContent ?? '');
  const choose = (value) =>
    page.evaluate((value) => {
      const select = document.getElementById('flame-colour');
      select.value = value;
      select.dispatchEvent(new Event('change', { bubbles: true }));
    }, value);
  const [selfFills, selfLegend] = [await fills(), await legend()];
  await choose('total');
  await settle(page, legend, (l) => (l !== selfLegend ? null : 'the legend did not change'), 'after choosing total in #flame-colour', opts.waitMs);
  const changed = (await fills()) !== selfFills;
  await choose('self');
  await settle(page, fills, (f) => (f === selfFills ? null : 'the self-time colours did not come back'), 'after choosing self again', opts.waitMs);
  return `the total-time colours ${changed ? 'recolour the frames' : 'equal the self-time ones here'} and change the legend; the self-time ones come back`;
}

// Enter on a focused header sorts, as a click does.
async function checkKeyboardSort(page, t, opts) {
  const th = `${t.table} thead th[data-key="${t.sortKey}"]`;
  await page.evaluate((sel) => document.querySelector(sel)?.removeAttribute('aria-sort'), th);
  const focused = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    el?.focus();
    return el !== null && document.activeElement === el;
  }, th);
  if (!focused) fail(`${th} cannot take the focus`);
  await page.press('Enter');
  const dir = await page.waitFor(
    (sel) => {
      const a = document.querySelector(sel)?.getAttribute('aria-sort');
      return a === 'ascending' || a === 'descending' ? a : null;
    },
    `aria-sort on ${th} after Enter`,
    { timeoutMs: opts.waitMs, args: [th] },
  );
  await settle(page, () => page.evaluate(pageTable, t.table, t.sortKey, t.count), (s) => orderProblem(s, t.sortKey, dir), `after Enter on ${th}`, opts.waitMs);
  return `Enter on the focused ${t.sortKey} header sorts the rows (${dir})`;
}

async function checkFlameWidth(page, ctx, opts) {
  needFlame(ctx);
  const widths = () =>
    page.evaluate(() => [...document.querySelectorAll('#flame svg g.frame')].map((g) => `${g.dataset.index}:${g.querySelector('rect').getAttribute('width')}`).join(' '));
  const choose = (value) =>
    page.evaluate((value) => {
      const select = document.getElementById('flame-width');
      select.value = value;
      select.dispatchEvent(new Event('change', { bubbles: true }));
    }, value);
  // A profile whose every stack has the same share on both sides draws the same.
  const same = await page.evaluate(() => {
    const nodes = JSON.parse(document.getElementById('report-data').textContent).cpu.flame.nodes;
    const [b, h] = [nodes[0].total_us_base, nodes[0].total_us_head];
    return nodes.every((n) => Math.abs(n.total_us_base / (b || 1) - n.total_us_head / (h || 1)) < 1e-4);
  });
  if (same) return 'every stack has the same share of BASE and HEAD: nothing to redraw';
  const head = await widths();
  await choose('base');
  const base = await settle(page, widths, (w) => (w !== head ? null : 'the frames kept their widths'), 'after choosing BASE in #flame-width', opts.waitMs);
  const s = await page.evaluate(pageFlame);
  const rootW = Math.max(0, ...s.frames.map((f) => f.w));
  if (rootW < 0.95 * s.svgW) fail(`with BASE's widths the widest frame is ${rootW.toFixed(1)} of ${s.svgW.toFixed(1)} px`);
  await choose('head');
  await settle(page, widths, (w) => (w === head ? null : 'the frames did not get their HEAD widths back'), 'after choosing HEAD again', opts.waitMs);
  return `BASE's widths redraw ${base.split(' ').length} frames (the root still full width); HEAD's come back`;
}

// ---------------------------------------------------------------------------

const TABLES = {
  heap: { table: 'table#class-table', sortKey: 'size_delta', filter: 'input#class-filter', count: '#class-count' },
  // The leak traces' filter also matches the shapes.
  leaks: { table: 'table#leak-table', sortKey: 'retained', filter: 'input#leak-filter', count: '#leak-count', matchAllCells: true },
  // The function filter also matches the location (the script's URL).
  cpu: {
    table: 'table#function-table',
    sortKey: 'self_us_delta',
    filter: 'input#function-filter',
    count: '#function-count',
    matchAllCells: true,
  },
  alloc: {
    table: 'table#alloc-table',
    sortKey: 'self_bytes_delta',
    filter: 'input#alloc-filter',
    count: '#alloc-count',
    matchAllCells: true,
  },
};

// The allocation flame graph: its frames are the report's merged stacks, each as wide
// as its share of HEAD's bytes (the root full width), and a frame's tooltip names it with
// its bytes.
async function checkAllocFlame(page, ctx, opts) {
  const s = await page.evaluate(() => {
    const svg = document.querySelector('#alloc-flame svg');
    if (!svg) return null;
    const nodes = JSON.parse(document.getElementById('report-data').textContent).alloc.flame.nodes;
    const frames = [...svg.querySelectorAll('g.frame')].map((g) => ({ i: +g.dataset.index, name: g.dataset.name, w: +g.querySelector('rect').getAttribute('width') }));
    return { svgW: +svg.getAttribute('width'), frames, heads: nodes.map((n) => n.total_bytes_head), legend: document.getElementById('alloc-flame-legend')?.textContent ?? '' };
  });
  if (!s) fail('there is no #alloc-flame svg');
  if (s.frames.length < 2) fail(`${s.frames.length} g.frame in #alloc-flame svg, expected more than 1`);
  const root = s.frames.find((f) => f.i === 0);
  if (!root || Math.abs(root.w - s.svgW) > 1) fail(`the root is not full width: ${JSON.stringify(root)} of ${s.svgW}`);
  for (const f of s.frames.filter((f) => f.i !== 0)) {
    const want = (s.heads[f.i] / s.heads[0]) * s.svgW;
    if (Math.abs(f.w + 0.5 - want) > 1.5) fail(`frame ${f.i} (${f.name}) is ${f.w} wide, its share of HEAD's bytes gives ${want.toFixed(2)}`);
  }
  if (!/allocated bytes/.test(s.legend)) fail(`the legend says ${quote(s.legend)}`);
  return `${s.frames.length} frames as wide as their bytes in HEAD`;
}

const PART_CHECKS = {
  heap: [
    ['heap chart', checkHeapChart],
    ['heap chart tooltip', checkHeapTooltip],
    ['class table sort', (page, ctx, opts) => checkSort(page, TABLES.heap, opts)],
    ['class table filter', (page, ctx, opts) => checkFilter(page, TABLES.heap, opts)],
    ['class table keyboard sort', (page, ctx, opts) => checkKeyboardSort(page, TABLES.heap, opts)],
    ['retainer paths', checkPaths],
    ['leak traces filter', (page, ctx, opts) => checkLeakTraces(page, opts)],
  ],
  cpu: [
    ['flame graph frames', checkFlameFrames],
    ['flame graph tooltip', checkFlameTooltip],
    ['flame graph zoom', checkFlameZoom],
    ['flame graph reset', checkFlameReset],
    ['flame graph search', checkFlameSearch],
    ['flame graph width from BASE', checkFlameWidth],
    ['flame graph colour from total time', checkFlameColour],
    ['function table sort', (page, ctx, opts) => checkSort(page, TABLES.cpu, opts)],
    ['function table filter', (page, ctx, opts) => checkFilter(page, TABLES.cpu, opts)],
    ['function table keyboard sort', (page, ctx, opts) => checkKeyboardSort(page, TABLES.cpu, opts)],
  ],
  alloc: [
    ['allocation flame graph frames', checkAllocFlame],
    ['allocation table sort', (page, ctx, opts) => checkSort(page, TABLES.alloc, opts)],
    ['allocation table filter', (page, ctx, opts) => checkFilter(page, TABLES.alloc, opts)],
    ['allocation table keyboard sort', (page, ctx, opts) => checkKeyboardSort(page, TABLES.alloc, opts)],
  ],
};

async function runChecks(page, opts, result) {
  const record = async (name, fn) => {
    page.browser.activity = `the check "${name}"`;
    try {
      const r = await fn();
      result.checks.push({ name, ok: true, detail: typeof r === 'string' ? r : r.detail });
      return r;
    } catch (err) {
      if (err instanceof DriverError) throw err;
      result.checks.push({ name, ok: false, detail: err.message });
      return null;
    }
  };

  const rendered = await record('rendered', async () => {
    // Leave time for the checks and the screenshot after a slow render.
    const ms = Math.max(1000, Math.min(20_000, page.browser.remaining() - 10_000));
    await page.waitFor('document.body?.dataset.rendered === "1"', 'body[data-rendered="1"]', { timeoutMs: ms });
    return 'body[data-rendered="1"]';
  });
  if (!rendered) return false; // nothing else can be judged

  const v = await record('verdict present', () => checkVerdict(page));
  if (v) result.verdict = v.verdict;
  await record('no stray object text', () => checkObjectText(page));
  // Before any check sorts or filters a table: the rows as first drawn.
  await record("tables follow the report's columns", () => checkColumns(page, result));

  const present = await page.evaluate((parts) => parts.filter((p) => document.getElementById(p)), PARTS);
  const parts = opts.expect ?? present;
  if (!parts.length) result.checks.push({ name: 'sections', ok: false, detail: 'the report has none of #heap, #cpu and #alloc' });
  const ctx = {};
  for (const part of parts) {
    if (!present.includes(part)) {
      result.checks.push({ name: `${part} section`, ok: false, detail: `--expect ${part} but there is no #${part}` });
      continue;
    }
    for (const [name, fn] of PART_CHECKS[part]) await record(name, () => fn(page, ctx, opts));
  }
  return true;
}

// Back to the initial state (mouse away, reload, top of the page), then a
// full-page capture. A page that never rendered is captured as it is.
async function takeScreenshot(page, opts, rendered) {
  page.browser.activity = 'the screenshot';
  await page.mouseMove(0, 0);
  if (rendered) {
    await page.reload();
    try {
      await page.waitFor('document.body?.dataset.rendered === "1"', 'body[data-rendered="1"] after the reload', {
        timeoutMs: Math.max(1000, Math.min(10_000, page.browser.remaining() - 5000)),
      });
    } catch (err) {
      if (err instanceof DriverError) throw err; // otherwise: capture what is there
    }
  }
  await page.evaluate(async () => {
    window.scrollTo(0, 0);
    await document.fonts?.ready;
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  });
  await page.screenshot(opts.screenshot, { fullPage: true });
}

function summarize(list, what) {
  if (!list.length) return `none`;
  const first = list[0].text ?? list[0].url;
  return `${list.length} ${what}, first: ${quote(String(first).split('\n')[0], 160)}`;
}

async function main() {
  let opts;
  const result = { ok: false, checks: [], console: [], exceptions: [], network: [], screenshot: null };
  let browser = null;
  let page = null;
  let interrupted = false;
  const onSignal = (signal) => {
    interrupted = true;
    process.stderr.write(`check-report: ${signal}, closing the browser\n`);
    Promise.resolve(browser?.close()).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    opts = parseCli(process.argv.slice(2));
    // Last resort should close() itself hang: the browser's own timer fires
    // at timeoutMs, close() takes a few seconds at most.
    setTimeout(() => {
      process.stderr.write('check-report: could not shut down in time\n');
      process.exit(2);
    }, opts.timeoutMs + 15_000).unref();

    browser = await launch({ chromium: opts.chromium, timeoutMs: opts.timeoutMs, width: 1280, height: 900 });
    page = await browser.open(pathToFileURL(opts.report).href);
    const rendered = await runChecks(page, opts, result);
    await takeScreenshot(page, opts, rendered);
    result.screenshot = opts.screenshot;

    result.console = page.console;
    result.exceptions = page.exceptions;
    result.network = page.network;
    result.checks.push(
      { name: 'no console errors or warnings', ok: !page.console.length, detail: summarize(page.console, 'console message(s)') },
      { name: 'no exceptions', ok: !page.exceptions.length, detail: summarize(page.exceptions, 'exception(s)') },
      { name: 'no network requests', ok: !page.network.length, detail: summarize(page.network, 'request(s)') },
    );
    result.ok = result.checks.every((c) => c.ok);
    process.exitCode = result.ok ? 0 : 1;
  } catch (err) {
    if (interrupted) return; // onSignal closes and exits
    const message = err.usage || err instanceof DriverError ? err.message : `driver error: ${err.stack}`;
    process.stderr.write(`check-report: ${message}\n`);
    result.ok = false;
    result.error = message;
    if (page) {
      result.console = page.console;
      result.exceptions = page.exceptions;
      result.network = page.network;
    }
    process.exitCode = 2;
  } finally {
    if (!interrupted) await browser?.close();
  }
  if (interrupted) return;
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

await main();
