// The dashboard's panel "Who pays for threads here" in Debian's chromium
// (through playwright-core), against a live threadwatchd fed by
// threadwatch-observer: each named workload is a row whose name is text (a
// process named <i id=twx> creates no element), the table's columns are the
// catalogue's workload figures, the chart draws the dearest workloads, the
// panel takes the next window without a reload, axe-core finds nothing and
// the console stays clean. Saves a screenshot.
//
// usage: node workloads.test.js --url URL --names 'NAME|NAME' --out DIR
'use strict';

const fs = require('fs');
const path = require('path');
const { check, counts, withChromium } = require('./harness');

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.url || !args.names || !args.out) {
  console.error("usage: node workloads.test.js --url URL --names 'NAME|NAME' --out DIR");
  process.exit(2);
}
const NAMES = args.names.split('|');
fs.mkdirSync(args.out, { recursive: true });

async function axeViolations(page) {
  // Through the DevTools protocol: the page's CSP refuses an injected <script>.
  await page.evaluate(fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => ({ id: v.id, n: v.nodes.length, nodes: v.nodes.slice(0, 3).map((x) => x.target.join(' ')) }));
  });
}

(async () => {
  await withChromium([], async (browser) => {
    const page = await browser.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(args.url);
    const shown = await page.waitForFunction((names) => {
      const rows = [...document.querySelectorAll('#workloads tbody th .wl-name')].map((e) => e.textContent);
      return !document.getElementById('workloads-box').hidden && names.every((n) => rows.includes(n));
    }, NAMES, { timeout: 30000 }).then(() => true, () => false);
    const rows = await page.$$eval('#workloads tbody th .wl-name', (es) => es.map((e) => e.textContent));
    check(shown, `the panel lists ${NAMES.join(' and ')} by name`, rows);
    check(await page.evaluate(() => document.getElementById('twx') === null),
      'a process named <i id=twx> creates no element');
    const heads = await page.$$eval('#workloads thead th', (es) => es.map((e) => e.textContent));
    const catalogue = await page.evaluate(async () => (await (await fetch('/api/v1/catalog')).json()).workload_metrics.map((m) => m.label));
    check(catalogue.every((l) => heads.includes(l)), 'the columns are the catalogue\'s workload figures', { heads, catalogue });
    const drawn = await page.evaluate(() => {
      const g = window.twCharts.workloads;
      return g ? g.getLabels().length - 1 : 0;
    });
    check(drawn >= 1, 'the chart draws the dearest workloads over time', drawn);
    // the next window comes in without a reload: the page's own poll (a
    // top-level function of app.js, run here rather than waited for, since
    // it runs every minute) takes it from the status
    // (the window's end the page holds, state.workloadsEnd, moves on, and
    // the table is drawn anew: its first row is another element)
    const first = await page.evaluate(() => {
      document.querySelector('#workloads tbody tr').dataset.old = '1';
      return state.workloadsEnd;
    });
    let moved = false;
    for (let i = 0; i < 30 && !moved; i++) {
      await page.waitForTimeout(1000);
      await page.evaluate(() => poll());
      moved = await page.evaluate((t) => state.workloadsEnd !== t &&
        !document.querySelector('#workloads tbody tr').dataset.old, first);
    }
    check(moved, "the panel takes the next window without a reload (the page's poll)", first);
    const v = await axeViolations(page);
    check(v.length === 0, 'axe-core finds no violation with the panel shown', v);
    await page.locator('#workloads-box').screenshot({ path: path.join(args.out, 'dashboard-workloads.png') });
    check(errors.length === 0, 'no console errors', errors);
    await page.close();
  });
  console.log(`browser: ${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed ? 1 : 0);
})();
