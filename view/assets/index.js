// index.js: report/index.html, drawn from the inlined REPORT data.
"use strict";

(function () {
  var R = REPORT, el = FT.el;
  var runs = document.getElementById("runs");
  R.runs.forEach(function (r) {
    var li = el("li", { class: "run" });
    if (r.href) {
      var a = el("a", { href: r.href }, r.name);
      li.appendChild(a);
    } else {
      li.appendChild(el("span", {}, r.name + " (not traced)"));
    }
    li.appendChild(document.createTextNode(" " + r.title));
    runs.appendChild(li);
  });
  if (!R.runs.length) runs.appendChild(el("li", {}, "no runs"));

  var box = document.getElementById("tables");
  // Fault bands per scenario group: gN-faults.csv shades gN-*.csv (a
  // report of one group has faults.csv and unprefixed files).
  function group(name) {
    var m = /^(.*\/)?(g[0-9]+-)?/.exec(name);
    return (m[1] || "") + (m[2] || "");
  }
  var faults = {};
  R.tables.forEach(function (t) {
    if (t.name.slice(-10) === "faults.csv") {
      var s = t.header.indexOf("start_s"), e = t.header.indexOf("end_s"), f = t.header.indexOf("fill"), g = group(t.name);
      faults[g] = faults[g] || [];
      t.rows.forEach(function (r) { faults[g].push([+r[s], +r[e], f >= 0 ? r[f] : ""]); });
    }
  });
  R.tables.forEach(function (t) {
    var sec = el("div", { class: "table", "data-csv": t.name });
    sec.appendChild(el("h3", {}, t.name));
    box.appendChild(sec);
    var ti = t.header.indexOf("t_s"), si = t.header.indexOf("series");
    if (ti < 0) {
      var table = el("table"), h = el("tr");
      t.header.forEach(function (c) { h.appendChild(el("th", {}, c)); });
      table.appendChild(h);
      t.rows.forEach(function (r) {
        var tr = el("tr");
        r.forEach(function (c) { tr.appendChild(el("td", {}, c)); });
        table.appendChild(tr);
      });
      sec.appendChild(table);
      return;
    }
    // A chart per column that varies, one line per series, on the union
    // of the series' times. A time another series has and this one does
    // not is undefined, which uPlot draws across (a barrier run's point a
    // second stays a line beside kstreams' ten), unless the series' own
    // points around it are more than one and a half of its usual spacing
    // apart (no commit for a while: a gap, as the PNG draws it). So is an
    // empty value: null.
    var names = [], xs = {}, bySeries = {};
    t.rows.forEach(function (r) {
      var name = si >= 0 ? r[si] : "";
      if (!(name in bySeries)) { bySeries[name] = {}; names.push(name); }
      xs[+r[ti]] = +r[ti];
      bySeries[name][+r[ti]] = r;
    });
    var x = Object.keys(xs).map(function (k) { return xs[k]; }).sort(function (a, b) { return a - b; });
    t.header.forEach(function (col, ci) {
      if (ci === ti || ci === si || col.indexOf("window_") === 0) return; // the steady window: a table figure, not a curve
      var ys = [], seen = {};
      names.forEach(function (n) {
        var own = x.filter(function (v) { return bySeries[n][v]; }), d = [];
        for (var i = 1; i < own.length; i++) d.push(own[i] - own[i - 1]);
        d.sort(function (a, b) { return a - b; });
        var usual = d.length ? d[d.length >> 1] : 0, k = 0;
        var vals = x.map(function (v) {
          var r = bySeries[n][v];
          while (k < own.length && own[k] < v) k++;
          if (!r) return k > 0 && k < own.length && own[k] - own[k - 1] <= 1.5 * usual ? undefined : null;
          if (r[ci] === "") return null;
          seen[r[ci]] = 1;
          return +r[ci];
        });
        ys.push({ label: (n ? n + " " : "") + col, values: vals });
      });
      if (Object.keys(seen).length < 2) return; // a constant column is a table figure, not a curve
      FT.chart(sec, col, x, ys, faults[group(t.name)] || [], col);
    });
  });
})();
