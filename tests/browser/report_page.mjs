// report_page.mjs - opens a `memtap report --html` page in headless
// Chromium (Debian's /usr/bin/chromium, driven by playwright-core from
// npm/) and prints, as JSON: the console errors and page errors seen, the
// page's data island, and what each ECharts chart holds (series names and
// data, axis labels), read back from the chart instances.
//
// Usage: node report_page.mjs PAGE.html
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../npm/package.json"));
const { chromium } = require("playwright-core");

const page_path = path.resolve(process.argv[2]);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const errors = [];
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("page: " + e.message));
  page.on("requestfailed", (r) => errors.push("request: " + r.url()));
  // offline: any request leaving the file is an error
  await page.route(/^(?!file:)/, (route) => {
    errors.push("network: " + route.request().url());
    return route.abort();
  });
  await page.goto(pathToFileURL(page_path).href);
  await page.waitForSelector("body[data-ready]", { timeout: 30000 });
  const result = await page.evaluate(() => {
    const charts = {};
    document.querySelectorAll("div.chart").forEach((div) => {
      const option = echarts.getInstanceByDom(div).getOption();
      charts[div.id] = {
        series: option.series.map((s) => ({ name: s.name, type: s.type, data: s.data })),
        x: option.xAxis.map((a) => a.data || null),
        y: option.yAxis.map((a) => a.data || null),
        x_names: option.xAxis.map((a) => a.name || null),
      };
    });
    return {
      pageErrors: window.memtapErrors,
      data: JSON.parse(document.getElementById("memtap-data").textContent),
      charts,
      tables: document.querySelectorAll("table").length,
      meta: document.getElementById("meta").textContent,
      heapLine: (document.querySelector("#heap p") || {}).textContent || "",
      headings: [...document.querySelectorAll("h3")].map((h) => h.textContent),
      chartHeights: Object.fromEntries([...document.querySelectorAll("div.chart")]
                                         .map((div) => [div.id, div.clientHeight])),
      incompleteShown: !document.getElementById("incomplete").hidden,
    };
  });
  result.errors = errors.concat(result.pageErrors);
  process.stdout.write(JSON.stringify(result));
} finally {
  await browser.close();
}
