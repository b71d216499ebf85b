// view.js: run.html's space-time diagram, history table and charts, drawn
// from the inlined RUN data (view.Page).
"use strict";

(function () {
  var D = RUN, G = D.diagram, el = FT.el;
  var NS = "http://www.w3.org/2000/svg";
  var LANE_H = 18, LEFT = 200, TOP = 40, GROUP_GAP = 16, RIGHT = 20;

  document.getElementById("summary").textContent = D.summary;
  document.getElementById("replay").textContent = D.replay;

  // Kind colours: the protocols' control messages get fixed colours so that
  // every system's page reads the same; other kinds take the palette.
  var fixed = {
    barrier: "#1f77b4", unaligned_barrier: "#17becf", barrier_announcement: "#aec7e8", marker: "#1f77b4",
    trigger: "#9467bd", checkpoint_ack: "#2ca02c", ack: "#2ca02c", checkpoint_complete: "#8c564b", commit: "#d62728",
    checkpoint_abort: "#d62728", record: "#999999", tuple: "#999999", transfer: "#999999",
    init: "#e377c2", tree_done: "#1f77b4", fail: "#d62728", tree_failed: "#d62728", batch: "#ff7f0e", batch_count: "#bcbd22",
    launch: "#ff7f0e", recompute: "#d62728", task_result: "#8c564b", fetch: "#17becf", blocks: "#1f77b4",
  };
  // Unit kinds: messages whose id is a history row's id.
  var unitKind = {};
  D.history.msg_kinds.forEach(function (k) { unitKind[k] = true; });
  var kindIsUnit = G.kinds.map(function (k) { return !!unitKind[k]; });
  function kindColor(i) {
    var k = G.kinds[i];
    if (fixed[k]) return fixed[k];
    return FT.palette[(i + 3) % FT.palette.length];
  }

  // Lanes sorted by worker (stable), each worker a group with a header.
  var order = G.lanes.map(function (l, i) { return i; });
  order.sort(function (a, b) { return G.lanes[a].worker - G.lanes[b].worker || a - b; });
  var laneY = [], groups = [], y = TOP, last = null;
  order.forEach(function (i) {
    var w = G.lanes[i].worker;
    if (w !== last) {
      y += GROUP_GAP;
      groups.push({ worker: w, y: y - GROUP_GAP + 2 });
      last = w;
    }
    laneY[i] = y + LANE_H / 2;
    y += LANE_H;
  });
  var height = y + 10;

  var svg = document.getElementById("diagram");
  var box = document.getElementById("diagram-box");
  var width = Math.max(800, box.clientWidth || 1200);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("data-lanes", G.lanes.length);
  var plotW = width - LEFT - RIGHT;

  var v0 = G.from_ns, v1 = Math.max(G.to_ns, G.from_ns + 1);
  var selected = null;

  function x(t) { return LEFT + ((t - v0) / (v1 - v0)) * plotW; }
  function tAt(px) { return v0 + ((px - LEFT) / plotW) * (v1 - v0); }
  function s(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function visible(a, b) { return b >= v0 && a <= v1; }
  function clampX(t) { return Math.max(LEFT, Math.min(LEFT + plotW, x(t))); }

  // Events that belong to a unit (checkpoint, batch ...) can be clicked.
  var unitEvents = { checkpoint_triggered: 1, checkpoint_completed: 1, checkpoint_aborted: 1, checkpoint_start: 1, batch_cut: 1, batch_started: 1, batch_committed: 1, snapshot_acked: 1, snapshot_write: 1 };
  var crashKinds = { worker_crash: 1, crash: 1, fault_start: 1 };
  var recoverKinds = { restore: 1, worker_up: 1, task_restart: 1, failover: 1, deploy: 1, recovery_start: 1, recomputed: 1, source_rewind: 1, spout_resume: 1, failure_detected: 1 };

  function niceStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 2 ? 2 : m < 5 ? 5 : 10) * p;
  }
  function fmtT(t, step) {
    var d = Math.max(0, Math.min(6, -Math.floor(Math.log10(step / 1e9))));
    return (t / 1e9).toFixed(d) + " s";
  }

  var sampledKinds = {};
  G.counts.forEach(function (c) { sampledKinds[G.kinds[c[4]]] = 1; });
  sampledKinds = Object.keys(sampledKinds).join(", ");

  var MAX_DRAWN = 4000;

  // drawMsg draws message i: an arrow from its send to its receipt.
  function drawMsg(i, data, ctrl) {
    var m = G.msgs[i], t0 = m[0], t1 = m[1] || v1, from = m[2], to = m[3];
    var proto = m[6] || kindIsUnit[m[4]];
    var x2 = x(t1), y2 = laneY[to];
    if (!m[1]) {
      // Never received (lost to a crash or a partition): a short stub
      // toward the receiver ending in a cross, not an arrow to nowhere.
      x2 = x(t0) + 24;
      y2 = laneY[from] + (laneY[to] - laneY[from]) * 0.3;
      var cross = s("path", { d: "M " + (x2 - 3) + " " + (y2 - 3) + " l 6 6 m 0 -6 l -6 6", class: "lost-x" }, ctrl);
      cross.setAttribute("stroke", proto ? kindColor(m[4]) : "#999");
    }
    var attrs = { x1: x(t0), y1: laneY[from], x2: x2, y2: y2, class: "msg k" + m[4] + (proto ? " ctrl" : " data"), stroke: proto ? kindColor(m[4]) : "#999", "data-m": i };
    if (proto && m[1]) attrs["marker-end"] = "url(#arrow-" + m[4] + ")";
    if (kindIsUnit[m[4]]) attrs["data-id"] = m[5];
    if (!m[1]) attrs.class += " lost";
    var line = s("line", attrs, proto ? ctrl : data);
    if (kindIsUnit[m[4]] && selected !== null && m[5] === selected) line.classList.add("hl");
  }

  // msgTip is the hover text of message i, made when hovered.
  function msgTip(i) {
    var m = G.msgs[i];
    return G.kinds[m[4]] + (m[5] ? " id " + m[5] : "") + (m[6] ? " (control)" : "") + "\n" + G.lanes[m[2]].name + " → " + G.lanes[m[3]].name +
      "\nsent " + FT.secs(m[0]) + (m[1] ? ", received " + FT.secs(m[1]) + " (" + FT.ms(m[1] - m[0]) + ")" : ", never received");
  }

  function render() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("data-from-ns", Math.round(v0));
    svg.setAttribute("data-to-ns", Math.round(v1));
    document.getElementById("range").textContent = "window " + FT.secs(v0) + " – " + FT.secs(v1) + " (" + FT.ms(v1 - v0) + ")";

    var defs = s("defs", {}, svg);
    G.kinds.forEach(function (k, i) {
      var m = s("marker", { id: "arrow-" + i, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: "userSpaceOnUse", orient: "auto" }, defs);
      s("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: kindColor(i) }, m);
    });
    var clip = s("clipPath", { id: "plot-clip" }, defs);
    s("rect", { x: LEFT, y: 0, width: plotW, height: height }, clip);

    // Axis.
    var step = niceStep(v1 - v0), axis = s("g", { class: "axis" }, svg);
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      s("line", { x1: x(t), x2: x(t), y1: TOP - 8, y2: height, class: "grid" }, axis);
      s("text", { x: x(t), y: TOP - 12, "text-anchor": "middle" }, axis).textContent = fmtT(t, step);
    }

    // Lanes and worker groups.
    var lanes = s("g", { class: "lanes" }, svg);
    groups.forEach(function (g) {
      s("text", { x: 4, y: g.y + 10, class: "group" }, lanes).textContent = g.worker < 0 ? "control" : "worker " + g.worker;
    });
    G.lanes.forEach(function (l, i) {
      var gl = s("g", { class: "lane", "data-proc": l.name }, lanes);
      s("line", { x1: LEFT, x2: LEFT + plotW, y1: laneY[i], y2: laneY[i] }, gl);
      var label = s("text", { x: LEFT - 6, y: laneY[i] + 4, "text-anchor": "end" }, gl);
      label.textContent = l.name;
      s("title", {}, label).textContent = l.name + (l.ops && l.ops.length ? " (" + l.ops.join(", ") + ")" : "") + ", worker " + l.worker;
    });

    var plot = s("g", { "clip-path": "url(#plot-clip)" }, svg);

    // Fault bands across every lane, then recovery phase lines.
    G.faults.forEach(function (f) {
      var end = f.end > f.t ? f.end : f.t + (v1 - v0) / 400;
      if (!visible(f.t, end)) return;
      var r = s("rect", { x: x(f.t), y: TOP, width: Math.max(2, x(end) - x(f.t)), height: height - TOP, class: "fault" }, plot);
      r.setAttribute("data-tip", "fault " + f.kind + (f.note ? " " + f.note : "") + "\n" + FT.secs(f.t) + " – " + FT.secs(f.end || f.t));
    });
    // Phases reached at the same instant share a line and a label.
    var phaseAt = [];
    G.phases.forEach(function (p) {
      var last = phaseAt[phaseAt.length - 1];
      if (last && last.t === p.at_ns) last.label += ", " + p.label;
      else phaseAt.push({ t: p.at_ns, label: p.label });
    });
    phaseAt.forEach(function (p, i) {
      if (!visible(p.t, p.t)) return;
      var ln = s("line", { x1: x(p.t), x2: x(p.t), y1: TOP - 4, y2: height, class: "phase" }, plot);
      ln.setAttribute("data-tip", p.label + " at " + FT.secs(p.t));
      var tx = s("text", { x: x(p.t) + 3, y: TOP + 8 + (i % 3) * 11, class: "phase-label" }, plot);
      tx.textContent = p.label;
    });

    // Messages of the sampled kinds sent per bucket, as a grey strip under
    // the sender's lane; buckets narrower than 3 px are merged.
    var strip = s("g", { class: "counts" }, plot);
    var bin = Math.max(1, Math.ceil(((v1 - v0) / plotW) * 3 / G.bucket_ns)) * G.bucket_ns;
    var agg = {}, aggMax = 1;
    G.counts.forEach(function (c) {
      if (c[1] < 0 || !visible(c[0], c[0] + G.bucket_ns)) return;
      var key = (c[0] - G.from_ns - ((c[0] - G.from_ns) % bin)) + ":" + c[1];
      agg[key] = (agg[key] || 0) + c[3];
      if (agg[key] > aggMax) aggMax = agg[key];
    });
    for (var key in agg) {
      var parts = key.split(":"), t0 = G.from_ns + +parts[0], li = +parts[1];
      var r = s("rect", { x: x(t0), y: laneY[li] + 2, width: Math.max(1, x(t0 + bin) - x(t0)), height: 5, opacity: Math.min(1, 0.15 + agg[key] / aggMax) }, strip);
      r.setAttribute("data-tip", G.lanes[li].name + ": " + agg[key] + " messages of the sampled kinds (" + sampledKinds + ") sent in " + FT.ms(bin) + " from " + FT.secs(t0) + "; a sample of them is drawn");
    }

    // Alignment: from alignment_start to alignment (whose value is its duration).
    var al = s("g", { class: "alignments" }, plot);
    var evs = s("g", { class: "events" }, plot);
    var laneIdx = {};
    G.lanes.forEach(function (l, i) { laneIdx[l.name] = i; });
    G.events.forEach(function (e) {
      var li = laneIdx[e.proc];
      if (e.kind === "alignment" && li !== undefined && e.value > 0) {
        if (!visible(e.t - e.value, e.t)) return;
        var r = s("rect", { x: clampX(e.t - e.value), y: laneY[li] - 6, width: Math.max(2, clampX(e.t) - clampX(e.t - e.value)), height: 12, class: "alignment", "data-id": e.id || 0 }, al);
        r.setAttribute("data-tip", "alignment of checkpoint " + e.id + " on " + e.proc + ": " + FT.ms(e.value) + " (inputs with the barrier blocked, their records buffered)");
        return;
      }
      if (!visible(e.t, e.t)) return;
      var cls = "ev", yy = li !== undefined ? laneY[li] : TOP + 4;
      if (crashKinds[e.kind]) cls += " crash";
      else if (recoverKinds[e.kind]) cls += " recover";
      if (unitEvents[e.kind]) cls += " unit";
      var m = s("path", { d: "M " + x(e.t) + " " + (yy - 6) + " l 4 6 l -4 6 l -4 -6 z", class: cls }, evs);
      if (unitEvents[e.kind]) m.setAttribute("data-unit", e.id || 0);
      if (selected !== null && unitEvents[e.kind] && (e.id || 0) === selected) m.classList.add("hl");
      m.setAttribute("data-tip", e.kind + (e.id ? " " + e.id : "") + (e.proc ? " on " + e.proc : "") + " at " + FT.secs(e.t) + (e.value ? "\nvalue " + e.value : "") + (e.bytes ? ", " + FT.bytes(e.bytes) : "") + (e.note ? "\n" + e.note : ""));
    });

    // Messages: data first (under), control and the units' messages on top.
    // A busy window draws an even sample of at most MAX_DRAWN of each
    // (the highlighted ones always), so that zooming stays quick; the
    // label says how many are drawn.
    var data = s("g", { class: "data-msgs" }, plot), ctrl = s("g", { class: "ctrl-msgs" }, plot);
    var vis = { proto: [], data: [] }, always = [];
    G.msgs.forEach(function (m, i) {
      var t1 = m[1] || v1;
      if (m[2] < 0 || m[3] < 0 || !visible(m[0], t1)) return;
      if (kindIsUnit[m[4]] && selected !== null && m[5] === selected) always.push(i);
      else (m[6] || kindIsUnit[m[4]] ? vis.proto : vis.data).push(i);
    });
    var total = vis.proto.length + vis.data.length + always.length, drawn = always.length;
    ["data", "proto"].forEach(function (k) {
      var list = vis[k], stride = Math.max(1, Math.ceil(list.length / MAX_DRAWN));
      for (var j = 0; j < list.length; j += stride) {
        drawMsg(list[j], data, ctrl);
        drawn++;
      }
    });
    always.forEach(function (i) { drawMsg(i, data, ctrl); });
    document.getElementById("drawn").textContent = drawn < total ? drawn + " of the " + total + " traced messages in this window drawn: zoom in for all" : "";
    var n = svg.querySelectorAll(".msg.hl").length;
    document.getElementById("selection").textContent = selected === null ? "" : D.history.unit + " " + selected + ": " + n + " of its messages highlighted" + (D.history.msg_kinds.length ? "" : " (this system's messages carry no " + D.history.unit + " id)");
  }

  // Legend: the control kinds present, then the marks.
  var legend = document.getElementById("legend");
  G.kinds.forEach(function (k, i) {
    var item = el("span", { class: "item" });
    var sw = el("span", { class: "swatch" });
    sw.style.background = kindColor(i);
    item.appendChild(sw);
    item.appendChild(document.createTextNode(k));
    legend.appendChild(item);
  });
  [["alignment", "alignment"], ["fault", "fault band"], ["crash", "crash"], ["recover", "recovery event"], ["unit", "checkpoint / batch event"]].forEach(function (p) {
    var item = el("span", { class: "item" });
    item.appendChild(el("span", { class: "swatch " + p[0] }));
    item.appendChild(document.createTextNode(p[1]));
    legend.appendChild(item);
  });
  if (G.truncated) legend.appendChild(el("span", { class: "item warn" }, "trace truncated: it hit its size budget before the window's end"));

  // Zoom and pan.
  function zoom(f, at) {
    var c = at === undefined ? (v0 + v1) / 2 : at;
    var span = Math.max(1000, (v1 - v0) * f);
    v0 = c - (c - v0) * (span / (v1 - v0));
    v1 = v0 + span;
    clampView();
    render();
  }
  function clampView() {
    var span = v1 - v0, full = G.to_ns - G.from_ns;
    if (span >= full) { v0 = G.from_ns; v1 = G.to_ns; return; }
    if (v0 < G.from_ns) { v0 = G.from_ns; v1 = v0 + span; }
    if (v1 > G.to_ns) { v1 = G.to_ns; v0 = v1 - span; }
  }
  function zoomTo(a, b) {
    var pad = Math.max((b - a) * 0.15, 1e5);
    v0 = a - pad; v1 = b + pad;
    clampView();
    render();
  }
  document.getElementById("zoom-in").onclick = function () { zoom(0.5); };
  document.getElementById("zoom-out").onclick = function () { zoom(2); };
  document.getElementById("zoom-reset").onclick = function () { v0 = G.from_ns; v1 = G.to_ns; render(); };
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, tAt(ev.clientX - r.left));
  }, { passive: false });
  var drag = null;
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, v0: v0, v1: v1, moved: false }; });
  window.addEventListener("mouseup", function () { setTimeout(function () { drag = null; }, 0); });
  svg.addEventListener("mousemove", function (ev) {
    if (drag && ev.buttons === 1) {
      var dt = ((ev.clientX - drag.x) / plotW) * (drag.v1 - drag.v0);
      if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
      v0 = drag.v0 - dt; v1 = drag.v1 - dt;
      clampView();
      render();
      return;
    }
    var tip = document.getElementById("tip"), t = ev.target, text = null;
    if (t.getAttribute && t.hasAttribute("data-m")) text = msgTip(+t.getAttribute("data-m"));
    else if (t.getAttribute) text = t.getAttribute("data-tip");
    if (!text) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    tip.style.left = ev.pageX + 12 + "px";
    tip.style.top = ev.pageY + 12 + "px";
  });
  svg.addEventListener("mouseleave", function () { document.getElementById("tip").hidden = true; });
  svg.addEventListener("click", function (ev) {
    if (drag && drag.moved) return;
    var t = ev.target, id = t.getAttribute("data-unit");
    if (id === null) id = t.getAttribute("data-id");
    if (id !== null) select(+id, false);
  });

  // History table.
  var H = D.history, rowsById = {};
  var unitTitle = { checkpoint: "Checkpoint history", batch: "Batch history", transaction: "Transaction history", "ack tree": "Ack trees in the trace window" };
  document.getElementById("history-title").textContent = unitTitle[H.unit] || "History";
  var help = {
    checkpoint: "One row per checkpoint the run triggered (from events.jsonl, the whole run), as Flink's checkpoint history shows them: trigger time, end-to-end duration, checkpointed size and, per task, the start delay (trigger to the task's first barrier) and the alignment. Click a row for its tasks; it highlights the checkpoint's messages in the diagram and zooms to it.",
    batch: "One row per batch of the run (from events.jsonl): cut or start, commit, duration. Click a row to highlight the batch's messages in the diagram and zoom to it.",
    transaction: "One row per transaction of the run (from events.jsonl): the thread's offsets accepted, commit or abort at the broker, duration. A thread's transaction begins with its first write after its previous commit: click a row to highlight its produce, offsets and commit requests and their answers in the diagram and zoom to its commit.",
    "ack tree": "Ack trees with messages in the trace window: first message sent, last one received, messages and bytes. The trace samples Storm's ack stream (an init, an ack per tuple and a done per tree), so a tree shows the messages sampled; the trees with the most are listed. Click a row for its messages.",
  };
  document.getElementById("history-help").textContent = (help[H.unit] || "") + (H.capped ? " " + H.capped + " more trees in the window are not listed." : "");
  var table = document.getElementById("history");
  var head = el("tr");
  ["id", "status", "trigger", "end", "duration", "size", "in-flight data", "tasks", "start delay max", "alignment max", "buffered"].forEach(function (c) { head.appendChild(el("th", {}, c)); });
  table.appendChild(el("thead")).appendChild(head);
  var tbody = table.appendChild(el("tbody"));
  function maxOf(tasks, f) {
    var m = -1;
    (tasks || []).forEach(function (t) { if (t[f] > m) m = t[f]; });
    return m;
  }
  H.rows.forEach(function (u) {
    var tr = el("tr", { class: "unit status-" + u.status, "data-id": u.id });
    var buffered = 0;
    (u.tasks || []).forEach(function (t) { if (t.buffered > 0) buffered += t.buffered; });
    [u.id, u.status + (u.note ? " (" + u.note + ")" : ""), FT.secs(u.start_ns), u.end_ns ? FT.secs(u.end_ns) : "", u.duration_ns ? FT.ms(u.duration_ns) : "",
      FT.bytes(u.bytes), FT.bytes(u.in_flight_bytes), (u.tasks || []).length || "", maxOf(u.tasks, "start_delay_ns") >= 0 ? FT.ms(maxOf(u.tasks, "start_delay_ns")) : "",
      maxOf(u.tasks, "alignment_ns") >= 0 ? FT.ms(maxOf(u.tasks, "alignment_ns")) : "", buffered || ""].forEach(function (c) { tr.appendChild(el("td", {}, String(c))); });
    tr.onclick = function () { select(u.id, true); };
    rowsById[u.id] = { tr: tr, u: u };
    tbody.appendChild(tr);
  });

  function select(id, zoomIn) {
    selected = selected === id && !zoomIn ? null : id;
    table.querySelectorAll("tr.selected").forEach(function (r) { r.classList.remove("selected"); });
    var tasks = document.getElementById("tasks");
    tasks.textContent = "";
    var row = selected === null ? null : rowsById[selected];
    if (row) {
      row.tr.classList.add("selected");
      var u = row.u;
      if (u.tasks && u.tasks.length) {
        tasks.appendChild(el("h3", {}, H.unit + " " + u.id + " per task"));
        var t = el("table", { class: "tasks" }), h = el("tr");
        ["task", "start delay", "alignment", "buffered records", "snapshot written", "acknowledged after"].forEach(function (c) { h.appendChild(el("th", {}, c)); });
        t.appendChild(h);
        u.tasks.forEach(function (k) {
          var r = el("tr");
          [k.proc, FT.ms(k.start_delay_ns), FT.ms(k.alignment_ns), k.buffered >= 0 ? k.buffered : "n/a", FT.bytes(k.bytes), FT.ms(k.acked_ns)].forEach(function (c) { r.appendChild(el("td", {}, String(c))); });
          t.appendChild(r);
        });
        tasks.appendChild(t);
      }
      if (zoomIn && u.start_ns <= G.to_ns && (u.end_ns || u.start_ns) >= G.from_ns) {
        zoomTo(Math.max(u.start_ns, G.from_ns), Math.min(u.end_ns || u.start_ns + 1e6, G.to_ns));
        return;
      }
    }
    render();
  }

  // A link can open a moment: run.html#window=9.0-9.6&select=7 (seconds;
  // the unit whose messages to highlight).
  var hw = /window=([0-9.]+)-([0-9.]+)/.exec(location.hash), hs = /select=(-?[0-9]+)/.exec(location.hash);
  if (hw && +hw[2] > +hw[1]) {
    v0 = +hw[1] * 1e9;
    v1 = +hw[2] * 1e9;
    clampView();
  }
  if (hs) select(+hs[1], !hw); // without a window, zoom to the unit
  else render();

  // Charts: the same series as timeseries.csv, fault windows shaded.
  var S = D.series, charts = document.getElementById("charts");
  if (S.t.length) {
    FT.chart(charts, "committed effects per second", S.t, [{ label: "committed/s", values: S.per_s }], S.faults_s, "effects/s");
    FT.chart(charts, "source lag", S.t, [{ label: "lag (records)", values: S.lag }], S.faults_s, "records");
    var nil = function (v) { return v.map(function (a) { return a > 0 ? a : null; }); };
    FT.chart(charts, "latency of the bucket's commits", S.t, [{ label: "p50 ms", values: nil(S.p50) }, { label: "p99 ms", values: nil(S.p99) }], S.faults_s, "ms");
  } else {
    charts.textContent = "timeseries.csv is empty: nothing was committed.";
  }
})();
