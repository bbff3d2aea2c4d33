/*
 * cachesim.js - draws a `memtap cachesim --html` page from the JSON island
 * #memtap-data (cachesim's --json) with ECharts (inlined before this
 * script, with page/common.js's helpers): the totals, the objects'
 * first-level misses by cause, their miss ratios per level, their reuse
 * distances, the misses over time, and the instructions by misses.  Sets
 * document.body.dataset.ready when done; errors are listed on the page and
 * in window.memtapErrors.
 */
(function () {
  "use strict";
  var P = window.memtapPage;
  var fail = P.fail, num = P.num, section = P.section, chart = P.chart,
      table = P.table;

  var CAUSES = [["compulsory", "compulsory"], ["capacity", "capacity"],
                ["conflict", "conflict"], ["true_sharing", "true sharing"],
                ["false_sharing", "false sharing"]];

  function level(g) {
    return num(g.size) + " B, " + g.assoc + "-way, " + g.line + "-B lines";
  }
  function perMille(n, of) {
    return of ? (1000 * n / of).toFixed(1) : "-";
  }

  function summary(d) {
    document.getElementById("meta").textContent =
      "D1 " + level(d.d1) + ", one per thread; LL " + level(d.ll) + ", shared; " +
      num(d.accesses) + " line accesses (" + num(d.reads) + " reads, " +
      num(d.writes) + " writes), " + d.threads + " thread(s); D1 misses " +
      num(d.d1_misses) + " (" + perMille(d.d1_misses, d.accesses) +
      " per 1000), LL misses " + num(d.ll_misses) + " (" +
      perMille(d.ll_misses, d.accesses) + " per 1000)";
  }

  /* The objects with first-level misses, the most first (20 of them). */
  function missing(d) {
    return d.objects.filter(function (o) { return o.d1_misses > 0; }).slice(0, 20);
  }

  /* A chart in s of a bar per object of top (the most on top), one series
   * per [name, value(object)] of series; stacked when stack. */
  function objectBars(s, id, top, axis, series, stack) {
    var rows = top.slice().reverse();
    var c = chart(s, id, false, 80 + 22 * rows.length);
    c.setOption({
      tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
      legend: {},
      grid: { left: 260, top: 40 },
      xAxis: { type: "value", name: axis },
      yAxis: { type: "category", axisLabel: { interval: 0 },
               data: rows.map(function (o) { return o.name; }) },
      series: series.map(function (k) {
        return { name: k[0], type: "bar", stack: stack ? "all" : undefined,
                 data: rows.map(k[1]) };
      })
    });
  }

  function objects(d) {
    var top = missing(d);
    if (!top.length) return;
    var s = section("First-level misses by object and cause", "objects");
    objectBars(s, "chart-misses", top, "D1 misses", CAUSES.map(function (k) {
      return [k[1], function (o) { return o[k[0]]; }];
    }), true);
    table(s, [
      { title: "D1 misses", value: function (o) { return o.d1_misses; } },
      { title: "LL misses", value: function (o) { return o.ll_misses; } },
      { title: "per 1000", value: function (o) { return perMille(o.d1_misses, o.accesses); } },
      { title: "accesses", value: function (o) { return o.accesses; } },
      { title: "object", name: true, value: function (o) { return o.name; } }
    ], top);
  }

  /* misses per 1000 line accesses at each level, of the objects that miss
   * most */
  function ratios(d) {
    var top = missing(d);
    if (!top.length) return;
    var s = section("Miss ratio per level (misses per 1000 line accesses)", "ratios");
    objectBars(s, "chart-ratios", top, "per 1000", [["d1_misses", "D1"], ["ll_misses", "LL"]].map(
      function (k) {
        return [k[1], function (o) { return +perMille(o[k[0]], o.accesses); }];
      }), false);
  }

  function reuse(d) {
    var top = d.objects.filter(function (o) { return o.reuse.length; }).slice(0, 8);
    if (!top.length) return;
    var s = section("Reuse distances (distinct lines used between two uses of a line)",
                    "reuse");
    var bins = [];
    top.forEach(function (o) {
      o.reuse.forEach(function (r) { if (bins.indexOf(r[1]) < 0) bins.push(r[1]); });
    });
    bins.sort(function (a, b) { return a - b; });
    var c = chart(s, "chart-reuse");
    c.setOption({
      tooltip: { trigger: "axis" },
      legend: {},
      grid: { top: 60 },
      xAxis: { type: "category", name: "distance up to",
               data: bins.map(function (b) { return num(b); }) },
      yAxis: { type: "value", name: "uses" },
      series: top.map(function (o) {
        var at = {};
        o.reuse.forEach(function (r) { at[r[1]] = r[2]; });
        return { name: o.name, type: "line",
                 data: bins.map(function (b) { return at[b] || 0; }) };
      })
    });
  }

  function timeline(d) {
    var t = d.timeline;
    if (!t || !t.accesses.length) return;
    var s = section("Misses over time", "timeline");
    var c = chart(s, "chart-timeline");
    c.setOption({
      tooltip: { trigger: "axis" },
      legend: {},
      grid: { top: 60, right: 80 },
      xAxis: { type: "category", name: "ms",
               data: t.accesses.map(function (_, k) {
                 return (k * t.bin_us / 1000).toFixed(1);
               }) },
      yAxis: [{ type: "value", name: "misses" },
              { type: "value", name: "line accesses" }],
      series: [
        { name: "D1 misses", type: "line", data: t.d1_misses },
        { name: "LL misses", type: "line", data: t.ll_misses },
        { name: "line accesses", type: "line", yAxisIndex: 1, lineStyle: { type: "dashed" },
          data: t.accesses }
      ]
    });
  }

  function instructions(d) {
    if (!d.instructions.length) return;
    var s = section("Instructions by first-level misses", "instructions");
    table(s, [
      { title: "D1 misses", value: function (x) { return x.d1_misses; } },
      { title: "LL misses", value: function (x) { return x.ll_misses; } },
      { title: "accesses", value: function (x) { return x.accesses; } },
      { title: "instruction", name: true, value: function (x) { return x.code; } },
      { title: "line", name: true, value: function (x) { return x.line || "-"; } }
    ], d.instructions);
  }

  try {
    var d = JSON.parse(document.getElementById("memtap-data").textContent);
    summary(d);
    objects(d);
    ratios(d);
    reuse(d);
    timeline(d);
    instructions(d);
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
  document.body.dataset.ready = "1";
})();
