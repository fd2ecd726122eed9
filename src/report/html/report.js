// The HTML report's script: draws the heap charts, the tables and the differential flame
// graph from the report data embedded in the page (the JSON format's data, unchanged).
// No framework and no network: everything it needs is in the page.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const tip = document.getElementById("tooltip");

  // ---- Numbers, as the text reports print them ----------------------------------------

  // x with d > 0 decimals as Rust's `{:.d}` writes it: an exact tie goes to the even digit
  // (toFixed rounds it up), so 1250 µs is 1.2 ms here as in the text reports. toFixed(100)
  // is the exact decimal expansion of the numbers shown here.
  function fixed(x, d) {
    const exact = Math.abs(x).toFixed(100);
    const cut = exact.indexOf(".") + 1 + d;
    if (!/^50*$/.test(exact.slice(cut)) || exact[cut - 1] % 2 === 1) return x.toFixed(d);
    return (x < 0 ? "-" : "") + exact.slice(0, cut);
  }
  // Rust's round: half-way cases away from zero (Math.round takes -2.5 to -2).
  function round(x) {
    return Math.sign(x) * Math.round(Math.abs(x));
  }

  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  function size(b) {
    if (b == null) return "–";
    if (b < 1024) return b + " B";
    let v = b;
    let u = 0;
    while (v >= 1024 && u < UNITS.length - 1) {
      v /= 1024;
      u++;
    }
    return fixed(v, 2) + " " + UNITS[u];
  }
  function count(n) {
    return n == null ? "–" : String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function us(n) {
    if (n == null) return "–";
    if (n < 1e3) return n + " µs";
    if (n < 1e6) return fixed(n / 1e3, 1) + " ms";
    return fixed(n / 1e6, 2) + " s";
  }
  function signed(f, zero) {
    return (d) => (d == null ? "–" : d === 0 ? zero : (d > 0 ? "+" : "-") + f(Math.abs(d)));
  }
  const sizeDelta = signed(size, "0 B");
  const countDelta = signed(count, "0");
  const usDelta = signed(us, "0 µs");
  function percent(base, delta) {
    if (!base) return delta ? "new" : "";
    const p = (delta * 100) / base;
    return (p >= 0 ? "+" : "") + fixed(p, 1) + "%";
  }
  // Run sets: a p-value, a shift with its interval, one side's spread.
  const pValue = (p) => (p < 0.001 ? p.toExponential(1) : fixed(p, 3));
  const shift = (st) => words(usDelta(round(st.shift_us)), "(" + usDelta(round(st.shift_low_us)), "to", usDelta(round(st.shift_high_us)) + ")");
  const spread = (sp) => words(us(round(sp.median)), "(IQR", us(round(sp.q1)), "to", us(round(sp.q3)) + ")");
  const bytesShift = (st) => words(sizeDelta(round(st.shift_bytes)), "(" + sizeDelta(round(st.shift_low_bytes)), "to", sizeDelta(round(st.shift_high_bytes)) + ")");
  const bytesSpread = (sp) => words(size(round(sp.median)), "(IQR", size(round(sp.q1)), "to", size(round(sp.q3)) + ")");
  // Words joined by one space, empty ones left out.
  function words(...parts) {
    return parts.filter((p) => p !== "" && p != null).join(" ");
  }
  function deltaClass(d) {
    return d > 0 ? "up" : d < 0 ? "down" : null;
  }

  // ---- DOM -------------------------------------------------------------------------------

  function attrs(e, a) {
    for (const k in a || {}) {
      const v = a[k];
      if (v == null || v === false) continue;
      if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    return e;
  }
  function h(tag, a, ...kids) {
    const e = attrs(document.createElement(tag), a);
    for (const k of kids.flat()) if (k != null && k !== false) e.append(k);
    return e;
  }
  function s(tag, a, text) {
    const e = attrs(document.createElementNS(SVG, tag), a);
    if (text != null) e.textContent = text;
    return e;
  }

  function showTip(ev, title, lines) {
    tip.replaceChildren(h("strong", null, title), ...lines.map((l) => h("div", null, l)));
    tip.hidden = false;
    moveTip(ev);
  }
  function moveTip(ev) {
    const gap = 14;
    const r = tip.getBoundingClientRect();
    let x = ev.clientX + gap;
    let y = ev.clientY + gap;
    if (x + r.width > innerWidth) x = Math.max(0, ev.clientX - r.width - gap);
    if (y + r.height > innerHeight) y = Math.max(0, ev.clientY - r.height - gap);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() {
    tip.hidden = true;
  }

  function cards(items) {
    return h(
      "div",
      { class: "cards" },
      items.map(([label, value, detail, cls]) =>
        h("div", { class: "card" }, h("div", { class: "label" }, label), h("div", { class: "value " + (cls || "") }, value), detail ? h("div", { class: "detail" }, detail) : null)
      )
    );
  }

  // ---- A sortable, filterable table ------------------------------------------------------

  // columns: {key, label, title, num, value(row), show(row), cls(row)}
  function dataTable({ id, noun, rows, columns, text, limit }) {
    const input = h("input", { id: id.replace("-table", "-filter"), type: "search", placeholder: "Filter " + noun + "…", "aria-label": "Filter " + noun, autocomplete: "off" });
    const counter = h("span", { id: id.replace("-table", "-count"), class: "count" });
    const more = h("button", { type: "button", class: "more", hidden: true }, "Show all");
    const body = h("tbody");
    let key = null;
    let dir = 0;
    let all = false;
    const ths = columns.map((c) =>
      h("th", { "data-key": c.key, scope: "col", class: c.num ? "num" : null, title: c.title, tabindex: 0, onclick: () => sortBy(c), onkeydown: (e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), sortBy(c)) }, c.label)
    );
    const table = h("table", { id, class: "data" }, h("thead", null, h("tr", null, ths)), body);

    function sortBy(c) {
      dir = key === c.key ? -dir : c.num ? -1 : 1;
      key = c.key;
      ths.forEach((th, i) => (columns[i].key === key ? th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending") : th.removeAttribute("aria-sort")));
      draw();
    }
    function draw() {
      const needle = input.value.trim().toLowerCase();
      let list = needle ? rows.filter((r) => text(r).toLowerCase().includes(needle)) : rows.slice();
      if (key) {
        const c = columns.find((c) => c.key === key);
        const order = new Map(rows.map((r, i) => [r, i]));
        list.sort((a, b) => {
          const x = c.value(a);
          const y = c.value(b);
          // Nulls last in both directions; ties keep the report's order.
          if (x == null || y == null) return (x == null) - (y == null) || order.get(a) - order.get(b);
          return (x < y ? -dir : x > y ? dir : 0) || order.get(a) - order.get(b);
        });
      }
      const shown = all ? list : list.slice(0, limit);
      body.replaceChildren(
        ...shown.map((r) =>
          h(
            "tr",
            null,
            columns.map((c) => {
              const v = c.value(r);
              return h("td", { "data-value": v == null ? "" : v, class: [c.num ? "num" : "", c.cls ? c.cls(r) || "" : ""].join(" ").trim() || null }, c.show(r));
            })
          )
        )
      );
      counter.textContent = shown.length + " of " + count(rows.length) + " " + noun + (needle ? " (" + count(list.length) + " match)" : "") + (shown.length < list.length ? ", the first " + shown.length + " shown" : "");
      more.hidden = shown.length >= list.length;
    }
    input.addEventListener("input", draw);
    more.addEventListener("click", () => {
      all = true;
      draw();
    });
    draw();
    return h("div", { class: "table-block" }, h("div", { class: "table-tools" }, input, counter), h("div", { class: "scroll" }, table), more);
  }

  // ---- The tables' columns: they come with the report (src/report/columns) --------------

  const COLUMNS = JSON.parse(document.getElementById("report-columns").textContent);
  // How a cell of each kind is written, from the value read from the row, as the text
  // reports write it; and, where it is not that value, what the table sorts it by.
  const KINDS = {
    text: { text: String },
    name: { text: String },
    number: { text: String },
    count: { text: count },
    count_delta: { text: countDelta },
    size: { text: size },
    size_delta: { text: sizeDelta },
    us: { text: us },
    us_delta: { text: usDelta },
    percent: { text: ([base, delta]) => (base ? percent(base, delta) : delta ? "new" : "-"), sort: ([base, delta]) => (base ? delta / base : null) },
    location: { text: ([, shown]) => shown, sort: ([whole]) => whole },
    shift: { text: shift, sort: (st) => st.shift_us },
    bytes_shift: { text: bytesShift, sort: (st) => st.shift_bytes },
    p_value: { text: pValue },
  };
  // A table's columns, as dataTable takes them. A cell reads the row's field named by its
  // column's key, or what made[key] makes of the row; extra[key] adds to what it shows.
  function columnsOf(table, made, extra) {
    return COLUMNS[table].map((c) => {
      const read = (made && made[c.key]) || ((r) => r[c.key]);
      const kind = KINDS[c.kind] || KINDS.text;
      const value = (r) => {
        const v = read(r);
        return v == null || !kind.sort ? v : kind.sort(v);
      };
      const show = (r) => {
        const v = read(r);
        if (v == null) return c.missing;
        const text = kind.text(v);
        if (c.kind === "name") return h("span", { class: "name" }, text);
        if (c.kind === "location") return h("span", { class: "loc", title: kind.sort(v) }, text);
        return text;
      };
      const more = extra && extra[c.key];
      return {
        key: c.key,
        label: c.label,
        title: c.title,
        num: c.align === "right",
        value,
        show: more ? (r) => [show(r), more(r)] : show,
        cls: c.kind.endsWith("_delta") ? (r) => deltaClass(value(r)) : null,
      };
    });
  }

  // ---- Line charts -------------------------------------------------------------------------

  const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f3c8d", "#8c564b"];

  // A step of 1, 2 or 5 times a power of ten giving about `n` ticks up to `max` (> 0).
  function niceStep(max, n) {
    const raw = max / n;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function bytesAxis(max) {
    let unit = 0;
    while (unit < UNITS.length - 1 && max >= Math.pow(1024, unit + 1)) unit++;
    const scale = Math.pow(1024, unit);
    const step = niceStep(Math.max(max, 1) / scale, 4) * scale;
    const top = Math.max(step, Math.ceil(max / step) * step);
    const ticks = [];
    for (let v = 0; v <= top + step / 2; v += step) ticks.push(v);
    return { top, ticks, label: (v) => +(v / scale).toFixed(2) + " " + UNITS[unit] };
  }

  // series: [{name, label, values, color}]; xs: labels of the snapshots
  function lineChart({ title, series, xs, tipLines }) {
    const W = 560;
    const H = 250;
    const M = { left: 72, right: 16, top: 16, bottom: 34 };
    const max = Math.max(1, ...series.flatMap((se) => se.values));
    const axis = bytesAxis(max);
    const x = (i) => M.left + (xs.length < 2 ? (W - M.left - M.right) / 2 : (i * (W - M.left - M.right)) / (xs.length - 1));
    const y = (v) => H - M.bottom - (v / axis.top) * (H - M.top - M.bottom);
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": title, class: "chart" });
    for (const t of axis.ticks) {
      svg.append(s("line", { x1: M.left, x2: W - M.right, y1: y(t), y2: y(t), class: "grid" }));
      svg.append(s("text", { x: M.left - 6, y: y(t) + 4, class: "tick", "text-anchor": "end" }, axis.label(t)));
    }
    // At most about ten labels; the last snapshot always has one.
    const every = Math.ceil(xs.length / 10);
    const last = xs.length - 1;
    const labelled = (i) => i === last || (i % every === 0 && last - i >= every);
    xs.forEach((label, i) => labelled(i) && svg.append(s("text", { x: x(i), y: H - M.bottom + 16, class: "tick", "text-anchor": "middle" }, label)));
    svg.append(s("line", { x1: M.left, x2: W - M.right, y1: y(0), y2: y(0), class: "axis" }));
    for (const se of series) {
      const d = se.values.map((v, i) => (i ? "L" : "M") + x(i).toFixed(1) + " " + y(v).toFixed(1)).join("");
      svg.append(s("path", { d, class: "series" + (se.cls ? " " + se.cls : ""), "data-name": se.name, stroke: se.color }));
    }
    for (const se of series) {
      se.values.forEach((v, i) => {
        const c = s("circle", { cx: x(i), cy: y(v), r: 4.5, class: "point" + (se.cls ? " " + se.cls : ""), fill: se.color, "data-name": se.name, tabindex: 0 });
        const show = (ev) => showTip(ev, se.label, tipLines(se, i));
        c.addEventListener("mouseenter", show);
        c.addEventListener("mousemove", moveTip);
        c.addEventListener("mouseleave", hideTip);
        c.addEventListener("focus", () => {
          const r = c.getBoundingClientRect();
          show({ clientX: r.right, clientY: r.bottom });
        });
        c.addEventListener("blur", hideTip);
        svg.append(c);
      });
    }
    const legend =
      series.length > 1
        ? h(
            "ul",
            { class: "legend" },
            series.map((se) => h("li", null, h("span", { class: "swatch", style: "background:" + se.color }), se.label))
          )
        : null;
    return h("figure", { class: "chart-box" }, h("figcaption", null, title), svg, legend);
  }

  // ---- Heap ----------------------------------------------------------------------------------

  function renderHeap(heap, root) {
    const t = heap.totals;
    root.append(
      cards([
        ["Heap size", size(t.size_head), words(sizeDelta(t.size_delta), percent(t.size_base, t.size_delta), "from", size(t.size_base)), deltaClass(t.size_delta)],
        ["Objects", count(t.count_head), countDelta(t.count_delta) + " from " + count(t.count_base), deltaClass(t.count_delta)],
        ["Classes", count(heap.classes.length), heap.classes.filter((c) => c.count_delta || c.size_delta).length + " changed"],
        ["Objects matched by", heap.id_matching === "same-process" ? "node id" : heap.id_matching === "disjoint" ? "class only" : "class totals", heap.id_matching],
      ].concat(t.native_size_head != null ? [["Native size", size(t.native_size_head), words(sizeDelta(t.native_size_delta), percent(t.native_size_base, t.native_size_delta), "from", size(t.native_size_base)), deltaClass(t.native_size_delta)]] : []))
    );

    const chart = h("div", { id: "heap-chart", class: "charts" });
    const trend = heap.trend;
    if (trend && trend.snapshots.length > 1) {
      const snaps = trend.snapshots;
      const t0 = snaps[0].time_ns;
      const xs = snaps.map((p, i) => (p.time_ns != null && t0 != null ? "+" + ((p.time_ns - t0) / 1e9).toFixed(1) + " s" : "#" + i));
      const where = (i) => snaps[i].path.split(/[\\/]/).pop() + (snaps[i].snapshot_index || snaps.some((p) => p.path === snaps[i].path && p !== snaps[i]) ? ", snapshot " + snaps[i].snapshot_index : "");
      const step = (values, i) => (i ? "change " + sizeDelta(values[i] - values[i - 1]) : "first snapshot");
      chart.append(
        lineChart({
          title: "Total heap size over " + snaps.length + " snapshots",
          xs,
          series: [{ name: "total", label: "Total heap", values: snaps.map((p) => p.size), color: "#333", cls: "total" }],
          tipLines: (se, i) => ["#" + i + ": " + where(i), size(se.values[i]) + " · " + count(snaps[i].count) + " objects", step(se.values, i)],
        })
      );
      const top = trend.suspects.slice(0, PALETTE.length);
      if (top.length) {
        chart.append(
          lineChart({
            title: "Leak suspects' size" + (trend.suspects.length > top.length ? " (the " + top.length + " that grew most)" : ""),
            xs,
            series: top.map((sp, k) => ({ name: sp.name, label: sp.name, values: sp.sizes, color: PALETTE[k], counts: sp.counts })),
            tipLines: (se, i) => ["#" + i + ": " + where(i), size(se.values[i]) + " · " + count(se.counts[i]) + " objects", step(se.values, i)],
          })
        );
      } else {
        chart.append(h("p", { class: "note" }, "No class grew in at least " + trend.required_intervals + " intervals by " + size(trend.floor_bytes) + " or more: no suspects."));
      }
      const owners = (trend.owners || []).slice(0, PALETTE.length);
      if (owners.length) {
        chart.append(
          lineChart({
            title: "Leak owners' retained size",
            xs,
            series: owners.map((o, k) => ({ name: o.node + " @" + o.id, label: o.node + " @" + o.id, values: o.retained, color: PALETTE[k], entries: o.entries })),
            tipLines: (se, i) => ["#" + i + ": " + where(i), size(se.values[i]) + " · " + count(se.entries[i]) + " entries", step(se.values, i)],
          })
        );
      }
    } else {
      chart.dataset.empty = "1";
      chart.append(h("p", { class: "note" }, "Two snapshots compared: there is no trend to chart. Compare a capture holding several snapshots, or three inputs or more, to chart growth."));
    }
    root.append(h("h3", null, "Growth"), chart);

    const suspects = new Set(trend ? trend.suspects.map((sp) => sp.name) : []);
    const tag = (c) => (suspects.has(c.name) ? h("span", { class: "tag", title: "grows across the snapshots" }, "suspect") : null);
    root.append(h("h3", null, "Classes"), dataTable({ id: "class-table", noun: "classes", rows: heap.classes, columns: columnsOf("classes", null, { name: tag }), text: (c) => c.name, limit: 400 }));

    const owners = trend ? trend.owners || [] : [];
    if (owners.length) {
      root.append(
        h("h3", null, "Leak owners"),
        h("p", { class: "note" }, "Objects that kept gaining new objects over the series, largest growth first, each with a path from the GC roots that prefers named references, what it gained, and the suspects it holds."),
        ...owners.map((o) => ownerBox(o, trend))
      );
    }
    const held = new Set(owners.map((o) => o.id));
    const paths = (trend ? trend.suspects.filter((sp) => !held.has(sp.owner)).map((sp) => ({ sp, why: "suspect" })) : []).concat(heap.explain.map((sp) => ({ sp, why: "explained" })));
    if (paths.length) {
      root.append(
        h("h3", null, "Retainer paths"),
        h("p", { class: "note" }, "One shortest path from the GC roots to an instance of each class, never through weak references."),
        ...paths.map(({ sp, why }) => retainerPath(sp, why))
      );
    }
    if (heap.leak_traces) renderLeakTraces(heap.leak_traces, root);
    if (heap.leaklist) renderLeakList(heap.leaklist, root);
  }

  function shapeText(s) {
    if (s.shape === "detached-dom") return "detached DOM subtree of " + count(s.nodes) + " node" + (s.nodes === 1 ? "" : "s") + " (" + s.root + ")";
    if (s.shape === "event-listener") return "held by an event listener of " + s.target + " @" + s.target_id + " (" + count(s.listeners) + " listener" + (s.listeners === 1 ? "" : "s") + ")";
    if (s.shape === "oversized") return "oversized: " + count(s.objects) + " objects retain 1 MiB or more each, the largest " + size(s.retained);
    if (s.shape === "tagged") return count(s.objects) + " objects tagged as leaks";
    if (s.shape === "unmounted-fibers") return count(s.fibers) + " unmounted React fibers";
    return s.shape;
  }

  function renderLeakTraces(leaks, root) {
    if (!leaks.clusters.length) return;
    const what = leaks.basis === "one-action" ? "allocated by the action (BASE to the target) and alive in HEAD" : "new in HEAD";
    const rows = leaks.clusters.map((c) => Object.assign({ shape_text: c.shapes.map(shapeText).join("; "), class_text: c.classes.slice(0, 4).map((k) => count(k.count) + " " + k.class).join(", ") + (c.classes.length > 4 ? ", …" : "") }, c));
    root.append(
      h("h3", null, "Leak traces"),
      h("p", { class: "note" }, count(leaks.leaked_count) + " objects " + what + " (" + size(leaks.leaked_size) + ") in " + count(leaks.cluster_count) + " clusters, each the objects held the same way from the GC roots" + (leaks.ignored_count ? "; " + count(leaks.ignored_count) + " made by the inspection left out" : "") + "."),
      dataTable({
        id: "leak-table",
        noun: "clusters",
        rows,
        text: (c) => c.class_text + " " + c.shape_text,
        limit: 100,
        columns: [
          { key: "rank", label: "#", num: 1, value: (c) => c.rank, show: (c) => String(c.rank) },
          { key: "name", label: "Classes", value: (c) => c.class_text, show: (c) => h("span", { class: "name" }, c.class_text) },
          { key: "shape_text", label: "Shape", value: (c) => c.shape_text, show: (c) => c.shape_text },
          { key: "count", label: "Objects", num: 1, value: (c) => c.count, show: (c) => count(c.count) },
          { key: "retained", label: "Retained", num: 1, value: (c) => c.retained, show: (c) => size(c.retained) },
        ],
      }),
      ...rows
        .filter((c) => c.rank <= 3 || c.shapes.length)
        .slice(0, 20)
        .map((c) => retainerPath({ name: "#" + c.rank + " " + c.representative + " @" + c.representative_id, retainer_steps: c.trace_steps, retained_size: c.retained }, "trace"))
    );
  }

  // ArkTS: the leak watcher's list joined with HEAD.
  function renderLeakList(list, root) {
    const found = list.objects.filter((o) => o.found).length;
    const hash = list.hash_matches === true ? "its snapshot_hash is HEAD's file's" : list.hash_matches === false ? "its snapshot_hash is NOT HEAD's file's (see the warnings)" : "it states no snapshot_hash";
    root.append(
      h("h3", null, "Leak watcher's list"),
      h("p", { class: "note" }, h("code", null, list.path), ": " + list.objects.length + " watched objects, " + found + " found in HEAD; " + hash + ".")
    );
    root.append(dataTable({ id: "leaklist-table", noun: "watched objects", rows: list.objects, columns: columnsOf("leaklist"), text: (o) => o.name + " " + o.msg, limit: 400 }));
    root.append(...list.objects.map((o) => retainerPath(Object.assign({}, o, { name: o.name + " #" + o.hash, retained_size: o.retained_size }), "watched")));
  }

  // One leak owner: its path, its entries per snapshot, what it gained, and the suspects it
  // holds, each with its own path.
  function ownerBox(o, trend) {
    const box = h("div", { class: "owner" });
    const last = o.retained[o.retained.length - 1];
    const path = retainerPath({ name: o.node + " @" + o.id, retainer_steps: o.retainer_steps, retained_size: last, retainer_note: "No path was found." }, "owner");
    const per = o.entries_steady != null ? " (" + countDelta(o.entries_steady) + " per iteration, every iteration)" : "";
    const how = o.path_choice === "named" ? " · path through named references (a shortest one has " + o.shortest_length + " steps)" : "";
    path.querySelector("summary").append(" · entries " + o.entries.map(count).join(" → ") + per + " · gained " + size(o.gained_size) + how);
    box.append(path, h("p", { class: "note" }, "Gained: " + o.gained.slice(0, 6).map((g) => count(g.count) + " " + g.class + " (" + size(g.size) + ")").join(", ")));
    for (const sp of trend.suspects.filter((sp) => sp.owner === o.id)) box.append(retainerPath(sp, "suspect"));
    return box;
  }

  function retainerPath(sp, why) {
    const head = [h("code", { class: "name" }, sp.name)];
    if (why === "suspect") head.push(" grew " + sizeDelta(sp.size_growth) + ", " + countDelta(sp.count_growth) + " objects");
    if (sp.retained_size != null) head.push(" · retains " + size(sp.retained_size));
    const box = h("details", { class: "suspect-path", open: true }, h("summary", null, head));
    const steps = sp.retainer_steps;
    if (!steps) {
      box.append(h("p", { class: "note" }, sp.retainer_note || "No path was found."));
      return box;
    }
    const ENDS = 12;
    const li = (st, i) =>
      h(
        "li",
        { class: "step" },
        st.edge != null ? h("span", { class: "edge" + (st.edge_type === "weak" ? " weak" : "") }, st.edge + " → ") : null,
        h("span", { class: "node" + (i === steps.length - 1 ? " target" : "") }, st.node),
        h("span", { class: "id" }, " @" + st.id)
      );
    const list = h("ol", { class: "steps" });
    if (steps.length > 2 * ENDS + 1) {
      const hidden = steps.slice(ENDS, steps.length - ENDS);
      const fold = h("li", { class: "fold" }, h("button", { type: "button" }, "… " + count(hidden.length) + " more steps"));
      fold.firstChild.addEventListener("click", () => fold.replaceWith(...hidden.map((st, k) => li(st, ENDS + k))));
      list.append(...steps.slice(0, ENDS).map(li), fold, ...steps.slice(steps.length - ENDS).map((st, k) => li(st, steps.length - ENDS + k)));
    } else {
      list.append(...steps.map(li));
    }
    box.append(list);
    if (sp.instance_new) box.append(h("p", { class: "note" }, "The instance shown is new since BASE."));
    if (sp.root_group) box.append(h("p", { class: "note" }, "Held by the " + sp.root_group + "."));
    return box;
  }

  // ---- CPU -----------------------------------------------------------------------------------

  function location(f) {
    if (!f.url) return "";
    return f.line ? f.url + ":" + f.line + ":" + f.column : f.url;
  }
  // The script's last path segment: `cpu.js`, or `b.ets` for `module|pages/b.ets`.
  function scriptName(url) {
    return url.replace(/\/+$/, "").split(/[\/|]/).pop();
  }
  function shortLocation(f) {
    if (!f.url) return "";
    const file = scriptName(f.url);
    return f.line ? file + ":" + f.line + ":" + f.column : file;
  }

  // A function table's location cell: [whole, shown]. Script names that stand for more
  // than one URL among the functions, and the original sources of --source-map, are
  // shown whole, as in the text reports.
  function locations(functions) {
    const urls = new Map();
    const ambiguous = new Set();
    for (const f of functions) {
      const name = scriptName(f.url);
      if (!urls.has(name)) urls.set(name, f.url);
      else if (urls.get(name) !== f.url) ambiguous.add(name);
    }
    const sources = new Set(data.source_map ? data.source_map.sources : []);
    return (f) => [location(f), ambiguous.has(scriptName(f.url)) || sources.has(f.url) ? location(f) : shortLocation(f)];
  }

  function renderCpu(cpu, root) {
    root.append(
      cards([
        ["CPU time", us(cpu.duration_us_head), words(usDelta(cpu.duration_us_delta), percent(cpu.duration_us_base, cpu.duration_us_delta), "from", us(cpu.duration_us_base)), deltaClass(cpu.duration_us_delta)],
        ["Garbage collector", us(cpu.gc_us_head), usDelta(cpu.gc_us_delta) + " from " + us(cpu.gc_us_base), deltaClass(cpu.gc_us_delta)],
        ["(program)", us(cpu.program_us_head), usDelta(cpu.program_us_delta) + " from " + us(cpu.program_us_base), deltaClass(cpu.program_us_delta)],
        ["Samples", count(cpu.samples_head), count(cpu.samples_base) + " in BASE" + (cpu.scale != null ? "; BASE scaled ×" + cpu.scale.toFixed(3) : "")],
      ])
    );
    // Run sets: what the comparison rests on; one profile per side says so.
    if (cpu.runs) {
      const r = cpu.runs;
      root.append(
        h("p", { class: "note", id: "runs" }, words("Run sets:", r.base, "BASE and", r.head, "HEAD runs; medians compared (shift: Hodges-Lehmann; p: Mann-Whitney U, two-sided); thresholds: growth past the limit shown one-sided at α =", r.alpha + ".")),
        h("p", { class: "note" }, words("Non-idle per run: BASE", spread(r.duration.base) + ", HEAD", spread(r.duration.head) + "; shift", shift(r.duration) + ", p =", pValue(r.duration.p_value) + ".")),
        h("p", { class: "note" }, words("GC per run: BASE", spread(r.gc.base) + ", HEAD", spread(r.gc.head) + "; shift", shift(r.gc) + ", p =", pValue(r.gc.p_value) + "."))
      );
    } else {
      root.append(h("p", { class: "note", id: "runs" }, "Single-run comparison: one profile per side, so run-to-run noise is part of every difference."));
    }
    if (cpu.flame) {
      root.append(h("h3", null, cpu.runs ? "Differential flame graph (medians over the runs)" : "Differential flame graph"), flameGraph(cpu.flame, CPU_FLAME));
    } else {
      root.append(h("p", { class: "note", id: "flame-missing" }, "No flame graph: a baseline keeps per-function sums, not stacks."));
    }
    if (cpu.categories.length) {
      root.append(
        h("h3", null, "Categories"),
        dataTable({
          id: "category-table",
          noun: "categories",
          rows: cpu.categories,
          text: (c) => c.name,
          limit: 100,
          columns: columnsOf("categories"),
        })
      );
    }
    const cpuPlaces = locations(cpu.functions);
    root.append(
      h("h3", null, "Functions"),
      dataTable({
        id: "function-table",
        noun: "functions",
        rows: cpu.functions,
        text: (f) => f.name + " " + location(f),
        limit: 400,
        columns: columnsOf("functions", {
          location: (f) => cpuPlaces(f),
          self_us_percent: (f) => [f.self_us_base, f.self_us_delta],
          shift: (f) => f.self_stats,
          p: (f) => (f.self_stats ? f.self_stats.p_value : null),
        }),
      })
    );
  }

  // ---- Allocations (sampling heap profiles) --------------------------------------------------

  function renderAlloc(alloc, root) {
    root.append(
      cards([
        ["Allocated (sampled)", size(alloc.bytes_head), words(sizeDelta(alloc.bytes_delta), percent(alloc.bytes_base, alloc.bytes_delta), "from", size(alloc.bytes_base)), deltaClass(alloc.bytes_delta)],
        ["Samples", count(alloc.samples_head), count(alloc.samples_base) + " in BASE"],
      ])
    );
    if (alloc.runs) {
      const r = alloc.runs;
      root.append(
        h("p", { class: "note", id: "alloc-runs" }, words("Run sets:", r.base, "BASE and", r.head, "HEAD runs; medians compared (shift: Hodges-Lehmann; p: Mann-Whitney U, two-sided); thresholds: growth past the limit shown one-sided at α =", r.alpha + ".")),
        h("p", { class: "note" }, words("Allocated per run: BASE", bytesSpread(r.bytes.base) + ", HEAD", bytesSpread(r.bytes.head) + "; shift", bytesShift(r.bytes) + ", p =", pValue(r.bytes.p_value) + "."))
      );
    } else {
      root.append(h("p", { class: "note", id: "alloc-runs" }, "Single-run comparison: one profile per side, so sampling noise is part of every difference."));
    }
    if (alloc.flame) {
      root.append(h("h3", null, alloc.runs ? "Differential allocation flame graph (medians over the runs)" : "Differential allocation flame graph"), flameGraph(alloc.flame, ALLOC_FLAME));
    }
    const allocPlaces = locations(alloc.functions);
    root.append(
      h("h3", null, "Functions"),
      dataTable({
        id: "alloc-table",
        noun: "functions",
        rows: alloc.functions,
        text: (f) => f.name + " " + location(f),
        limit: 400,
        columns: columnsOf("alloc_functions", {
          location: (f) => allocPlaces(f),
          self_bytes_percent: (f) => [f.self_bytes_base, f.self_bytes_delta],
          bytes_shift: (f) => f.self_stats,
          p: (f) => (f.self_stats ? f.self_stats.p_value : null),
        }),
      })
    );
  }

  // ---- The differential flame graph ------------------------------------------------------------
  //
  // Root at the top, callees below. A frame's width is its total time in HEAD (or in BASE,
  // to see what HEAD no longer runs); its colour is the change of its self time (or of its
  // total time): red slower, blue faster, the strongest colour for the largest change.

  const ROW = 18;
  const NEUTRAL = [236, 236, 232];
  const SLOWER = [214, 39, 40];
  const FASTER = [31, 103, 180];

  function mix(to, t) {
    const c = NEUTRAL.map((n, k) => Math.round(n + (to[k] - n) * t));
    return "rgb(" + c.join(",") + ")";
  }

  // What a flame graph weighs: the CPU's time, or the bytes of sampling heap profiles. The
  // CPU's keeps the element ids the browser test knows; the allocations' are prefixed.
  const CPU_FLAME = { id: "flame", key: "us", amount: us, delta: usDelta, what: "time", more: "slower", less: "faster", none: "no CPU time outside idle" };
  const ALLOC_FLAME = { id: "alloc-flame", key: "bytes", amount: size, delta: sizeDelta, what: "allocated bytes", more: "more", less: "less", none: "no allocation" };

  function flameGraph(flame, o) {
    const nodes = flame.nodes;
    const frames = flame.frames;
    const selfOf = (n, side) => n["self_" + o.key + "_" + side];
    const totalOf = (n, side) => n["total_" + o.key + "_" + side];
    const kids = nodes.map(() => []);
    const depth = new Array(nodes.length).fill(0);
    nodes.forEach((n, i) => {
      if (n.parent != null) {
        kids[n.parent].push(i);
        depth[i] = depth[n.parent] + 1;
      }
    });
    const state = { zoom: 0, width: "head", colour: "self", search: "" };
    const width = (i) => totalOf(nodes[i], state.width);
    const change = (i) => (state.colour === "self" ? selfOf(nodes[i], "head") - selfOf(nodes[i], "base") : totalOf(nodes[i], "head") - totalOf(nodes[i], "base"));
    const name = (i) => frames[nodes[i].frame].name;

    const box = h("div", { id: o.id });
    const svgHolder = h("div", { class: "flame-canvas" });
    const legend = h("div", { id: o.id + "-legend", class: "legend-bar" });
    const reset = h("button", { id: o.id + "-reset", type: "button", disabled: true, onclick: () => zoom(0) }, "Reset zoom");
    const search = h("input", { id: o.id + "-search", type: "search", placeholder: "Highlight functions…", "aria-label": "Highlight functions", autocomplete: "off" });
    const pick = (id, label, options, key) =>
      h(
        "label",
        null,
        label + " ",
        h(
          "select",
          { id, onchange: (e) => ((state[key] = e.target.value), draw()) },
          options.map(([v, text]) => h("option", { value: v }, text))
        )
      );
    search.addEventListener("input", () => {
      state.search = search.value.trim().toLowerCase();
      draw();
    });
    box.append(
      h(
        "div",
        { class: "flame-tools" },
        pick(o.id + "-width", "Width:", [["head", "HEAD total " + o.what], ["base", "BASE total " + o.what]], "width"),
        pick(o.id + "-colour", "Colour:", [["self", "self " + o.what + " change"], ["total", "total " + o.what + " change"]], "colour"),
        search,
        reset
      ),
      legend,
      svgHolder
    );
    if (flame.omitted_nodes) {
      const capped = nodes.length >= flame.max_nodes ? ", and those beyond the widest " + count(flame.max_nodes) : "";
      box.append(h("p", { class: "note" }, count(flame.omitted_nodes) + " stacks are left out: those under " + o.amount(flame["min_" + o.key]) + " on both sides" + capped + "."));
    }

    function zoom(i) {
      state.zoom = i;
      reset.disabled = i === 0;
      draw();
    }

    function draw() {
      const W = Math.max(240, Math.floor(svgHolder.clientWidth || box.clientWidth || 960));
      // A frame with no time on the side drawn (zoomed in HEAD, then BASE chosen) gives
      // way to its nearest ancestor that has some.
      while (state.zoom !== 0 && width(state.zoom) === 0) state.zoom = nodes[state.zoom].parent;
      reset.disabled = state.zoom === 0;
      const z = state.zoom;
      const zw = width(z);
      // The zoomed frame's ancestors, full width above it.
      const chain = [];
      for (let a = nodes[z].parent; a != null; a = nodes[a].parent) chain.unshift(a);
      const placed = chain.map((i) => ({ i, x: 0, w: W, d: depth[i], ancestor: true }));
      if (zw > 0) {
        const stack = [{ i: z, x: 0 }];
        while (stack.length) {
          const { i, x } = stack.pop();
          const w = (width(i) / zw) * W;
          if (w < 1) continue;
          placed.push({ i, x, w, d: depth[i] });
          let cx = x;
          for (const c of kids[i]) {
            stack.push({ i: c, x: cx });
            cx += (width(c) / zw) * W;
          }
        }
      }
      let maxChange = 0;
      for (const p of placed) maxChange = Math.max(maxChange, Math.abs(change(p.i)));
      const rows = placed.reduce((m, p) => Math.max(m, p.d), 0) + 1;
      const svg = s("svg", { width: W, height: rows * ROW, class: "flame", role: "img", "aria-label": "Differential flame graph" });
      for (const p of placed) {
        const d = change(p.i);
        const t = maxChange ? Math.abs(d) / maxChange : 0;
        const fill = d > 0 ? mix(SLOWER, t) : d < 0 ? mix(FASTER, t) : mix(NEUTRAL, 0);
        const match = state.search && name(p.i).toLowerCase().includes(state.search);
        const g = s("g", { class: "frame" + (p.ancestor ? " ancestor" : "") + (match ? " match" : "") + (p.i === 0 ? " root" : ""), "data-name": name(p.i), "data-index": p.i, transform: "translate(" + p.x.toFixed(2) + "," + p.d * ROW + ")" });
        g.append(s("rect", { width: Math.max(p.w - 0.5, 0.1).toFixed(2), height: ROW - 1, fill, rx: 1.5 }));
        if (p.w > 34) {
          const room = Math.floor((p.w - 8) / 6.6);
          const label = name(p.i);
          g.append(s("text", { x: 4, y: ROW - 5, fill: t > 0.62 ? "#fff" : "#111" }, label.length > room ? label.slice(0, Math.max(room - 1, 1)) + "…" : label));
        }
        svg.append(g);
      }
      svgHolder.replaceChildren(svg);
      if (!width(0)) {
        svgHolder.append(h("p", { class: "note" }, (state.width === "head" ? "HEAD" : "BASE") + " has " + o.none + ": nothing to draw."));
      }
      drawLegend(maxChange);
    }

    function drawLegend(maxChange) {
      const what = (state.colour === "self" ? "self " : "total ") + o.what;
      legend.replaceChildren(
        h("span", null, maxChange ? o.amount(maxChange) + " " + o.less : o.less),
        h("span", { class: "gradient", style: "background:linear-gradient(90deg," + mix(FASTER, 1) + "," + mix(NEUTRAL, 0) + "," + mix(SLOWER, 1) + ")" }),
        h("span", null, maxChange ? o.amount(maxChange) + " " + o.more : o.more),
        h("span", { class: "note" }, "Colour: change of " + what + " in HEAD against BASE. Width: " + (state.width === "head" ? "HEAD" : "BASE") + "'s total " + o.what + (state.width === "head" ? " (frames HEAD no longer runs have none; show BASE's width to see them)" : "") + ". Click a frame to zoom in, Escape to zoom out.")
      );
    }

    function frameOf(ev) {
      const g = ev.target.closest && ev.target.closest("g.frame");
      return g ? +g.dataset.index : null;
    }
    svgHolder.addEventListener("mousemove", (ev) => {
      const i = frameOf(ev);
      if (i == null) return hideTip();
      const n = nodes[i];
      const f = frames[n.frame];
      const root = nodes[0];
      const [tb, th, sb, sh] = [totalOf(n, "base"), totalOf(n, "head"), selfOf(n, "base"), selfOf(n, "head")];
      const rootHead = totalOf(root, "head");
      const share = rootHead ? ((th * 100) / rootHead).toFixed(1) + "% of HEAD" : "";
      showTip(ev, f.name, [
        location(f) || "(no script)",
        "total " + o.amount(tb) + " → " + o.amount(th) + "  " + o.delta(th - tb) + " " + percent(tb, th - tb),
        "self " + o.amount(sb) + " → " + o.amount(sh) + "  " + o.delta(sh - sb) + " " + percent(sb, sh - sb),
        share,
      ]);
    });
    svgHolder.addEventListener("mouseleave", hideTip);
    svgHolder.addEventListener("click", (ev) => {
      const i = frameOf(ev);
      if (i != null) zoom(i === state.zoom && nodes[i].parent != null ? nodes[i].parent : i);
    });
    document.addEventListener("keydown", (ev) => {
      // Escape in a text box or a list is theirs (it clears a search).
      if (ev.key !== "Escape" || state.zoom === 0 || ev.target.closest("input, select, textarea")) return;
      zoom(nodes[state.zoom].parent ?? 0);
    });
    let pending = false;
    addEventListener("resize", () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        draw();
      });
    });
    box.draw = draw;
    return box;
  }

  // ---- Page ----------------------------------------------------------------------------------

  const heapRoot = document.getElementById("heap-body");
  if (data.heap && heapRoot) renderHeap(data.heap, heapRoot);
  const cpuRoot = document.getElementById("cpu-body");
  if (data.cpu && cpuRoot) {
    renderCpu(data.cpu, cpuRoot);
    // The flame graph takes the width it is given, so it is drawn once in the page.
    document.getElementById("flame")?.draw();
  }
  const allocRoot = document.getElementById("alloc-body");
  if (data.alloc && allocRoot) {
    renderAlloc(data.alloc, allocRoot);
    document.getElementById("alloc-flame")?.draw();
  }

  const json = document.getElementById("download-json");
  if (json) {
    // The embedded text itself: parsed numbers above 2^53 would lose digits.
    json.href = URL.createObjectURL(new Blob([document.getElementById("report-data").textContent + "\n"], { type: "application/json" }));
    json.hidden = false;
  }
  document.body.dataset.rendered = "1";
})();
