// Looks up every call frame of the bundle in the given CPU and heap profiles (gzipped) in
// dist/main.js.map with Node.js's own source-map reader (module.SourceMap), and prints one
// tab-separated line per distinct frame: the profile kind, the frame's name, line and
// column (1-based, as arkdiff prints them), and the original source, line, column
// (1-based) and name that the map gives, or `-` where it gives none. The tests check
// arkdiff's mapping against it.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { SourceMap } = require('node:module');

const dir = path.join(__dirname, '..');
const map = new SourceMap(JSON.parse(fs.readFileSync(path.join(dir, 'dist/main.js.map'), 'utf8')));
const bundle = /\/dist\/main\.js$/;

const frames = new Map();
for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(dir, file))));
  const kind = profile.nodes ? 'cpu' : 'heap';
  // A .cpuprofile lists its nodes; a .heapprofile nests them under head.
  const nodes = profile.nodes ? [...profile.nodes] : [profile.head];
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (!profile.nodes) nodes.push(...node.children);
    const f = node.callFrame;
    if (!bundle.test(f.url) || f.lineNumber < 0) continue;
    frames.set(`${kind}\t${f.functionName || '(anonymous)'}\t${f.lineNumber + 1}\t${f.columnNumber + 1}`, f);
  }
}
const lines = [];
for (const [key, f] of frames) {
  const e = map.findEntry(f.lineNumber, f.columnNumber);
  const mapped = e && e.originalSource !== undefined
    ? `${e.originalSource}\t${e.originalLine + 1}\t${e.originalColumn + 1}\t${e.name ?? '-'}`
    : '-\t-\t-\t-';
  lines.push(`${key}\t${mapped}`);
}
lines.sort();
process.stdout.write('kind\tname\tline\tcolumn\tsource\toriginal_line\toriginal_column\toriginal_name\n');
process.stdout.write(lines.map((l) => l + '\n').join(''));
