// Chrome DevTools' class names and counts for one heap snapshot, by DevTools' own heap
// snapshot code (npm heap-snapshot-toolkit, which packages DevTools' heap snapshot worker):
// the reference that arkdiff's class names are checked against (tests/it/devtools.rs).
//
//   node devtools-classes.mjs NODE_MODULES SNAPSHOT[.gz] > CLASSES.tsv
//
// NODE_MODULES is the folder that holds heap-snapshot-toolkit (npm install --prefix DIR
// heap-snapshot-toolkit@1.1.3 puts it in DIR/node_modules). SNAPSHOT may be gzip-compressed.
// Prints a header line and one line per class name (the "Constructor" column's name,
// DevTools' Node.className()), sorted by name: name, the number of its nodes whose
// self_size is above zero, and the sum of those self_size values as the file states them.
// DevTools' code runs unchanged; the file's self sizes are taken just before DevTools moves
// owned sizes into their owners (its calculateShallowSizes), which arkdiff does not do.
// Names with a tab, newline or backslash are escaped as \t, \n, \\.
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
  console.error('usage: devtools-classes.mjs NODE_MODULES SNAPSHOT');
  process.exit(2);
}
const toolkit = await import(pathToFileURL(path.join(modules, 'heap-snapshot-toolkit', 'index.js')));

function text(p) {
  const raw = createReadStream(p);
  return (p.endsWith('.gz') ? raw.pipe(createGunzip()) : raw).setEncoding('utf8');
}

// DevTools' snapshot class is not exported: reach its prototype through a tiny snapshot, to
// note the file's self sizes before DevTools changes them.
const tiny = JSON.stringify({
  snapshot: {
    meta: {
      node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
      node_types: [['hidden', 'object', 'synthetic'], 'string', 'number', 'number', 'number', 'number', 'number'],
      edge_fields: ['type', 'name_or_index', 'to_node'],
      edge_types: [['property'], 'string_or_number', 'node'],
    },
    node_count: 2,
    edge_count: 1,
  },
  nodes: [2, 0, 1, 0, 1, 0, 0, 1, 1, 3, 16, 0, 0, 0],
  edges: [0, 2, 7],
  strings: ['', 'Foo', 'x'],
});
const proto = Object.getPrototypeOf(await toolkit.parse(Readable.from([tiny])));
const shallow = proto.calculateShallowSizes;
let fileSizes = null;
proto.calculateShallowSizes = function () {
  fileSizes = new Float64Array(this.nodeCount);
  for (let i = 0; i < this.nodeCount; i++) {
    fileSizes[i] = this.nodes.getValue(i * this.nodeFieldCount + this.nodeSelfSizeOffset);
  }
  return shallow.call(this);
};

const snapshot = await toolkit.parse(text(file));
const byName = new Map();
const node = snapshot.createNode(0);
for (let i = 0; i < snapshot.nodeCount; i++) {
  const size = fileSizes[i];
  if (size > 0) {
    node.nodeIndex = i * snapshot.nodeFieldCount;
    const name = node.className();
    const c = byName.get(name) ?? { count: 0, size: 0 };
    c.count += 1;
    c.size += size;
    byName.set(name, c);
  }
}
const escape = (s) => s.replace(/[\t\n\\]/g, (c) => ({ '\t': '\\t', '\n': '\\n', '\\': '\\\\' })[c]);
const lines = ['name\tcount\tself_size'];
for (const name of [...byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
  const c = byName.get(name);
  lines.push(`${escape(name)}\t${c.count}\t${c.size}`);
}
process.stdout.write(lines.join('\n') + '\n');
