#!/usr/bin/env node
// Usage: node scripts/devtools-ground-truth.js SNAPSHOT OUTPREFIX [--normal]
// (needs `npm install heap-snapshot-toolkit@1.1.3`; see tests/data/README.md)
// Runs Chrome DevTools' real heap snapshot worker code (heap-snapshot-toolkit 1.1.3) with DevTools'
// extra rules switched off by monkey-patching JSHeapSnapshot.prototype at runtime:
//   (a) calculateShallowSizes() -> no-op: raw self_size values are used everywhere (retained sizes,
//       aggregates, maxRet); no owned array/hidden/ExternalStringData sizes are moved into owners.
//   (b)-(d) computeIsEssentialEdge() replaced: an edge is essential unless it is weak, a self edge, or a
//       shortcut edge from a non-root node. No page-object rule, no WeakMap table->value rule.
// Everything else (Lengauer-Tarjan, orphan/leftover handling, retained sizes, class names,
// aggregates) is DevTools' unmodified code. With --normal nothing is patched (for comparison).
// Writes OUTPREFIX.nodes.tsv  (id, dominator_id, retained_size; node order; root dominates itself)
//        OUTPREFIX.classes.tsv (by class NAME: count/self of nodes with self_size>0, maxRet by name,
//                               DevTools' own maxRet summed over the class keys with that name)
'use strict';
const fs = require('node:fs');
const { Readable } = require('node:stream');

function tinySnapshotJSON() {
  const meta = {
    node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
    node_types: [['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native',
      'synthetic', 'concatenated string', 'sliced string', 'symbol', 'bigint', 'object shape', 'wasm object'],
    'string', 'number', 'number', 'number', 'number', 'number'],
    edge_fields: ['type', 'name_or_index', 'to_node'],
    edge_types: [['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'], 'string_or_number', 'node'],
  };
  return JSON.stringify({
    snapshot: { meta, node_count: 2, edge_count: 1, trace_function_count: 0 },
    nodes: [9, 0, 1, 0, 1, 0, 0, 3, 1, 3, 16, 0, 0, 0],
    edges: [2, 2, 7],
    trace_function_infos: [], trace_tree: [], samples: [], locations: [],
    strings: ['', 'Foo', 'x'],
  });
}

async function parseWith(DevToolsAPI, readStream, problems) {
  const { HeapSnapshotLoader, SecondaryInitManager } = DevToolsAPI;
  const loader = new HeapSnapshotLoader.HeapSnapshotLoader();
  await new Promise((resolve, reject) => {
    readStream.on('error', reject);
    readStream.on('end', resolve);
    readStream.on('data', (chunk) => loader.write(chunk));
  });
  loader.close();
  await loader.parsingComplete;
  const channel = new MessageChannel();
  const port = {
    postMessage: (m, t) => channel.port1.postMessage(m, t),
    set onmessage(f) {
      channel.port1.onmessage = (e) => {
        if (e.data && e.data.problemReport) problems.push(e.data.problemReport);
        f(e);
      };
    },
  };
  try {
    new SecondaryInitManager(channel.port2); // eslint-disable-line no-new
    return await loader.buildSnapshot(port);
  } finally {
    channel.port1.close();
    channel.port2.close();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const normal = args.includes('--normal');
  const [snapPath, outPrefix] = args.filter((a) => a !== '--normal');
  if (!snapPath || !outPrefix) {
    console.error('usage: node devtools-neutral.js SNAPSHOT OUTPREFIX [--normal]');
    process.exit(2);
  }
  const { DevToolsAPI } = await import('heap-snapshot-toolkit');

  // JSHeapSnapshot.prototype is not exported: take it from a tiny snapshot.
  const tiny = await parseWith(DevToolsAPI, Readable.from([tinySnapshotJSON()]), []);
  const proto = Object.getPrototypeOf(tiny); // JSHeapSnapshot.prototype
  let rawSelf = null;
  const origCSS = proto.calculateShallowSizes;
  proto.calculateShallowSizes = function () {
    const n = this.nodeCount;
    rawSelf = new Float64Array(n);
    for (let i = 0; i < n; i++) rawSelf[i] = this.nodes.getValue(i * this.nodeFieldCount + this.nodeSelfSizeOffset);
    if (normal) return origCSS.call(this);
    // (a) neutral: no-op, keep raw self sizes.
  };
  if (!normal) {
    // (b)(c)(d) neutral essential-edge decision.
    proto.computeIsEssentialEdge = function (nodeIndex, edgeIndex /* , userObjectsMapAndFlag: ignored */) {
      const edgeType = this.containmentEdges.getValue(edgeIndex + this.edgeTypeOffset);
      if (edgeType === this.edgeWeakType) return false;
      const childNodeIndex = this.containmentEdges.getValue(edgeIndex + this.edgeToNodeOffset);
      if (nodeIndex === childNodeIndex) return false;
      if (nodeIndex !== this.rootNodeIndex && edgeType === this.edgeShortcutType) return false;
      return true;
    };
  }

  const problems = [];
  const t0 = process.hrtime.bigint();
  const snapshot = await parseWith(DevToolsAPI, fs.createReadStream(snapPath, 'utf-8'), problems);
  const t1 = process.hrtime.bigint();
  const aggregates = snapshot.aggregatesWithFilter({});
  const t2 = process.hrtime.bigint();

  const { nodeCount, nodeFieldCount, nodeIdOffset, nodeSelfSizeOffset, nodes } = snapshot;
  const { retainedSizes, dominatorsTree, dominatedNodes, firstDominatedNodeIndex } = snapshot;
  const rootOrdinal = snapshot.rootNodeIndex / nodeFieldCount;
  const selfOf = (i) => nodes.getValue(i * nodeFieldCount + nodeSelfSizeOffset); // sizes DevTools used

  // Independent reachability check under the neutral rules (BFS from the root).
  const { containmentEdges, edgeFieldsCount, edgeTypeOffset, edgeToNodeOffset, firstEdgeIndexes } = snapshot;
  const seen = new Uint8Array(nodeCount);
  const queue = new Uint32Array(nodeCount);
  let qh = 0, qt = 0;
  seen[rootOrdinal] = 1; queue[qt++] = rootOrdinal;
  while (qh < qt) {
    const v = queue[qh++];
    const nodeIndex = v * nodeFieldCount;
    for (let e = firstEdgeIndexes[v], end = firstEdgeIndexes[v + 1]; e < end; e += edgeFieldsCount) {
      const t = containmentEdges.getValue(e + edgeTypeOffset);
      const to = containmentEdges.getValue(e + edgeToNodeOffset);
      if (t === snapshot.edgeWeakType || to === nodeIndex) continue;
      if (v !== rootOrdinal && t === snapshot.edgeShortcutType) continue;
      const c = to / nodeFieldCount;
      if (!seen[c]) { seen[c] = 1; queue[qt++] = c; }
    }
  }
  const unreachableNeutral = nodeCount - qt;

  // nodes.tsv
  const fd = fs.openSync(`${outPrefix}.nodes.tsv`, 'w');
  let buf = ['id\tdominator_id\tretained_size'];
  for (let i = 0; i < nodeCount; i++) {
    const domId = nodes.getValue(dominatorsTree[i] * nodeFieldCount + nodeIdOffset);
    buf.push(`${nodes.getValue(i * nodeFieldCount + nodeIdOffset)}\t${domId}\t${retainedSizes[i]}`);
    if (buf.length >= 65536) { fs.writeSync(fd, buf.join('\n') + '\n'); buf = []; }
  }
  if (buf.length) fs.writeSync(fd, buf.join('\n') + '\n');
  fs.closeSync(fd);

  // Per-class-NAME aggregates and maxRet by name over DevTools' dominator tree.
  const nameIds = new Map(); const names = [];
  const nameOf = new Uint32Array(nodeCount);
  const node = snapshot.createNode(0);
  for (let i = 0; i < nodeCount; i++) {
    node.nodeIndex = i * nodeFieldCount;
    const nm = node.className();
    let id = nameIds.get(nm);
    if (id === undefined) { id = names.length; names.push(nm); nameIds.set(nm, id); }
    nameOf[i] = id;
  }
  const K = names.length;
  const cnt = new Float64Array(K), self = new Float64Array(K), maxRet = new Float64Array(K), dtMax = new Float64Array(K);
  for (let i = 0; i < nodeCount; i++) {
    const s = selfOf(i);
    if (s > 0) { cnt[nameOf[i]]++; self[nameOf[i]] += s; }
  }
  // Iterative DFS over the dominator tree; active[name] = number of counted ancestors on the path.
  const active = new Uint32Array(K);
  const stack = new Int32Array(2 * nodeCount + 2); let sp = 0; // entries: ordinal (enter) or ~ordinal (exit)
  stack[sp++] = rootOrdinal;
  let visited = 0;
  while (sp) {
    const x = stack[--sp];
    if (x < 0) { active[nameOf[~x]]--; continue; }
    visited++;
    const nm = nameOf[x];
    if (selfOf(x) > 0 && active[nm] === 0) {
      maxRet[nm] += retainedSizes[x];
      active[nm]++; stack[sp++] = ~x;
    }
    for (let k = firstDominatedNodeIndex[x], end = firstDominatedNodeIndex[x + 1]; k < end; k++) {
      stack[sp++] = dominatedNodes[k] / nodeFieldCount;
    }
  }
  if (visited !== nodeCount) throw new Error(`dominator tree DFS visited ${visited} of ${nodeCount}`);
  for (const key of Object.keys(aggregates)) {
    const a = aggregates[key];
    dtMax[nameIds.get(a.name)] += a.maxRet;
  }
  const esc = (s) => String(s).replace(/[\t\n\r\\]/g, (c) => ({ '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' })[c]);
  const order = [...Array(K).keys()].filter((k) => cnt[k] > 0)
    .sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
  const cl = ['name\tcount\tself_size\tmax_ret_by_name\tdevtools_maxRet_sum_over_keys'];
  for (const k of order) cl.push(`${esc(names[k])}\t${cnt[k]}\t${self[k]}\t${maxRet[k]}\t${dtMax[k]}`);
  fs.writeFileSync(`${outPrefix}.classes.tsv`, cl.join('\n') + '\n');
  const t3 = process.hrtime.bigint();

  let shallowMoved = 0;
  for (let i = 0; i < nodeCount; i++) if (rawSelf[i] !== selfOf(i)) shallowMoved++;
  let rawTotal = 0; for (let i = 0; i < nodeCount; i++) rawTotal += rawSelf[i];
  let byNameDiffKeys = 0;
  for (const k of order) if (maxRet[k] !== dtMax[k]) byNameDiffKeys++;
  const ms = (a, b) => (Number(b - a) / 1e6).toFixed(0);
  console.log(`mode: ${normal ? 'normal (unpatched DevTools)' : 'neutral'}`);
  console.log(`snapshot: ${snapPath}  nodes: ${nodeCount}  edges: ${containmentEdges.length / edgeFieldsCount}`);
  console.log(`root retained: ${retainedSizes[rootOrdinal]}  (sum of raw self sizes ${rawTotal})`);
  console.log(`nodes whose self size differs from raw: ${shallowMoved}`);
  console.log(`unreachable from root by neutral rules (independent BFS): ${unreachableNeutral}`);
  console.log(`DevTools problem reports: ${JSON.stringify(problems.map((p) => p[0]))}`);
  console.log(`class names (count>0): ${order.length}; names where by-name maxRet != DevTools per-key sum: ${byNameDiffKeys}`);
  console.log(`time: load+initialize ${ms(t0, t1)} ms; aggregates ${ms(t1, t2)} ms; dump ${ms(t2, t3)} ms; total ${ms(t0, t3)} ms`);
  process.exit(0);
}

main().catch((e) => { console.error(e); process.exit(1); });
