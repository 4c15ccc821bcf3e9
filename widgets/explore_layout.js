// The graph explorer's pure part (no DOM): the visible graph for a set of open groups,
// search, and a layered layout per open group with dagre (widgets/vendor/dagre.min.js,
// concatenated before this file). relay_nb/viz/hierarchy.py computes the groups; this
// file mirrors its Hierarchy.view() so a toggle needs no round trip to the kernel (tests
// compare the two through Node.js). graph_explorer.js draws the result.
//
// Data (relay_nb/viz/explore.py explore_data): groups [[id, label, kind, parent, size, ops]]
// parents first; nodes [[id, label, kind, group, type, attrs, line, end_line, fill, op,
// uses]] with label, kind, type, attrs and fill indices into strings; edges [tail, head,
// tail, head, ...] as node indices.

function exploreModel(data) {
  const groups = data.groups.map(([id, label, kind, parent, size, ops], i) => ({
    i, id, label, kind, parent, size, ops, kids: [], nodes: [], depth: 0,
  }));
  for (const g of groups) {
    if (g.parent >= 0) {
      groups[g.parent].kids.push(g.i);
      g.depth = groups[g.parent].depth + 1;
    }
  }
  const S = data.strings || [];
  const nodes = data.nodes.map(([id, label, kind, group, type, attrs, line, end, fill, op, uses], i) => ({
    i, id, label: S[label], kind: S[kind], group, type: S[type], attrs: S[attrs], line, end, fill: S[fill], op, uses,
  }));
  for (const n of nodes) if (n.group >= 0) groups[n.group].nodes.push(n.i);
  const groupIndex = new Map(groups.map((g) => [g.id, g.i]));
  const nodeIndex = new Map(nodes.map((n) => [n.id, n.i]));
  // each item's view entry, made once (read only): a view of a fully open RNN-T made
  // 19,000 of them per toggle, and collecting them was much of a toggle's garbage
  const groupItems = groups.map((g) => Object.freeze({ group: true, index: g.i, parent: g.parent }));
  const nodeItems = nodes.map((n) => Object.freeze({ group: false, index: n.i, parent: n.group }));
  return { groups, nodes, edges: data.edges || [], groupIndex, nodeIndex, groupItems, nodeItems };
}

// Item keys: a node's id ("n12") or a group's path ("/@main/layer1"; paths start with "/").
function itemKey(m, isGroup, i) {
  return isGroup ? m.groups[i].id : m.nodes[i].id;
}

// The groups holding group g, outermost first, g included.
function ancestorsOf(m, g) {
  const out = [];
  for (let k = g; k >= 0; k = m.groups[k].parent) out.push(k);
  return out.reverse();
}

// Visible items for the open groups (a Set of group indices): mirrors Hierarchy.view().
// Returns {items: Map key -> {group: bool, index, parent: open group index or -1},
//          clusters: Map group index -> parent cluster (-1 top), edges: Map number -> [t, h, n, the open groups holding t and h]}.
function visibleView(m, open) {
  const G = m.groups.length;
  const rep = new Int32Array(G); // -1: the group is open and drawn; else the collapsed group showing it
  const items = new Map();
  const clusters = new Map();
  for (let g = 0; g < G; g++) {
    const p = m.groups[g].parent;
    if (p >= 0 && rep[p] !== -1) {
      rep[g] = rep[p];
      continue;
    }
    if (open.has(g)) {
      rep[g] = -1;
      clusters.set(g, p);
    } else {
      rep[g] = g;
      items.set(m.groups[g].id, m.groupItems[g]);
    }
  }
  // Each node's drawn item as an integer (node i as i, group g as -1 - g) and each edge
  // keyed by a number: string keys made a fully open RNN-T's view (28,000 edges) spend
  // most of its time building and hashing strings.
  const nodeRep = new Int32Array(m.nodes.length);
  for (const n of m.nodes) {
    if (n.group < 0 || rep[n.group] === -1) {
      nodeRep[n.i] = n.i;
      items.set(n.id, m.nodeItems[n.i]);
    } else {
      nodeRep[n.i] = -1 - rep[n.group];
    }
  }
  const keyOf = (r) => (r >= 0 ? m.nodes[r].id : m.groups[-1 - r].id);
  // the open group drawing an item (-1: the top), kept with each edge for layoutSteps
  const holder = (r) => (r >= 0 ? m.nodes[r].group : m.groups[-1 - r].parent);
  const W = m.nodes.length + G + 1;
  const edges = new Map();
  const e = m.edges;
  for (let k = 0; k < e.length; k += 2) {
    const t = nodeRep[e[k]];
    const h = nodeRep[e[k + 1]];
    if (t === h) continue;
    const key = (t + G) * W + (h + G);
    const old = edges.get(key);
    if (old) old[2] += 1;
    else edges.set(key, [keyOf(t), keyOf(h), 1, holder(t), holder(h)]);
  }
  return { items, clusters, edges };
}

// Search: nodes whose op / name, type or attributes contain the query, and groups whose
// label does (case-insensitive), in program order. Mirrors Hierarchy.search().
function searchModel(m, query, limit = 500) {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const out = [];
  for (const g of m.groups) {
    if (g.label.toLowerCase().includes(q)) out.push({ key: g.id, group: true, index: g.i, field: "group", text: g.label });
  }
  for (const n of m.nodes) {
    if (out.length >= limit) break;
    const head = n.label.split("\n")[0];
    const fields = [[n.op ? "op" : "name", head], ["type", n.type], ["attrs", n.attrs]];
    for (const [field, text] of fields) {
      if (text && text.toLowerCase().includes(q)) {
        out.push({ key: n.id, group: false, index: n.i, field, text });
        break;
      }
    }
  }
  return out;
}

// The open groups after revealing item key (its enclosing groups open).
function reveal(m, open, key) {
  const next = new Set(open);
  let g = -1;
  if (m.nodeIndex.has(key)) g = m.nodes[m.nodeIndex.get(key)].group;
  else if (m.groupIndex.has(key)) g = m.groups[m.groupIndex.get(key)].parent;
  for (const a of g >= 0 ? ancestorsOf(m, g) : []) next.add(a);
  return next;
}

const CHAR_W = 6.6; // px per character of the 11px monospace labels
const PAD = 10;
const HEADER = 18;

function clipText(text, n) {
  return text.length > n ? text.slice(0, n - 1) + "\u2026" : text;
}

// What a visible item shows: its lines and box size.
function itemBox(m, info) {
  if (info.group) {
    const g = m.groups[info.index];
    const lines = [clipText(g.label, 36), g.ops ? `${g.ops} op${g.ops === 1 ? "" : "s"}` : `${g.size} nodes`];
    return { lines, w: Math.max(...lines.map((s) => s.length)) * CHAR_W + 26, h: 36 };
  }
  const n = m.nodes[info.index];
  const lines = [clipText(n.label.split("\n")[0], 34)];
  if (n.op && n.type) lines.push(clipText(n.type, 34));
  return { lines, w: Math.max(...lines.map((s) => s.length)) * CHAR_W + 16, h: lines.length > 1 ? 32 : 20 };
}

// Lay out a view: each open group (cluster) is laid out on its own with dagre, its open
// subgroups as boxes of their own layout's size. `cache` keeps every layout computed,
// keyed by the cluster and which of its subgroups are open, so a toggle lays out only
// the toggled group's ancestors and going back to an earlier state lays out nothing.
// Returns {pos: Map key -> {x, y, w, h} absolute top-left, boxes: Map cluster ->
// {x, y, w, h}, width, height}.
function layoutView(m, view, cache = new Map()) {
  const steps = layoutSteps(m, view, cache);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

// Each open group's children and the edges lifted to it, and the groups deepest first:
// kept on the view, since a provisional layout and the real one of the same view
// (see layoutSteps) need the same (lifting a fully open RNN-T's edges: 25-40 ms).
function viewTree(m, view) {
  if (view.tree) return view.tree;
  const children = new Map([[-1, []]]);
  for (const c of view.clusters.keys()) children.set(c, []);
  for (const [key, info] of view.items) children.get(info.parent).push(key);
  for (const [c, parent] of view.clusters) children.get(parent).push(c);
  // Lift each edge to the cluster holding both ends: an edge between the children
  // (items or open subgroups) of that cluster.  Both ends climb, the deeper first, with
  // no arrays per edge (a fully open RNN-T has 30,000 edges).
  // The holders come with the edges: looking both ends up in view.items was a third of
  // a toggle's layout in a fully open RNN-T.
  const depthOf = (c) => (c < 0 ? -1 : m.groups[c].depth);
  const lifted = new Map();
  for (const [t, h, , holdT, holdH] of view.edges.values()) {
    let a = t;
    let b = h;
    let ct = holdT;
    let ch = holdH;
    while (ct !== ch) {
      if (depthOf(ct) >= depthOf(ch)) {
        a = ct;
        ct = view.clusters.get(ct);
      } else {
        b = ch;
        ch = view.clusters.get(ch);
      }
    }
    const common = ct;
    if (a === b) continue;
    const list = lifted.get(common);
    if (list) list.push([a, b]);
    else lifted.set(common, [[a, b]]);
  }
  const order = [...view.clusters.keys()].sort((x, y) => m.groups[y].depth - m.groups[x].depth);
  order.push(-1);
  view.tree = { children, lifted, order };
  return view.tree;
}

// layoutView as a generator that yields [done, total] open groups after each dagre run
// (the only slow part, up to tens of ms for a transformer's attention block): the widget
// lays out a big model in slices between events with it, so the page keeps responding.
function* layoutSteps(m, view, cache, quick = false) {
  // `quick`: a provisional layout at once, no dagre (layeredLayout instead), for a view
  // whose dagre runs take long (a fully open RNN-T: 37 groups of 20-40 ms); it reads the
  // cache but leaves it to the real layout.
  const local = quick ? new Map() : cache;
  const cached = (k) => local.get(k) || (quick ? cache.get(k) : undefined);
  const { children, lifted, order } = viewTree(m, view);
  yield [0, order.length]; // lifting a big view's edges is a slice of its own
  const sizes = new Map(); // cluster -> {w, h}
  const sig = new Map(); // cluster -> its id and its open subgroups', nested
  const layouts = new Map(); // cluster -> layout in this view
  if (cache.size > 20000 && !quick) cache.clear();
  for (const c of order) {
    const inner = children.get(c).filter((k) => typeof k === "number").map((k) => sig.get(k));
    sig.set(c, inner.length ? `${c}(${inner.sort().join(",")})` : String(c));
    let lay = cached(sig.get(c));
    if (!lay) lay = rowsLayout(children.get(c), lifted.get(c) || [], sizes, m, view);
    if (!lay) lay = chainLayout(children.get(c), lifted.get(c) || [], sizes, m, view);
    const shape = lay ? null : shapeKey(children.get(c), lifted.get(c) || [], sizes, m, view);
    if (!lay && cached(shape)) lay = translated(cached(shape), children.get(c));
    if (!lay && quick) {
      // kept by shape for this layout only: a fully open RNN-T has 37 shapes in 500 groups
      lay = layeredLayout(children.get(c), lifted.get(c) || [], sizes, m, view);
      local.set(shape, { rels: children.get(c).map((k) => lay.rel.get(k)), w: lay.w, h: lay.h });
    }
    if (!lay) {
      const g = new dagre.graphlib.Graph({ multigraph: false });
      g.setGraph({ rankdir: "TB", ranker: "network-simplex", nodesep: GAP, ranksep: RANK_GAP, marginx: 0, marginy: 0 });
      g.setDefaultEdgeLabel(() => ({}));
      for (const k of children.get(c)) {
        const key = String(k);
        if (typeof k === "number") {
          const s = sizes.get(k);
          g.setNode(key, { width: s.w, height: s.h });
        } else {
          const box = itemBox(m, view.items.get(k));
          g.setNode(key, { width: box.w, height: box.h });
        }
      }
      for (const [a, b] of lifted.get(c) || []) g.setEdge(String(a), String(b));
      dagre.layout(g);
      const rel = new Map();
      let w = 0;
      let h = 0;
      for (const k of children.get(c)) {
        const n = g.node(String(k));
        rel.set(k, { x: n.x - n.width / 2, y: n.y - n.height / 2, w: n.width, h: n.height });
        w = Math.max(w, n.x + n.width / 2);
        h = Math.max(h, n.y + n.height / 2);
      }
      lay = { rel, w, h };
      cache.set(shape, { rels: children.get(c).map((k) => rel.get(k)), w, h });
      yield [layouts.size + 1, order.length]; // progress: groups laid out, of all open
    }
    local.set(sig.get(c), lay);
    layouts.set(c, lay);
    if (quick && layouts.size % 64 === 0) yield [layouts.size, order.length]; // a slice's worth
    sizes.set(c, c < 0 ? { w: lay.w, h: lay.h } : { w: Math.max(lay.w + 2 * PAD, m.groups[c].label.length * CHAR_W + 30), h: lay.h + HEADER + PAD });
  }
  const pos = new Map();
  const boxes = new Map();
  const place = (c, x0, y0) => {
    const lay = layouts.get(c);
    for (const [k, r] of lay.rel) {
      if (typeof k === "number") {
        const s = sizes.get(k);
        const box = { x: x0 + r.x, y: y0 + r.y, w: s.w, h: s.h };
        boxes.set(k, box);
        place(k, box.x + PAD, box.y + HEADER);
      } else {
        pos.set(k, { x: x0 + r.x, y: y0 + r.y, w: r.w, h: r.h });
      }
    }
  };
  place(-1, 0, 0);
  const top = sizes.get(-1);
  return { pos, boxes, width: top.w, height: top.h, provisional: quick };
}

// The key of a group's layout problem: its children's box sizes in order and its edges
// as pairs of child positions.  dagre's result depends on nothing else, so groups with
// equal keys (the layers of a transformer, the units of a ResNet stage) get the same
// layout: "expand all" on a 24-layer decoder runs dagre for two layers (h.0-h.9 and
// h.10-h.23 differ in label width), not 24.
function shapeKey(kids, edges, sizes, m, view) {
  const at = new Map(kids.map((k, i) => [k, i]));
  const dims = kids.map((k) => {
    const b = typeof k === "number" ? sizes.get(k) : itemBox(m, view.items.get(k));
    return `${b.w}x${b.h}`;
  });
  return `shape:${dims.join(",")}|${edges.map(([a, b]) => `${at.get(a)}>${at.get(b)}`).join(",")}`;
}

// A layout found by shape, given to this group's children (same positions, in order).
function translated(shape, kids) {
  return { rel: new Map(kids.map((k, i) => [k, shape.rels[i]])), w: shape.w, h: shape.h };
}

const GAP = 16;
const RANK_GAP = 26;

// The layout of a group whose edges all go from a source to a sink (a weight group: four
// variables into one batch_norm; a conv and its weight): sources in one row, sinks in
// the row below, centred. dagre takes ~10x longer for the same picture, and most groups
// of a real model are like this. Returns null for any other shape.
function rowsLayout(kids, edges, sizes, m, view) {
  const hasIn = new Set();
  const hasOut = new Set();
  for (const [a, b] of edges) {
    hasOut.add(a);
    hasIn.add(b);
  }
  for (const k of kids) if (hasIn.has(k) && hasOut.has(k)) return null;
  if (kids.length > 12) return null;
  const sizeOf = (k) => (typeof k === "number" ? sizes.get(k) : itemBox(m, view.items.get(k)));
  const rows = [kids.filter((k) => !hasIn.has(k)), kids.filter((k) => hasIn.has(k))].filter((r) => r.length);
  const dims = rows.map((r) => r.map(sizeOf));
  const widths = dims.map((d) => d.reduce((s, b) => s + b.w, 0) + GAP * (d.length - 1));
  const w = Math.max(...widths, 0);
  const rel = new Map();
  let y = 0;
  rows.forEach((row, i) => {
    let x = (w - widths[i]) / 2;
    const rh = Math.max(...dims[i].map((b) => b.h));
    row.forEach((k, j) => {
      const b = dims[i][j];
      rel.set(k, { x, y: y + (rh - b.h) / 2, w: b.w, h: b.h });
      x += b.w + GAP;
    });
    y += rh + RANK_GAP;
  });
  return { rel, w, h: Math.max(y - RANK_GAP, 0) };
}

// Each kid's predecessors among the kids (edges leaving the group are left out).
function predecessors(kids, edges) {
  const preds = new Map(kids.map((k) => [k, []]));
  for (const [a, b] of edges) if (preds.has(a) && preds.has(b)) preds.get(b).push(a);
  return preds;
}

// A provisional layout of any group in linear time: ranks by longest path (a cycle's
// back edge ignored), each rank a centred row ordered by the mean position of its
// predecessors in the rank above.  Shown while dagre runs; dagre's picture replaces it.
function layeredLayout(kids, edges, sizes, m, view) {
  const preds = predecessors(kids, edges);
  const rank = new Map();
  const visiting = new Set();
  const rankOf = (k) => {
    if (rank.has(k)) return rank.get(k);
    if (visiting.has(k)) return -1;
    visiting.add(k);
    let r = 0;
    for (const p of preds.get(k)) r = Math.max(r, rankOf(p) + 1);
    rank.set(k, r);
    return r;
  };
  const rows = [];
  for (const k of kids) {
    const r = rankOf(k);
    (rows[r] || (rows[r] = [])).push(k);
  }
  const sizeOf = (k) => (typeof k === "number" ? sizes.get(k) : itemBox(m, view.items.get(k)));
  const slot = new Map(); // kid -> its place in its row
  const packed = rows.filter((r) => r).map((row) => {
    const mean = (k) => {
      const ps = preds.get(k).filter((p) => slot.has(p));
      return ps.length ? ps.reduce((s, p) => s + slot.get(p), 0) / ps.length : Infinity;
    };
    const keyed = row.map((k, i) => [mean(k), i, k]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    keyed.forEach(([, , k], i) => slot.set(k, i - (keyed.length - 1) / 2));
    return keyed.map(([, , k]) => [k, sizeOf(k)]);
  });
  const widths = packed.map((r) => r.reduce((s, [, b]) => s + b.w, 0) + GAP * (r.length - 1));
  const w = Math.max(...widths, 0);
  const rel = new Map();
  let y = 0;
  packed.forEach((row, i) => {
    let x = (w - widths[i]) / 2;
    const rh = Math.max(...row.map(([, b]) => b.h));
    for (const [k, b] of row) {
      rel.set(k, { x, y: y + (rh - b.h) / 2, w: b.w, h: b.h });
      x += b.w + GAP;
    }
    y += rh + RANK_GAP;
  });
  return { rel, w, h: Math.max(y - RANK_GAP, 0) };
}

// The layout of a group whose items form one chain (rank by longest path, one item per
// rank: the layers of a transformer, the stages of a ResNet): a centred column. Returns
// null for any other shape.
function chainLayout(kids, edges, sizes, m, view) {
  if (kids.length < 2) return null;
  const preds = predecessors(kids, edges);
  const rank = new Map();
  const visiting = new Set();
  const rankOf = (k) => {
    if (rank.has(k)) return rank.get(k);
    if (visiting.has(k)) return -1; // a cycle: not a chain
    visiting.add(k);
    let r = 0;
    for (const p of preds.get(k)) {
      const q = rankOf(p);
      if (q < 0) return -1;
      r = Math.max(r, q + 1);
    }
    rank.set(k, r);
    return r;
  };
  const byRank = new Array(kids.length);
  for (const k of kids) {
    const r = rankOf(k);
    if (r < 0 || byRank[r] !== undefined) return null;
    byRank[r] = k;
  }
  const column = byRank.filter((k) => k !== undefined);
  const sizeOf = (k) => (typeof k === "number" ? sizes.get(k) : itemBox(m, view.items.get(k)));
  const dims = column.map(sizeOf);
  const w = Math.max(...dims.map((b) => b.w));
  const rel = new Map();
  let y = 0;
  column.forEach((k, i) => {
    rel.set(k, { x: (w - dims[i].w) / 2, y, w: dims[i].w, h: dims[i].h });
    y += dims[i].h + RANK_GAP;
  });
  return { rel, w, h: y - RANK_GAP };
}
