// The graph inspector's front end (anywidget ESM; relay_nb/notebook/inspector.py is the
// Python side). Plain ES module: no bundler, no imports, no network, so it works offline.
//
// Model traitlets: svg (the Graphviz drawing; each node's <g> carries its node id),
// nodes ({id: {label, kind, type, attrs, line, column, end_line, source, shared, uses}}),
// text (the printed program), selected (the clicked node id), title.
// Hovering a node shows its details and marks its lines; clicking selects it (synced
// back to Python) and selects its lines in the text view.

function make(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The lines a node spans in the text: [first, last], or null (the same rule as the
// Python select_lines).
export function linesOf(nodes, id) {
  const info = nodes && nodes[id];
  if (!info || !info.line) return null;
  return [info.line, info.end_line || info.line];
}

function describe(info, id) {
  const box = make("div", "relay-gi-details");
  if (!info) {
    box.append(make("div", "relay-gi-hint", "hover a node to see its type; click to select its line"));
    return box;
  }
  box.append(make("div", "relay-gi-label", info.label.split("\n")[0]));
  const rows = [
    ["kind", info.kind + (info.shared ? ` (shared: ${info.uses} uses)` : "")],
    ["type", info.type || "-"],
    ["attrs", info.attrs || "-"],
    ["line", info.line ? (info.end_line && info.end_line !== info.line ? `${info.line}-${info.end_line}` : `${info.line}`) : "-"],
  ];
  if (info.source) rows.push(["source", info.source]);
  rows.push(["id", id]);
  const table = make("table", "relay-gi-table");
  for (const [key, value] of rows) {
    const tr = make("tr");
    tr.append(make("th", "", key), make("td", "relay-gi-" + key, value));
    table.append(tr);
  }
  box.append(table);
  return box;
}

function render({ model, el }) {
  el.classList.add("relay-gi");
  const title = make("div", "relay-gi-title");
  const graph = make("div", "relay-gi-graph");
  const side = make("div", "relay-gi-side");
  const info = make("div", "relay-gi-info");
  const code = make("pre", "relay-gi-text");
  side.append(info, code);
  const body = make("div", "relay-gi-body");
  body.append(graph, side);
  el.replaceChildren(title, body);

  let lineNodes = [];
  let hovered = null;

  function nodeElements() {
    const nodes = model.get("nodes") || {};
    return Array.from(graph.querySelectorAll("g[id]")).filter((g) => g.id in nodes);
  }

  function markLines(range, cls) {
    for (const line of lineNodes) line.classList.remove(cls);
    if (!range) return;
    for (let i = range[0]; i <= range[1] && i <= lineNodes.length; i++) lineNodes[i - 1].classList.add(cls);
  }

  function showInfo(id) {
    const nodes = model.get("nodes") || {};
    info.replaceChildren(describe(id ? nodes[id] : null, id));
  }

  function applySelection(scroll) {
    const id = model.get("selected");
    const nodes = model.get("nodes") || {};
    for (const g of nodeElements()) g.classList.toggle("relay-gi-selected", g.id === id);
    const range = linesOf(nodes, id);
    markLines(range, "relay-gi-line-selected");
    if (!hovered) showInfo(id || null);
    if (scroll && range && lineNodes[range[0] - 1]) {
      lineNodes[range[0] - 1].scrollIntoView({ block: "nearest" });
    }
  }

  function drawText() {
    code.replaceChildren();
    lineNodes = (model.get("text") || "").split("\n").map((text, i) => {
      const line = make("div", "relay-gi-line");
      line.dataset.line = String(i + 1);
      line.append(make("span", "relay-gi-lineno", String(i + 1)), make("span", "relay-gi-code", text));
      code.append(line);
      return line;
    });
  }

  function drawGraph() {
    // The SVG comes from Graphviz run on DOT relay_nb wrote (labels escaped there).
    graph.innerHTML = model.get("svg") || "";
    for (const g of nodeElements()) {
      g.classList.add("relay-gi-node");
      g.addEventListener("mouseenter", () => {
        hovered = g.id;
        g.classList.add("relay-gi-hover");
        showInfo(g.id);
        markLines(linesOf(model.get("nodes"), g.id), "relay-gi-line-hover");
      });
      g.addEventListener("mouseleave", () => {
        hovered = null;
        g.classList.remove("relay-gi-hover");
        markLines(null, "relay-gi-line-hover");
        showInfo(model.get("selected") || null);
      });
      g.addEventListener("click", (event) => {
        event.stopPropagation();
        model.set("selected", model.get("selected") === g.id ? "" : g.id);
        model.save_changes();
      });
    }
  }

  function redraw() {
    title.textContent = model.get("title") || "";
    title.style.display = title.textContent ? "" : "none";
    drawText();
    drawGraph();
    applySelection(false);
  }

  const onSelected = () => applySelection(true);
  const onTitle = () => redraw();
  model.on("change:svg", redraw);
  model.on("change:text", redraw);
  model.on("change:nodes", redraw);
  model.on("change:title", onTitle);
  model.on("change:selected", onSelected);
  redraw();

  return () => {
    model.off("change:svg", redraw);
    model.off("change:text", redraw);
    model.off("change:nodes", redraw);
    model.off("change:title", onTitle);
    model.off("change:selected", onSelected);
  };
}

export default { render };
