// common.js: helpers shared by run.html and report/index.html.
"use strict";

var FT = (function () {
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ms formats a duration in ns as ms with sensible precision.
  function ms(ns) {
    if (ns === undefined || ns === null || ns < 0) return "n/a";
    var v = ns / 1e6;
    if (v >= 100) return v.toFixed(0) + " ms";
    if (v >= 1) return v.toFixed(1) + " ms";
    return v.toFixed(3) + " ms";
  }

  function secs(ns) {
    return (ns / 1e9).toFixed(3) + " s";
  }

  function bytes(b) {
    if (!b) return "";
    if (b >= 1 << 20) return (b / (1 << 20)).toFixed(1) + " MiB";
    if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + " KiB";
    return b + " B";
  }

  // bandsPlugin shades [from, to, fill] x ranges (s) on a uPlot chart, as the
  // PNG reports shade fault windows (fill: their colour; default red).
  function bandsPlugin(bands) {
    return {
      hooks: {
        drawClear: function (u) {
          var ctx = u.ctx;
          ctx.save();
          bands.forEach(function (b) {
            ctx.fillStyle = b[2] || "rgba(220,40,40,0.15)";
            var x0 = u.valToPos(b[0], "x", true);
            var x1 = u.valToPos(Math.max(b[1], b[0] + 0.05), "x", true);
            ctx.fillRect(x0, u.bbox.top, Math.max(x1 - x0, 2), u.bbox.height);
          });
          ctx.restore();
        },
      },
    };
  }

  var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

  // chart draws one uPlot line chart into parent: x in s, ys named series.
  function chart(parent, title, x, ys, bands, yLabel) {
    var box = el("div", { class: "chart" });
    parent.appendChild(box);
    var series = [{ label: "t (s)" }];
    var data = [x];
    ys.forEach(function (y, i) {
      series.push({ label: y.label, stroke: palette[i % palette.length], width: 1.5, spanGaps: false });
      data.push(y.values);
    });
    var width = Math.max(400, Math.min(1100, (parent.clientWidth || 1000) - 10));
    return new uPlot(
      {
        title: title,
        width: width,
        height: 220,
        series: series,
        axes: [{ label: "simulated time (s)" }, { label: yLabel || "" }],
        scales: { x: { time: false } },
        plugins: bands && bands.length ? [bandsPlugin(bands)] : [],
      },
      data,
      box
    );
  }

  return { el: el, ms: ms, secs: secs, bytes: bytes, chart: chart, palette: palette };
})();
