/*
 * report.js - draws a `memtap report --html` page from the JSON island
 * #memtap-data with ECharts (inlined before this script): summary tables,
 * accesses over time, the heap over time and flame graphs of its call
 * stacks, and address x time heatmaps of
 * the whole heap and of the hottest objects (with page/common.js's
 * helpers).  When done it sets
 * document.body.dataset.ready; errors are listed on the page and in
 * window.memtapErrors.
 */
(function () {
  "use strict";
  var P = window.memtapPage;
  var fail = P.fail, el = P.el, num = P.num, section = P.section,
      chart = P.chart, table = P.table;

  var KINDS = [["L", "loads"], ["S", "stores"], ["Y", "copies"],
               ["W", "block stores"], ["G", "block fetches"]];

  function pct(part, all) {
    return all ? (100 * part / all).toFixed(1) + "%" : "-";
  }

  function pattern(o) {
    return o.pattern === "strided" ? "strided " + (o.stride > 0 ? "+" : "") + o.stride
                                   : o.pattern;
  }

  /* The time axis: milliseconds since the trace began when its chunks
   * hold times, else events in trace order. */
  function binAxis(d) {
    return d.timeline.duration_us ? "ms" : "event";
  }

  function binLabels(d) {
    var labels = [];
    var us = d.timeline.duration_us;
    var per = (us || d.events) / d.timeline.bins;
    var digits = us && us < 200000 ? (us < 20000 ? 2 : 1) : 0;
    for (var i = 0; i < d.timeline.bins; i++)
      labels.push(us ? (i * per / 1000).toFixed(digits) : String(Math.floor(i * per)));
    return labels;
  }

  function summary(d) {
    document.title = "memtap report: " + d.program;
    document.getElementById("title").textContent = "memtap report: " + d.program;
    var kinds = KINDS.map(function (k) { return k[1] + " " + num(d.kinds[k[0]]); });
    document.getElementById("meta").textContent =
      "pid " + d.pid + ", " + num(d.events) + " events, " + num(d.accesses) +
      " accesses (" + kinds.join(", ") + "); trace " + d.trace +
      (d.selection ? "; counted: the accesses of " + d.selection +
                     " (the heap and the time line: the whole trace's)" : "");
    document.getElementById("incomplete").hidden = d.complete;
  }

  function objects(d) {
    var s = section("Hottest objects (heap blocks by allocation site)", "objects");
    table(s, [
      { title: "accesses", value: function (o) { return o.accesses; } },
      { title: "%", value: function (o) { return pct(o.accesses, d.accesses); } },
      { title: "loads", value: function (o) { return o.L; } },
      { title: "stores", value: function (o) { return o.S; } },
      { title: "blocks", value: function (o) { return o.Y + o.W + o.G; } },
      { title: "bytes read", value: function (o) { return o.bytes_read; } },
      { title: "written", value: function (o) { return o.bytes_written; } },
      { title: "pattern", value: pattern },
      { title: "threads", value: function (o) { return o.threads; } },
      { title: "after free", value: function (o) { return o.after_free; } },
      { title: "object", name: true, value: function (o) { return o.name + " " + o.region; } }
    ], d.objects.filter(function (o) { return o.accesses > 0; }).slice(0, 50));
  }

  function instructions(d) {
    var s = section("Hottest instructions", "instructions");
    table(s, [
      { title: "accesses", value: function (x) { return x.accesses; } },
      { title: "%", value: function (x) { return pct(x.accesses, d.accesses); } },
      { title: "kinds", value: function (x) {
          return KINDS.filter(function (k) { return x[k[0]] > 0; })
                      .map(function (k) { return k[0]; }).join(""); } },
      { title: "instruction", name: true, value: function (x) { return x.name; } },
      { title: "line", name: true, value: function (x) { return x.line; } },
      { title: "object (last)", name: true, value: function (x) { return x.object; } }
    ], d.instructions.slice(0, 50));
    var uaf = d.instructions.filter(function (x) { return x.after_free > 0; });
    if (uaf.length) {
      var u = section("Uses after free: " + d.after_free + " accesses", "uaf");
      table(u, [
        { title: "accesses", value: function (x) { return x.after_free; } },
        { title: "instruction", name: true, value: function (x) { return x.name; } },
        { title: "line", name: true, value: function (x) { return x.line; } },
        { title: "object", name: true, value: function (x) { return x.object; } }
      ], uaf);
    }
  }

  function chunks(d) {
    if (!d.chunks.length) return;
    var s = section("Hottest 64-byte chunks (cache lines)", "chunks");
    var rows = d.chunks.slice().reverse(); /* the hottest on top */
    /* a bar's height for every label: none left out, each by its bar */
    var c = chart(s, "chart-chunks", false, 80 + 22 * rows.length);
    c.setOption({
      tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
      grid: { left: 260 },
      xAxis: { type: "value", name: "accesses" },
      yAxis: { type: "category", axisLabel: { interval: 0 },
               data: rows.map(function (k) { return k.name + " (" + k.address + ")"; }) },
      series: [{ name: "accesses", type: "bar", data: rows.map(function (k) { return k.accesses; }) }]
    });
  }

  function timeline(d, labels) {
    var s = section(d.timeline.duration_us
                    ? "Accesses over time (ms since the trace began)"
                    : "Accesses over time (events in trace order)", "time");
    var c = chart(s, "chart-accesses");
    c.setOption({
      tooltip: { trigger: "axis" },
      legend: {},
      xAxis: { type: "category", data: labels, name: binAxis(d) },
      yAxis: { type: "value", name: "accesses" },
      series: KINDS.map(function (k) {
        return { name: k[1], type: "bar", stack: "all", data: d.timeline[k[0]] };
      })
    });
  }

  function heapSection(d, labels) {
    var h = d.heap;
    var s = section("Heap", "heap");
    if (!h.allocs && !h.mappings) {
      s.appendChild(el("p", {}, "The program made no dynamic memory."));
      return;
    }
    s.appendChild(el("p", {},
      num(h.allocs) + " allocations (" + num(h.alloc_bytes) + " bytes), " + num(h.frees) +
      " frees, " + num(h.temporary) + " temporary; peak " + num(h.peak_bytes) +
      " bytes live (event " + num(h.peak_event) + "); not freed at the end: " +
      num(h.not_freed) + " blocks, " + num(h.not_freed_bytes) + " bytes" +
      (h.mappings ? "; " + num(h.mappings) + " mappings (" + num(h.mapped_bytes) + " bytes)" : "")));
    var c = chart(s, "chart-allocations");
    c.setOption({
      tooltip: { trigger: "axis" },
      legend: {},
      xAxis: { type: "category", data: labels, name: binAxis(d) },
      yAxis: [{ type: "value", name: "bytes live" }, { type: "value", name: "calls" }],
      series: [
        { name: "bytes live", type: "line", step: "end", data: d.timeline.live_bytes },
        { name: "allocations", type: "bar", yAxisIndex: 1, data: d.timeline.allocs },
        { name: "frees", type: "bar", yAxisIndex: 1, data: d.timeline.frees }
      ]
    });
    table(s, [
      { title: "allocs", value: function (o) { return o.allocs; } },
      { title: "bytes", value: function (o) { return o.alloc_bytes; } },
      { title: "peak bytes", value: function (o) { return o.peak_bytes; } },
      { title: "temporary", value: function (o) { return o.temporary; } },
      { title: "not freed", value: function (o) { return o.not_freed; } },
      { title: "bytes", value: function (o) { return o.not_freed_bytes; } },
      { title: "accesses", value: function (o) { return o.accesses; } },
      { title: "site", name: true, value: function (o) { return o.name; } }
    ], d.objects.filter(function (o) { return o.heap && o.allocs > 0; }).slice(0, 50));
    stacksSection(d, s);
    d.objects.filter(function (o) { return o.heap && o.fields; }).slice(0, 5)
      .forEach(function (o) {
        s.appendChild(el("h3", {}, "Fields of " + o.name +
                         (o.type ? " (" + o.type + ")" : "") + ": blocks up to " +
                         num(o.block_size) + " bytes, " + num(o.untouched_bytes) +
                         " of them never accessed" +
                         (o.untouched_members ? " (" + o.untouched_members + ")" : "")));
        table(s, [
          { title: "offset", value: function (f) { return "+" + f.offset; } },
          { title: "size", value: function (f) { return f.size; } },
          { title: "loads", value: function (f) { return f.loads; } },
          { title: "stores", value: function (f) { return f.stores; } },
          { title: "threads", value: function (f) { return f.threads; } },
          { title: "group", name: true, value: function (f) { return f.hot ? "hot" : "cold"; } },
          { title: "when", name: true, value: function (f) {
              return Math.floor(f.first_bin * 100 / d.timeline.bins) + "-" +
                     Math.floor((f.last_bin + 1) * 100 / d.timeline.bins) + "%"; } },
          { title: "field", name: true, value: function (f) { return f.name || ""; } }
        ], o.fields);
      });
  }

  /* The stacks as a tree from the outermost frame in, each node the sum
   * of value over the stacks through it. */
  function stackTree(stacks, value) {
    var root = { name: "all", value: 0, children: {} };
    stacks.forEach(function (st) {
      var v = value(st);
      if (!v || !st.frames.length) return;
      root.value += v;
      var node = root;
      for (var i = st.frames.length - 1; i >= 0; i--) {
        var f = st.frames[i];
        node = node.children[f] || (node.children[f] = { name: f, value: 0, children: {} });
        node.value += v;
      }
    });
    return root;
  }

  /* A flame graph: [x0, x1, depth, name, value] boxes, the root at the
   * bottom, each node as wide as its share, its callees above it. */
  function flameBoxes(node, x0, depth, out) {
    out.push([x0, x0 + node.value, depth, node.name, node.value]);
    var x = x0;
    Object.keys(node.children).sort().forEach(function (k) {
      flameBoxes(node.children[k], x, depth + 1, out);
      x += node.children[k].value;
    });
    return out;
  }

  function flame(parent, id, title, stacks, value, unit) {
    var root = stackTree(stacks, value);
    if (!root.value) return;
    var boxes = flameBoxes(root, 0, 0, []);
    var depth = 1 + Math.max.apply(null, boxes.map(function (b) { return b[2]; }));
    var c = chart(parent, id, false, 60 + 20 * depth);
    c.setOption({
      title: { text: title, textStyle: { fontSize: 13 } },
      tooltip: { formatter: function (p) {
        return p.value[3] + ": " + num(p.value[4]) + " " + unit + " (" +
               pct(p.value[4], root.value) + ")";
      } },
      grid: { left: 10, right: 10, top: 30, bottom: 10 },
      xAxis: { type: "value", min: 0, max: root.value, show: false },
      yAxis: { type: "value", min: 0, max: depth, show: false },
      series: [{
        type: "custom", data: boxes,
        encode: { x: [0, 1], y: 2 },
        renderItem: function (params, api) {
          var a = api.coord([api.value(0), api.value(2)]);
          var b = api.coord([api.value(1), api.value(2) + 1]);
          var w = b[0] - a[0], h = a[1] - b[1];
          return {
            type: "rect",
            shape: { x: a[0], y: b[1], width: Math.max(w - 1, 0.5), height: h - 1 },
            style: { fill: "hsl(" + (20 + (api.value(2) * 37) % 40) + ",80%,60%)" },
            textContent: { style: { text: w > 40 ? String(api.value(3)) : "", fill: "#000",
                                    fontSize: 11, width: Math.max(w - 6, 0),
                                    overflow: "truncate" } },
            textConfig: { position: "insideLeft" }
          };
        }
      }]
    });
  }

  function stacksSection(d, s) {
    var stacks = d.stacks.filter(function (st) { return st.frames.length; });
    if (!stacks.length) return;
    s.appendChild(el("h3", {}, "Allocation call stacks"));
    flame(s, "chart-flame-allocs", "allocations by call stack (the outermost frame at the bottom)",
          stacks, function (st) { return st.allocs; }, "allocations");
    flame(s, "chart-flame-accesses", "accesses to the blocks of each call stack",
          stacks, function (st) { return st.accesses; }, "accesses");
    table(s, [
      { title: "allocs", value: function (st) { return st.allocs; } },
      { title: "bytes", value: function (st) { return st.alloc_bytes; } },
      { title: "temporary", value: function (st) { return st.temporary; } },
      { title: "at peak", value: function (st) { return st.at_peak; } },
      { title: "not freed", value: function (st) { return st.not_freed_bytes; } },
      { title: "accesses", value: function (st) { return st.accesses; } },
      { title: "stack", name: true, value: function (st) { return st.frames.join(" < "); } }
    ], stacks.slice(0, 50));
  }

  function heatmap(parent, id, title, m, labels, offsets) {
    /* a heap block's rows by offset, static data's by name (r[2]) */
    var rows = m.rows.map(function (r) {
      return offsets ? "+" + parseInt(r[0], 16) : r[2] || r[0];
    });
    var max = 1;
    m.cells.forEach(function (c) { if (c[2] > max) max = c[2]; });
    var c = chart(parent, id, true);
    c.setOption({
      title: { text: title, textStyle: { fontSize: 13 } },
      tooltip: { formatter: function (p) {
        return rows[p.value[1]] + " at " + binAxis(d) + " " + labels[p.value[0]] + ": " + p.value[2] + " accesses";
      } },
      grid: { left: 140, right: 90 },
      xAxis: { type: "category", data: labels, name: binAxis(d) },
      yAxis: { type: "category", data: rows, name: offsets ? "offset" : "address" },
      visualMap: { min: 0, max: max, calculable: true, orient: "vertical",
                   right: 0, top: "middle" },
      series: [{ type: "heatmap", data: m.cells.map(function (x) { return [x[1], x[0], x[2]]; }) }]
    });
  }

  function heatmaps(d, labels) {
    var s = section("Where and when: address x time", "heatmaps");
    d.heatmaps.forEach(function (m, i) {
      if (m.object === null) {
        if (m.rows.length) /* a heap nothing touched: no chart */
          heatmap(s, "chart-heap", "the whole heap (touched pages in address order)",
                  m, labels, false);
      }
      else {
        var o = d.objects.filter(function (x) { return x.name === m.object; })[0];
        heatmap(s, "chart-object-" + i, m.object + (o ? " (" + pattern(o) + ")" : ""),
                m, labels, o && o.heap);
      }
    });
  }

  function threads(d, labels) {
    if (d.threads.length < 2) return;
    var s = section("Threads", "threads");
    var c = chart(s, "chart-threads");
    c.setOption({
      title: { text: "accesses over time by thread" +
                     (d.threads.length > d.timeline.threads.length
                        ? " (the first " + d.timeline.threads.length + ")" : ""),
               textStyle: { fontSize: 13 } },
      tooltip: { trigger: "axis" },
      legend: { top: 24 },
      grid: { top: 60 },
      xAxis: { type: "category", data: labels, name: binAxis(d) },
      yAxis: { type: "value", name: "accesses" },
      series: d.timeline.threads.map(function (t) {
        return { name: "thread " + t.tid, type: "bar", stack: "all", data: t.accesses };
      })
    });
    table(s, [
      { title: "tid", value: function (t) { return t.tid; } },
      { title: "events", value: function (t) { return t.events; } },
      { title: "accesses", value: function (t) { return t.accesses; } }
    ], d.threads);
    s.appendChild(el("h3", {}, "Objects several threads touch"));
    table(s, [
      { title: "accesses", value: function (o) { return o.accesses; } },
      { title: "threads", value: function (o) { return o.threads; } },
      { title: "writers", value: function (o) { return o.writers; } },
      { title: "object", name: true, value: function (o) { return o.name; } }
    ], d.objects.filter(function (o) { return o.threads > 1; }).slice(0, 50));
  }

  try {
    var d = JSON.parse(document.getElementById("memtap-data").textContent);
    var labels = binLabels(d);
    summary(d);
    objects(d);
    instructions(d);
    chunks(d);
    timeline(d, labels);
    heapSection(d, labels);
    heatmaps(d, labels);
    threads(d, labels);
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
  document.body.dataset.ready = "1";
})();
