/*
 * common.js - what the pages of memtap report and memtap cachesim share
 * (inlined before each page's own script, after ECharts): errors listed
 * on the page and in window.memtapErrors, elements, counts grouped by
 * thousands, sections, charts and tables; as window.memtapPage.
 */
(function () {
  "use strict";
  var errors = (window.memtapErrors = []);
  function fail(message) {
    errors.push(String(message));
    var box = document.getElementById("errors");
    box.hidden = false;
    box.textContent = errors.join("\n");
  }
  window.addEventListener("error", function (e) { fail(e.message); });

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* A count with its thousands grouped (1,234,567); text as it is. */
  function num(v) {
    return typeof v === "number" ? v.toLocaleString("en-US") : String(v);
  }

  function section(title, id) {
    var s = el("section", { id: id });
    s.appendChild(el("h2", {}, title));
    document.getElementById("main").appendChild(s);
    return s;
  }

  /* A chart's element in parent (tall: a heatmap's; height: in pixels). */
  function chart(parent, id, tall, height) {
    var div = el("div", { id: id, "class": tall ? "chart tall" : "chart" });
    if (height)
      div.style.height = height + "px";
    parent.appendChild(div);
    return echarts.init(div);
  }

  /* columns: { title, value(row), name: a text column } */
  function table(parent, columns, rows) {
    var wrap = el("div", { "class": "scroll" });
    var t = el("table");
    var head = el("tr");
    columns.forEach(function (c) {
      head.appendChild(el("th", c.name ? { "class": "name" } : {}, c.title));
    });
    t.appendChild(head);
    rows.forEach(function (r) {
      var tr = el("tr");
      columns.forEach(function (c) {
        var v = c.value(r);
        tr.appendChild(el("td", c.name ? { "class": "name" } : {},
                          v === null || v === undefined ? "-" : num(v)));
      });
      t.appendChild(tr);
    });
    wrap.appendChild(t);
    parent.appendChild(wrap);
    return t;
  }

  window.memtapPage = { fail: fail, el: el, num: num, section: section,
                        chart: chart, table: table };
})();
