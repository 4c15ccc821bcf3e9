// The graph explorer's view (anywidget ESM; Python side: relay_nb/notebook/explorer.py).
// Concatenated after vendor/dagre.min.js and explore_layout.js (exploreModel,
// visibleView, layoutView, searchModel, reveal, ...), so it is one module with no
// imports: no bundler, no CDN, works offline.
//
// Model traitlets: payload (the data: groups, nodes, edges, expanded, text; read by
// explore_payload.js), expanded (open group paths, synced both ways), selected (node id), query (search text), title.
// Interaction: click a group to open/close it in place; wheel zooms at the pointer, drag
// pans, buttons fit / zoom / expand all / collapse to level; the search box lists
// matches (Enter / n: next, Shift+Enter / N: previous, b: back to before the last jump);
// hover shows details; click a node to select its lines in the text view.

const SVG_NS = "http://www.w3.org/2000/svg";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}

function render({ model, el: root }) {
  root.classList.add("relay-ex");
  const title = el("div", "relay-ex-title");
  const bar = el("div", "relay-ex-bar");
  const search = el("input", "relay-ex-search");
  search.type = "search";
  search.placeholder = "search op, %name, @global, type, attr\u2026";
  const count = el("span", "relay-ex-count");
  const buttons = {};
  for (const [name, label, tip] of [
    ["prev", "\u25b2", "previous match (Shift+Enter)"],
    ["next", "\u25bc", "next match (Enter)"],
    ["fit", "fit", "fit the graph to the view"],
    ["zin", "+", "zoom in"],
    ["zout", "\u2212", "zoom out"],
    ["all", "expand all", "open every group"],
    ["top", "collapse", "collapse to the first view"],
  ]) {
    const b = el("button", "relay-ex-btn relay-ex-" + name, label);
    b.title = tip;
    buttons[name] = b;
  }
  const level = el("select", "relay-ex-level");
  level.title = "collapse to level N";
  bar.append(search, buttons.prev, buttons.next, count, buttons.fit, buttons.zin, buttons.zout, buttons.all, buttons.top, level);
  const stage = el("div", "relay-ex-stage");
  stage.tabIndex = 0;
  const svg = svgEl("svg", { class: "relay-ex-svg" });
  const defs = svgEl("defs");
  const marker = svgEl("marker", { id: "relay-ex-arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: "relay-ex-arrowhead" }));
  defs.append(marker);
  const viewport = svgEl("g", { class: "relay-ex-viewport" });
  svg.append(defs, viewport);
  const status = el("div", "relay-ex-status");
  status.hidden = true;
  stage.append(svg, status);
  const results = el("div", "relay-ex-results");
  const info = el("div", "relay-ex-info");
  const code = el("pre", "relay-ex-text");
  const side = el("div", "relay-ex-side");
  side.append(results, info, code);
  const body = el("div", "relay-ex-body");
  body.append(stage, side);
  root.replaceChildren(title, bar, body);

  let data = {}; // the widget's data, once readPayload has it
  let m = null;
  let open = new Set();
  let cache = new Map();
  let views = new Map(); // open-set key -> {view, layout}: the last few states drawn
  let layout = null;
  let view = null;
  let t = { x: 10, y: 10, k: 1 };
  let matches = [];
  let current = -1;
  const history = [];
  let lineNodes = [];
  const itemEls = new Map();

  // Until the user pans or zooms, the view refits when the stage gets its size (a
  // widget drawn in a hidden tab, e.g. the stepper's graph tab, starts at width 0).
  let moved = false;
  const resize = new ResizeObserver(() => {
    if (!moved && stage.clientWidth > 0) fit(true);
  });
  resize.observe(stage);

  function applyTransform() {
    viewport.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
    if (!repaint && stale()) repaint = requestAnimationFrame(paint);
  }

  function setOpenFromModel() {
    open = new Set();
    for (const id of model.get("expanded") || []) if (m.groupIndex.has(id)) open.add(m.groupIndex.get(id));
  }

  function saveOpen() {
    const ids = [...open].map((g) => m.groups[g].id).sort();
    model.set("expanded", ids);
    model.save_changes();
  }

  function showInfo(key) {
    info.replaceChildren();
    if (!key) {
      info.append(el("div", "relay-ex-hint", "hover a node for details; click a group to open it, a node to select its lines"));
      return;
    }
    const rows = [];
    if (m.groupIndex.has(key)) {
      const g = m.groups[m.groupIndex.get(key)];
      info.append(el("div", "relay-ex-label", g.label));
      rows.push(["group", g.kind], ["holds", `${g.size} nodes, ${g.ops} ops`], ["path", g.id]);
    } else {
      const n = m.nodes[m.nodeIndex.get(key)];
      info.append(el("div", "relay-ex-label", n.label));
      const g = n.group >= 0 ? m.groups[n.group].id : "/";
      rows.push(["kind", n.kind + (n.uses >= 2 && n.kind !== "var" ? ` (shared: ${n.uses} uses)` : "")], ["type", n.type || "-"], ["attrs", n.attrs || "-"]);
      rows.push(["line", n.line ? (n.end && n.end !== n.line ? `${n.line}-${n.end}` : `${n.line}`) : "-"], ["path", g], ["id", n.id]);
    }
    const table = el("table", "relay-ex-table");
    for (const [k, v] of rows) {
      const tr = el("tr");
      tr.append(el("th", "", k), el("td", "relay-ex-" + k, v));
      table.append(tr);
    }
    info.append(table);
  }

  // A long program text (the RNN-T printout: 24,000 lines) keeps only the lines near
  // the scroll position in the DOM, redrawn as it scrolls: drawing every line took 4 of
  // the 5 s of its first view.  A short one is drawn whole.
  const VIRTUAL_LINES = 3000;
  const LINE_H = 16; // px, fixed by the CSS of .relay-ex-text-virtual
  let lines = [];
  let virtual = false;
  let shownLines = [0, 0]; // lines [a, b) (0-based) in the DOM
  const marks = new Map(); // class -> [first, last] marked line (1-based)
  let textWindow = null;

  function lineDiv(i) {
    const div = el("div", "relay-ex-line");
    div.append(el("span", "relay-ex-lineno", String(i + 1)), el("span", "relay-ex-code", lines[i]));
    return div;
  }

  function applyMarks(cls, first, last) {
    const a = Math.max(first - 1, shownLines[0]);
    const b = Math.min(last, shownLines[1]);
    for (let i = a; i < b; i++) lineNodes[i - shownLines[0]].classList.add(cls);
  }

  function fillText() {
    if (!virtual) return;
    const h = code.clientHeight || 560;
    const a = Math.max(0, Math.floor(code.scrollTop / LINE_H) - 20);
    const b = Math.min(lines.length, Math.ceil((code.scrollTop + h) / LINE_H) + 20);
    if (a >= shownLines[0] && b <= shownLines[1]) return;
    shownLines = [Math.max(0, a - 100), Math.min(lines.length, b + 100)];
    lineNodes = [];
    const frag = document.createDocumentFragment();
    for (let i = shownLines[0]; i < shownLines[1]; i++) {
      lineNodes.push(lineDiv(i));
      frag.append(lineNodes[lineNodes.length - 1]);
    }
    textWindow.style.top = `${shownLines[0] * LINE_H}px`;
    textWindow.replaceChildren(frag);
    for (const [cls, [first, last]] of marks) applyMarks(cls, first, last);
  }
  code.addEventListener("scroll", fillText, { passive: true });

  function markLines(key, cls, scroll) {
    for (const l of code.querySelectorAll("." + cls)) l.classList.remove(cls);
    marks.delete(cls);
    if (!key || !m.nodeIndex.has(key)) return;
    const n = m.nodes[m.nodeIndex.get(key)];
    if (!n.line || n.line > lines.length) return;
    const last = Math.min(n.end || n.line, lines.length);
    marks.set(cls, [n.line, last]);
    if (scroll && virtual) {
      code.scrollTop = (n.line - 1) * LINE_H - code.clientHeight / 3;
      fillText();
    } else if (scroll) {
      const line = lineNodes[n.line - 1];
      code.scrollTop = line.offsetTop - code.offsetTop - code.clientHeight / 3;
    }
    applyMarks(cls, n.line, last);
  }

  function drawText() {
    lines = (data.text || "").split("\n");
    virtual = lines.length > VIRTUAL_LINES;
    code.classList.toggle("relay-ex-text-virtual", virtual);
    marks.clear();
    if (virtual) {
      const spacer = el("div", "relay-ex-text-spacer");
      spacer.style.height = `${lines.length * LINE_H}px`;
      textWindow = el("div", "relay-ex-text-window");
      spacer.append(textWindow);
      code.replaceChildren(spacer);
      shownLines = [0, 0];
      lineNodes = [];
      fillText();
      return;
    }
    const frag = document.createDocumentFragment();
    lineNodes = lines.map((_, i) => frag.appendChild(lineDiv(i)));
    shownLines = [0, lines.length];
    code.replaceChildren(frag);
  }

  // Groups holding a highlighted node (e.g. what a pass changed) are marked when closed.
  let hot = new Set();
  function computeHot() {
    hot = new Set();
    for (const n of m.nodes) {
      if (!n.hl) continue;
      for (let g = n.group; g >= 0 && !hot.has(g); g = m.groups[g].parent) hot.add(g);
    }
  }

  function edgePath(a, b) {
    const x1 = a.x + a.w / 2;
    const y1 = a.y + a.h;
    const x2 = b.x + b.w / 2;
    const y2 = b.y;
    const dy = Math.max(Math.abs(y2 - y1) / 2, 20);
    return `M${x1},${y1} C${x1},${y1 + dy} ${x2},${y2 - dy} ${x2},${y2}`;
  }

  // A big view (a model expanded) draws only what is on screen, plus a margin, and
  // redraws when a pan or zoom leaves that area; zoomed out so far that labels are
  // unreadable, items are bare boxes and all edges one path.  Either way the DOM stays
  // a few hundred elements: "expand all" on a 24-layer decoder drew 2,400 labelled
  // items and 3,000 arrows in 0.3-0.5 s before.
  const CULL_ABOVE = 400; // items in the view
  const DETAIL_K = 0.45; // below this zoom, 11px labels are under 5px: no labels
  const TINY_K = 0.2; // below this, a node is under 4px: items drawn as one path per colour
  // Below this a band of the paint index is under 5px and a node under a third of a pixel
  // (a fully open RNN-T fitted: 540,000 px tall, k ~ 0.001): each band's items are drawn
  // as one rectangle of their extent, highlighted ones on top, and only the edges longer
  // than LONG bands; drawing its 19,000 boxes and 28,000 lines took 0.1-0.3 s a paint.
  const DUST_K = 0.01;
  const MARGIN = 0.25; // of the stage, drawn around it on each side
  let culling = false;
  let drawn = null; // {win: world rect drawn or null (all), coarse}
  let repaint = 0;

  // Draw the open groups.  `moveView` (fit, keep a toggled box in place, zoom to a
  // match) runs between layout and painting: one paint, at the new view.  A layout
  // that is not done in LAYOUT_SLICE ms (dagre on groups never laid out: "expand all"
  // on a big model before the background layout has run) goes on in slices between
  // events with its progress shown, and the old drawing stays until it is done; a
  // newer draw replaces a pending one (the finished groups stay cached).
  const LAYOUT_SLICE = 50;
  // slices before a provisional layout is drawn (see drawQuick); one for `many` (expand
  // all, a level: hundreds of groups opened at once), whose layout is seldom that short
  const QUICK_AFTER = 2;
  let pending = 0;
  function draw(moveView, sync = false, many = false) {
    clearTimeout(pending);
    const t0 = performance.now();
    const key = openKey(open);
    const known = views.get(key);
    const job = known ? null : jobFor(key, open);
    const next = known ? known.view : job.view;
    const tView = performance.now() - t0;
    let quickAt = null; // the transform when a provisional layout was drawn
    let breaks = 0; // slices that did not finish the layout
    const slice = () => {
      const t1 = performance.now();
      for (;;) {
        const step = known ? { done: true, value: known.layout } : advance(job);
        if (step.done) {
          status.textContent = "";
          status.hidden = true;
          view = next;
          layout = step.value;
          remember(key, view, layout);
          culling = view.items.size > CULL_ABOVE;
          // the provisional drawing's fit or zoom again, unless the user moved since
          if (moveView && (!quickAt || (t.x === quickAt.x && t.y === quickAt.y && t.k === quickAt.k))) moveView();
          const tPaint0 = performance.now();
          paint();
          const tPaint = performance.now() - tPaint0;
          // where a draw's time went (benchmarks/bench_views.py prints it with BENCH_PHASES=1)
          root.dataset.phases = `view ${tView.toFixed(0)} layout ${(tPaint0 - t0 - tView).toFixed(0)} paint ${tPaint.toFixed(0)}`;
          if (culling && !layout.bands) {
            const [v, lay] = [view, layout];
            pending = setTimeout(() => bandsLater(v, lay), 0);
          }
          root.dataset.drawMs = String(Math.round(performance.now() - t0));
          root.dataset.items = String(view.items.size);
          root.dataset.shown = root.dataset.items;
          delete root.dataset.provisional;
          return;
        }
        if (!sync && performance.now() - t1 > LAYOUT_SLICE) break;
        const [done, total] = step.value;
        status.textContent = `laying out ${done} / ${total} groups\u2026`;
      }
      status.hidden = false;
      // the provisional drawing in a task of its own: the progress shows first
      const quick = () => {
        quickAt = {};
        drawQuick(next, moveView, (at) => {
          quickAt = at;
          pending = setTimeout(slice, 0);
        }, () => job.result !== null);
      };
      // not for a layout one more slice finishes (a deep close: a dagre run and placing)
      breaks += 1;
      pending = setTimeout(quickAt || breaks < (many ? 1 : QUICK_AFTER) ? slice : quick, 0);
    };
    slice();
  }

  // A draw whose layout takes more than a slice (dagre on groups not laid out yet:
  // "expand all" on a fully open RNN-T before the background layout, 1.2-1.4 s) first
  // shows the view with a provisional layout (no dagre, tens of ms), so it can be read,
  // panned and searched at once; the real layout replaces it when done.  Its items count
  // goes to data-shown, not data-items (which says the real layout is drawn).
  function drawQuick(next, moveView, then, ready) {
    // in tasks of under 200 ms each at RNN-T size: the layout in slices, its paint
    // index, the paint
    const steps = layoutSteps(m, next, cache, true);
    let tLayout = 0;
    const layoutSlice = () => {
      const t0 = performance.now();
      let step = steps.next();
      while (!step.done && performance.now() - t0 < LAYOUT_SLICE) step = steps.next();
      tLayout += performance.now() - t0;
      if (step.done) index(step.value);
      else pending = setTimeout(layoutSlice, 0);
    };
    const index = (lay) => (pending = setTimeout(() => {
      const t1 = performance.now();
      if (next.items.size > CULL_ABOVE) {
        lay.bandJob = bandSteps(next, lay);
        while (!lay.bands) lay.bandJob.next();
      }
      const tBands = performance.now() - t1;
      pending = setTimeout(() => {
        if (ready()) return then(null); // the real layout came first (the background's)
        const t2 = performance.now();
        view = next;
        layout = lay;
        culling = view.items.size > CULL_ABOVE;
        if (moveView) moveView();
        paint();
        root.dataset.quickPhases = `layout ${tLayout.toFixed(0)} index ${tBands.toFixed(0)} paint ${(performance.now() - t2).toFixed(0)}`;
        root.dataset.provisional = "1";
        root.dataset.shown = String(view.items.size);
        then({ ...t });
      }, 0);
    }, 0));
    layoutSlice();
  }

  // A layout under way, per open set: "expand all" clicked while the background layout
  // of the same state runs continues that layout instead of starting its own (both
  // built the 19,000-item view, lifted 28,000 edges and placed every item of a fully
  // open RNN-T, interleaved: 1.2-1.4 s until drawn); a draw replaced by a newer one
  // leaves its progress here for the next draw of that state.
  const JOBS_KEPT = 4;
  let jobs = new Map(); // open-set key -> {view, steps, result}
  function jobFor(key, groups) {
    let job = jobs.get(key);
    if (!job) {
      const v = visibleView(m, groups);
      job = { view: v, steps: layoutSteps(m, v, cache), result: null };
      jobs.set(key, job);
      if (jobs.size > JOBS_KEPT) jobs.delete(jobs.keys().next().value);
    }
    return job;
  }

  // One step of a shared layout; its result stays on the job (a generator returns its
  // value once, to whichever caller finished it).
  function advance(job) {
    if (job.result) return { done: true, value: job.result };
    const step = job.steps.next();
    if (step.done) {
      job.result = step.value;
      for (const [k, j] of jobs) if (j === job) jobs.delete(k);
    }
    return step;
  }

  // The open set as a string, the key of `views`.
  function openKey(groups) {
    return [...groups].sort((a, b) => a - b).join(",");
  }

  // Keep a drawn state's view and layout: going back to it ("collapse" after "expand
  // all", "expand all" again, "b" after a jump) then only paints.  Building the view and
  // placing a fully open RNN-T's 19,000 items took most of its "expand all" even with
  // every group's layout cached.  A handful of states: a full view is a few MB.
  const VIEWS_KEPT = 4;
  function remember(key, v, lay) {
    views.delete(key);
    views.set(key, { view: v, layout: lay });
    if (views.size > VIEWS_KEPT) views.delete(views.keys().next().value);
  }

  // The world rectangle the stage shows.
  function shown() {
    const W = stage.clientWidth || 800;
    const H = stage.clientHeight || 500;
    return { x: -t.x / t.k, y: -t.y / t.k, w: W / t.k, h: H / t.k };
  }

  function stale() {
    if (!culling || !drawn) return false;
    if (drawn.coarse !== t.k < DETAIL_K || drawn.tiny !== t.k < TINY_K || drawn.dust !== t.k < DUST_K) return true;
    const s = shown();
    const d = drawn.win;
    return s.x < d.x || s.y < d.y || s.x + s.w > d.x + d.w || s.y + s.h > d.y + d.h;
  }

  // What may meet the world rectangle `win` (everything when null): the layout's items,
  // edges and group boxes in bands of BAND px of height, built once per layout, so a
  // paint of a fully open RNN-T (19,000 items, 28,000 edges, 100,000s of px tall) looks
  // at the few bands on screen, not at every item and edge.
  const BAND = 512;
  const LONG = 64; // bands: a longer edge (a weight used far below) is always looked at
  function bandIndex(view, layout) {
    if (!layout.bandJob) layout.bandJob = bandSteps(view, layout);
    while (!layout.bands) layout.bandJob.next();
    return layout.bands;
  }

  // bandIndex in slices of about BAND_SLICE ms between events: built at once after a
  // toggle in a fully open RNN-T it was a 60-100 ms task right behind the toggle's paint,
  // delaying the next click by as much. The first paint of a layout does without it.
  const BAND_SLICE = 8;
  function bandsLater(view, layout) {
    if (layout.bands) return;
    if (!layout.bandJob) layout.bandJob = bandSteps(view, layout);
    const t0 = performance.now();
    while (!layout.bands && performance.now() - t0 < BAND_SLICE) layout.bandJob.next();
    if (!layout.bands) pending = setTimeout(() => bandsLater(view, layout), 0);
  }

  function* bandSteps(view, layout) {
    const bands = [];
    const add = (y0, y1, kind, entry) => {
      for (let b = Math.max(0, Math.floor(y0 / BAND)), e = Math.floor(y1 / BAND); b <= e; b++) {
        if (!bands[b]) bands[b] = { items: [], edges: [], boxes: [], x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity };
        bands[b][kind].push(entry);
      }
    };
    const hl = []; // highlighted items: drawn on their own at any zoom

    const byDepth = [...layout.boxes.entries()].sort((a, b) => m.groups[a[0]].depth - m.groups[b[0]].depth);
    byDepth.forEach((entry, i) => add(entry[1].y, entry[1].y + entry[1].h, "boxes", [i, entry]));
    let i = 0;
    for (const [key, info] of view.items) {
      const p = layout.pos.get(key);
      add(p.y, p.y + p.h, "items", [i++, [key, info, p]]);
      const band = bands[Math.floor(p.y / BAND)]; // the band of its top: its extent
      band.x0 = Math.min(band.x0, p.x);
      band.x1 = Math.max(band.x1, p.x + p.w);
      band.y0 = Math.min(band.y0, p.y);
      band.y1 = Math.max(band.y1, p.y + p.h);
      if (info.group ? hot.has(info.index) : m.nodes[info.index].hl) hl.push([key, info, p]);
      if (i % 2000 === 0) yield;
    }
    const long = [];
    i = 0;
    for (const [a, b, n] of view.edges.values()) {
      const pa = layout.pos.get(a);
      const pb = layout.pos.get(b);
      if (!pa || !pb) continue;
      const entry = [i++, [n, pa, pb]];
      const y0 = Math.min(pa.y, pb.y);
      const y1 = Math.max(pa.y + pa.h, pb.y + pb.h);
      if ((y1 - y0) / BAND > LONG) long.push(entry);
      else add(y0, y1, "edges", entry);
      if (i % 2000 === 0) yield;
    }
    layout.bands = { bands, long: long.map((x) => x[1]), hl };
  }

  function meetsWin(win, b) {
    return b.x < win.x + win.w && b.x + b.w > win.x && b.y < win.y + win.h && b.y + b.h > win.y;
  }

  function nearWindow(win, dust) {
    if (!win) {
      const near = { boxes: [], items: [], edges: [] };
      near.boxes = [...layout.boxes.entries()].sort((a, b) => m.groups[a[0]].depth - m.groups[b[0]].depth);
      for (const [key, info] of view.items) near.items.push([key, info, layout.pos.get(key)]);
      for (const [a, b, n] of view.edges.values()) {
        const pa = layout.pos.get(a);
        const pb = layout.pos.get(b);
        if (pa && pb) near.edges.push([n, pa, pb]);
      }
      return near;
    }
    if (!layout.bands && !dust) {
      // A layout's first paint (a toggle in a big open view) looks at everything once,
      // cheaper than building the index, which follows between events (see draw).
      // Filtered as it goes: the whole lists of a fully open RNN-T (19,000 items, 28,000
      // edges) were most of such a paint.
      const near = { boxes: [], items: [], edges: [] };
      near.boxes = [...layout.boxes.entries()].filter(([, b]) => meetsWin(win, b));
      near.boxes.sort((a, b) => m.groups[a[0]].depth - m.groups[b[0]].depth);
      for (const [key, info] of view.items) {
        const p = layout.pos.get(key);
        if (meetsWin(win, p)) near.items.push([key, info, p]);
      }
      const x1 = win.x + win.w;
      const y1 = win.y + win.h;
      for (const [a, b, n] of view.edges.values()) {
        const pa = layout.pos.get(a);
        const pb = layout.pos.get(b);
        // meetsWin(win, spanOf(pa, pb)) without the span object: 28,000 of them per paint
        if (!pa || !pb) continue;
        if (Math.min(pa.x, pb.x) < x1 && Math.max(pa.x + pa.w, pb.x + pb.w) > win.x &&
            Math.min(pa.y, pb.y) < y1 && Math.max(pa.y + pa.h, pb.y + pb.h) > win.y) near.edges.push([n, pa, pb]);
      }
      return near;
    }
    const { bands, long, hl } = bandIndex(view, layout);
    const near = { boxes: [], items: dust ? hl : [], edges: [...long], extents: [] };
    const seen = { boxes: new Set(), items: new Set(), edges: new Set() };
    const b1 = Math.min(bands.length - 1, Math.floor((win.y + win.h) / BAND));
    for (let b = Math.max(0, Math.floor(win.y / BAND)); b <= b1; b++) {
      if (!bands[b]) continue;
      if (dust && bands[b].x1 > bands[b].x0) near.extents.push(bands[b]);
      for (const kind of dust ? ["boxes"] : ["boxes", "items", "edges"]) {
        for (const [j, x] of bands[b][kind]) {
          if (seen[kind].has(j)) continue;
          seen[kind].add(j);
          near[kind].push(kind === "boxes" ? [j, x] : x);
        }
      }
    }
    near.boxes = near.boxes.sort((x, y) => x[0] - y[0]).map((x) => x[1]); // outer boxes first
    return near;
  }

  function paint() {
    cancelAnimationFrame(repaint);
    repaint = 0;
    let win = null;
    if (culling) {
      const s = shown();
      win = { x: s.x - s.w * MARGIN, y: s.y - s.h * MARGIN, w: s.w * (1 + 2 * MARGIN), h: s.h * (1 + 2 * MARGIN) };
    }
    const coarse = culling && t.k < DETAIL_K;
    const tiny = culling && t.k < TINY_K;
    const dust = culling && t.k < DUST_K;
    drawn = { win, coarse, tiny, dust };
    const meets = (b) => !win || (b.x < win.x + win.w && b.x + b.w > win.x && b.y < win.y + win.h && b.y + b.h > win.y);
    const near = nearWindow(win, dust);
    viewport.replaceChildren();
    itemEls.clear();
    const gBoxes = svgEl("g");
    const gEdges = svgEl("g", { class: "relay-ex-edges" });
    const gItems = svgEl("g");
    for (const [c, box] of near.boxes) {
      if (!meets(box)) continue;
      const g = m.groups[c];
      const grp = svgEl("g", { class: `relay-ex-cluster relay-ex-k-${g.kind}`, "data-key": g.id });
      grp.append(svgEl("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: 6 }));
      if (!coarse) {
        const label = svgEl("text", { x: box.x + 8, y: box.y + 13, class: "relay-ex-cluster-label" });
        label.textContent = "\u25be " + g.label;
        grp.append(label);
      }
      gBoxes.append(grp);
      itemEls.set(g.id, grp);
    }
    const batches = new Map(); // tiny: path class and fill -> rectangles
    if (dust) {
      const extents = near.extents.map((b) => `M${b.x0},${b.y0}H${b.x1}V${b.y1}H${b.x0}z`);
      if (extents.length) batches.set("relay-ex-tiny-node\u0000#ccc", extents);
    }
    for (const [key, info, p] of near.items) {
      if (!meets(p)) continue;
      if (tiny) {
        const hl = info.group ? hot.has(info.index) : m.nodes[info.index].hl;
        const kind = info.group ? "relay-ex-tiny-group" : "relay-ex-tiny-node";
        const fill = info.group ? "" : m.nodes[info.index].fill || "#fff";
        const batch = `${kind}${hl ? " relay-ex-tiny-hl" : ""}\u0000${fill}`;
        if (!batches.has(batch)) batches.set(batch, []);
        batches.get(batch).push(`M${p.x},${p.y}h${p.w}v${p.h}h${-p.w}z`);
        continue;
      }
      const cls = info.group ? `relay-ex-group relay-ex-k-${m.groups[info.index].kind}` : `relay-ex-node relay-ex-kind-${m.nodes[info.index].kind}`;
      const grp = svgEl("g", { class: cls, "data-key": key, transform: `translate(${p.x},${p.y})` });
      const rect = svgEl("rect", { width: p.w, height: p.h, rx: info.group ? 4 : 9 });
      if (!info.group) rect.setAttribute("fill", m.nodes[info.index].fill || "#fff");
      if ((info.group && hot.has(info.index)) || (!info.group && m.nodes[info.index].hl)) grp.classList.add("relay-ex-hl");
      grp.append(rect);
      if (!coarse) {
        if (info.group) grp.append(svgEl("rect", { class: "relay-ex-stack", x: 3, y: 3, width: p.w, height: p.h, rx: 4 }));
        itemBox(m, info).lines.forEach((line, i) => {
          const text = svgEl("text", { x: 8, y: 14 + i * 13, class: i ? "relay-ex-sub" : "relay-ex-main" });
          text.textContent = (info.group && i === 0 ? "\u25b8 " : "") + line;
          grp.append(text);
        });
      }
      gItems.append(grp);
      itemEls.set(key, grp);
    }
    const lines = [];
    for (const [n, pa, pb] of near.edges) {
      if (win) {
        const x = Math.min(pa.x, pb.x);
        const y = Math.min(pa.y, pb.y);
        if (!meets({ x, y, w: Math.max(pa.x + pa.w, pb.x + pb.w) - x, h: Math.max(pa.y + pa.h, pb.y + pb.h) - y })) continue;
      }
      if (coarse) {
        lines.push(`M${pa.x + pa.w / 2},${pa.y + pa.h}L${pb.x + pb.w / 2},${pb.y}`);
        continue;
      }
      const path = svgEl("path", { d: edgePath(pa, pb), "marker-end": "url(#relay-ex-arrow)" });
      if (n > 1) path.setAttribute("stroke-width", String(Math.min(1 + Math.log2(n), 4)));
      gEdges.append(path);
    }
    if (lines.length) gEdges.append(svgEl("path", { d: lines.join("") }));
    for (const [batch, rects] of batches) {
      const [cls, fill] = batch.split("\u0000");
      const path = svgEl("path", { class: cls, d: rects.join("") });
      if (fill) path.setAttribute("fill", fill);
      gItems.append(path);
    }
    viewport.append(gBoxes, gEdges, gItems);
    markSelected();
    markMatches();
  }

  // A big model lays out "expand all" in the background after its first view, in
  // slices of ~20 ms between the user's events: the first "expand all" or deep toggle
  // then finds its layouts cached (dagre for a 24-layer decoder: 0.1-0.3 s).
  // It waits while the explorer is off screen and for QUIET_MS after any explorer in the
  // page loaded: each slice delays the other explorers' loading steps.  In JupyterLab a
  // profile showed an earlier stepper's two RNN-T panes running dagre for seconds after
  // they were drawn, while the next stepper's panes loaded; and the pass stepper's
  // second pane arrives while its first would be warming.
  const QUIET_MS = 300;
  const explorers = (window.__relayExplorers ??= { loadedAt: -Infinity });
  let onScreen = true;
  const sight = new IntersectionObserver((entries) => {
    onScreen = entries[entries.length - 1].isIntersecting;
  });
  sight.observe(root);
  const mayWarm = () => onScreen && performance.now() - explorers.loadedAt > QUIET_MS;
  let warming = 0;
  function warm() {
    clearTimeout(warming);
    root.dataset.warmed = m.nodes.length <= CULL_ABOVE ? "1" : "";
    if (root.dataset.warmed) return;
    let job = null;
    let all = null;
    const slice = () => {
      if (!mayWarm()) return (warming = setTimeout(slice, 100));
      const t0 = performance.now();
      // the view of everything open (tens of ms for 24,000 nodes) in a slice, not in load()
      if (!all) {
        const everything = new Set(m.groups.map((g) => g.i));
        const key = openKey(everything);
        const known = views.get(key);
        job = known ? { view: known.view, result: known.layout } : jobFor(key, everything);
        all = { key, view: job.view };
      }
      while (performance.now() - t0 < 20) {
        const step = advance(job);
        if (step.done) {
          // "expand all" then finds its whole state ready, its paint index too (in a
          // slice of its own): a paint, no layout
          if (!views.has(all.key)) remember(all.key, all.view, step.value);
          const lay = step.value;
          const bands = () => {
            if (!mayWarm()) return (warming = setTimeout(bands, 100));
            if (!lay.bandJob) lay.bandJob = bandSteps(all.view, lay);
            const t1 = performance.now();
            while (!lay.bands && performance.now() - t1 < 20) lay.bandJob.next();
            if (lay.bands) root.dataset.warmed = "1";
            else warming = setTimeout(bands, 0);
          };
          warming = setTimeout(bands, 0);
          return;
        }
      }
      warming = setTimeout(slice, 0);
    };
    warming = setTimeout(slice, 50);
  }

  function markSelected() {
    const sel = model.get("selected");
    for (const g of viewport.querySelectorAll(".relay-ex-selected")) g.classList.remove("relay-ex-selected");
    const g = sel && itemEls.get(sel);
    if (g) g.classList.add("relay-ex-selected");
    markLines(sel, "relay-ex-line-selected", true);
  }

  function markMatches() {
    const keys = new Set(matches.map((x) => x.key));
    for (const [key, g] of itemEls) g.classList.toggle("relay-ex-match", keys.has(key));
    const cur = matches[current];
    for (const g of viewport.querySelectorAll(".relay-ex-current")) g.classList.remove("relay-ex-current");
    if (cur && itemEls.get(cur.key)) itemEls.get(cur.key).classList.add("relay-ex-current");
  }

  // The whole graph in view; with `width`, fit its width only (a tall model opens
  // readable at its top, not shrunk to a thin strip).
  function fit(width) {
    if (!layout) return;
    const W = stage.clientWidth || 800;
    const H = stage.clientHeight || 500;
    const kw = W / (layout.width + 20);
    const k = Math.min(width === true ? Math.max(kw, 0.05) : Math.min(kw, H / (layout.height + 20)), 1.2);
    t = { k, x: (W - layout.width * k) / 2, y: 10 };
    applyTransform();
  }

  function boxOf(key) {
    if (layout.pos.has(key)) return layout.pos.get(key);
    const g = m.groupIndex.get(key);
    return g !== undefined ? layout.boxes.get(g) : null;
  }

  function zoomTo(key) {
    const b = boxOf(key);
    if (!b) return;
    const W = stage.clientWidth || 800;
    const H = stage.clientHeight || 500;
    moved = true;
    const k = Math.max(Math.min(t.k, 2), 0.9);
    t = { k, x: W / 2 - (b.x + b.w / 2) * k, y: H / 2 - (b.y + b.h / 2) * k };
    applyTransform();
  }

  function zoomBy(f, cx, cy) {
    const W = stage.clientWidth || 800;
    const H = stage.clientHeight || 500;
    cx = cx === undefined ? W / 2 : cx;
    cy = cy === undefined ? H / 2 : cy;
    moved = true;
    const k = Math.min(Math.max(t.k * f, 0.02), 8);
    t = { k, x: cx - ((cx - t.x) * k) / t.k, y: cy - ((cy - t.y) * k) / t.k };
    applyTransform();
  }


  // Open or close a group, keeping its box where it was on screen.
  function toggle(g) {
    const key = m.groups[g].id;
    const before = boxOf(key);
    if (open.has(g)) open.delete(g);
    else open.add(g);
    moved = true;
    draw(() => {
      const after = boxOf(key);
      if (before && after) {
        t.x += (before.x - after.x) * t.k;
        t.y += (before.y - after.y) * t.k;
        applyTransform();
      }
    });
    saveOpen();
  }

  function jump(i) {
    if (!matches.length) return;
    current = (i + matches.length) % matches.length;
    const hit = matches[current];
    history.push({ t: { ...t }, open: new Set(open) });
    const next = reveal(m, open, hit.key);
    const added = [...next].filter((g) => !open.has(g));
    if (added.length) {
      open = next;
      draw(() => zoomTo(hit.key));
      saveOpen();
    } else {
      markMatches();
      zoomTo(hit.key);
    }
    count.textContent = `${current + 1} / ${matches.length}`;
    for (const r of results.querySelectorAll(".relay-ex-result-current")) r.classList.remove("relay-ex-result-current");
    const row = results.children[current];
    if (row) {
      row.classList.add("relay-ex-result-current");
      row.scrollIntoView({ block: "nearest" });
    }
    if (!hit.group) {
      model.set("selected", hit.key);
      model.save_changes();
    }
  }

  function back() {
    const prev = history.pop();
    if (!prev) return;
    open = prev.open;
    draw(() => {
      t = prev.t;
      applyTransform();
    });
    saveOpen();
  }

  let lastQuery = null;
  let searchTimer = null;
  function runSearch() {
    clearTimeout(searchTimer);
    const q = search.value;
    if (q === lastQuery) return;
    lastQuery = q;
    matches = searchModel(m, q);
    current = -1;
    results.replaceChildren();
    for (const [i, hit] of matches.slice(0, 300).entries()) {
      const row = el("div", "relay-ex-result");
      const where = hit.group ? m.groups[hit.index].parent : m.nodes[hit.index].group;
      row.append(el("span", "relay-ex-result-text", hit.text), el("span", "relay-ex-result-path", where >= 0 ? m.groups[where].id : "/"));
      row.dataset.key = hit.key;
      row.addEventListener("click", () => jump(i));
      results.append(row);
    }
    count.textContent = q.trim() ? `${matches.length} match${matches.length === 1 ? "" : "es"}` : "";
    markMatches();
    if (model.get("query") !== q) {
      model.set("query", q);
      model.save_changes();
    }
  }

  function onKey(event) {
    if (event.key === "Enter") {
      event.preventDefault();
      if (event.target === search) runSearch();
      jump(event.shiftKey ? current - 1 : current + 1);
    } else if (event.target !== search && (event.key === "n" || event.key === "N")) {
      jump(event.key === "N" ? current - 1 : current + 1);
    } else if (event.target !== search && event.key === "b") {
      back();
    } else if (event.target !== search && event.key === "f") {
      fit();
    } else {
      return;
    }
    event.stopPropagation();
  }

  // -- events ---------------------------------------------------------------------------
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 120);
  });
  search.addEventListener("keydown", onKey);
  stage.addEventListener("keydown", onKey);
  buttons.next.addEventListener("click", () => jump(current + 1));
  buttons.prev.addEventListener("click", () => jump(current - 1));
  buttons.fit.addEventListener("click", () => fit());
  buttons.zin.addEventListener("click", () => zoomBy(1.25));
  buttons.zout.addEventListener("click", () => zoomBy(0.8));
  buttons.all.addEventListener("click", () => {
    open = new Set(m.groups.map((g) => g.i));
    draw(() => fit(), false, true);
    saveOpen();
  });
  buttons.top.addEventListener("click", () => {
    open = new Set();
    for (const id of data.expanded || []) if (m.groupIndex.has(id)) open.add(m.groupIndex.get(id));
    draw(() => fit());
    saveOpen();
  });
  level.addEventListener("change", () => {
    const n = Number(level.value);
    if (Number.isNaN(n)) return;
    open = new Set(m.groups.filter((g) => g.depth < n).map((g) => g.i));
    draw(() => fit(), false, true);
    saveOpen();
    level.value = "";
  });

  stage.addEventListener("wheel", (event) => {
    event.preventDefault();
    const r = stage.getBoundingClientRect();
    zoomBy(Math.exp(-event.deltaY * 0.0015), event.clientX - r.left, event.clientY - r.top);
  }, { passive: false });
  let drag = null;
  stage.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, y: event.clientY, tx: t.x, ty: t.y, moved: false };
  });
  stage.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) stage.setPointerCapture(event.pointerId);
    drag.moved = true;
    moved = true;
    t.x = drag.tx + dx;
    t.y = drag.ty + dy;
    applyTransform();
  });
  const endDrag = (event) => {
    if (drag && drag.moved && stage.hasPointerCapture(event.pointerId)) stage.releasePointerCapture(event.pointerId);
    setTimeout(() => (drag = null), 0);
  };
  stage.addEventListener("pointerup", endDrag);
  stage.addEventListener("pointercancel", endDrag);

  function itemAt(target) {
    const g = target.closest && target.closest("[data-key]");
    return g && viewport.contains(g) ? g.dataset.key : null;
  }
  viewport.addEventListener("click", (event) => {
    if (drag && drag.moved) return;
    const key = itemAt(event.target);
    if (!key) return;
    stage.focus({ preventScroll: true });
    if (m.groupIndex.has(key)) {
      const g = m.groupIndex.get(key);
      // A closed group opens anywhere; an open group closes from its title only (its
      // background is where one pans and clicks between its nodes).
      if (!open.has(g) || event.target.classList.contains("relay-ex-cluster-label")) toggle(g);
    } else {
      clicked = true; // the node is in view: selecting it must not move the view
      model.set("selected", model.get("selected") === key ? "" : key);
      model.save_changes();
      clicked = false;
    }
  });
  viewport.addEventListener("dblclick", (event) => {
    const key = itemAt(event.target);
    if (key) zoomTo(key);
  });
  viewport.addEventListener("mouseover", (event) => {
    const key = itemAt(event.target);
    if (!key) return;
    showInfo(key);
    markLines(key, "relay-ex-line-hover", false);
  });
  viewport.addEventListener("mouseout", () => {
    showInfo(model.get("selected") || null);
    markLines(null, "relay-ex-line-hover", false);
  });

  // A compressed payload is read asynchronously: the widget stays inert until it is, and
  // only the newest of overlapping loads is shown.
  let loads = 0;
  function load() {
    explorers.loadedAt = performance.now();
    const ticket = ++loads;
    const got = readPayload(model);
    if (!(got instanceof Promise)) return show(got);
    root.inert = true;
    status.textContent = "reading the graph\u2026";
    status.hidden = false;
    got.then(
      (d) => ticket === loads && show(d),
      (err) => {
        if (ticket !== loads) return;
        status.textContent = `cannot read the graph data: ${err}`;
        root.inert = false;
      },
    );
  }

  function show(d) {
    data = d;
    root.inert = false;
    status.hidden = true;
    m = exploreModel({ groups: data.groups || [], nodes: data.nodes || [], edges: data.edges || [], strings: data.strings || [] });
    for (const n of m.nodes) n.hl = (data.nodes[n.i] || [])[11] === 1;
    computeHot();
    cache = new Map();
    views = new Map();
    jobs = new Map();
    lastQuery = null;
    setOpenFromModel();
    const depth = m.groups.reduce((d, g) => Math.max(d, g.depth + 1), 0);
    level.replaceChildren(el("option", "", "level\u2026"));
    level.firstChild.value = "";
    for (let d = 1; d <= depth; d++) {
      const o = el("option", "", `level ${d}`);
      o.value = String(d);
      level.append(o);
    }
    title.textContent = model.get("title") || "";
    title.style.display = title.textContent ? "" : "none";
    drawText();
    draw(null, true); // the first view (tens of items) at once: its size sets the stage's
    // A small program gets a small stage (the stepper shows two side by side).
    const tall = layout.height * 1.2 + 40;
    const h = `${Math.round(Math.max(180, Math.min(560, tall)))}px`;
    stage.style.height = h;
    side.style.height = tall < 400 ? "" : h;
    moved = false;
    showInfo(null);
    requestAnimationFrame(() => fit(true));
    explorers.loadedAt = performance.now();
    warm();
    if (model.get("query")) {
      search.value = model.get("query");
      runSearch();
    }
  }

  let clicked = false;
  const onExpanded = () => {
    const ids = new Set(model.get("expanded") || []);
    const mine = new Set([...open].map((g) => m.groups[g].id));
    if (ids.size === mine.size && [...ids].every((id) => mine.has(id))) return;
    setOpenFromModel();
    draw();
  };
  const onSelected = () => {
    markSelected();
    const sel = model.get("selected");
    if (sel && !layout.pos.has(sel) && m.nodeIndex.has(sel)) {
      open = reveal(m, open, sel);
      const inView = clicked;
      draw(() => inView || zoomTo(sel));
      saveOpen();
    } else if (sel && layout.pos.has(sel) && !clicked) {
      zoomTo(sel);
    }
    showInfo(sel || null);
  };
  const onQuery = () => {
    if (search.value !== model.get("query")) {
      search.value = model.get("query");
      runSearch();
    }
  };
  model.on("change:payload", load);
  model.on("change:data", load);
  model.on("change:expanded", onExpanded);
  model.on("change:selected", onSelected);
  model.on("change:query", onQuery);
  load();

  return () => {
    resize.disconnect();
    sight.disconnect();
    cancelAnimationFrame(repaint);
    clearTimeout(warming);
    model.off("change:payload", load);
    model.off("change:data", load);
    model.off("change:expanded", onExpanded);
    model.off("change:selected", onSelected);
    model.off("change:query", onQuery);
  };
}

export default { render };
