// Drives Debian's chromium (through playwright-core, which never downloads
// a browser of its own) against real threadwatchd daemons and checks the
// dashboard: the recommendation sentence and break-even, that every chart
// drew what the API holds (read from the dygraph objects, not from
// pixels), the knee, host-change and regression-event marks, the events
// list, the runs table with the failed
// run's reason, the range selector, the headroom warning, the empty, 503 and
// unreachable states, the weight, and that nothing logs a console error.
// Saves screenshots for people to look at.
//
// A database with exactly one cycle (the first hour of a new host): every
// chart draws its single point visibly (dygraphs drawPoints).
//
// usage: node dashboard.test.js --url URL --empty-url URL --one-url URL --out DIR
'use strict';

const fs = require('fs');
const path = require('path');
const { check, counts, withChromium } = require('./harness');

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const URL_FULL = args.url;
const URL_EMPTY = args['empty-url'];
const URL_ONE = args['one-url'];
const URL_LIVE = args['live-url'];
/* The runs of the live host's first cycle: one per built-in probe. */
const LIVE_RUNS = Number(args['live-runs'] || 3);
const OUT = args.out;
if (!URL_FULL || !URL_EMPTY || !URL_ONE || !OUT) {
  console.error('usage: node dashboard.test.js --url URL --empty-url URL --one-url URL --out DIR');
  process.exit(2);
}
fs.mkdirSync(OUT, { recursive: true });

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const RUNS_PAGE = 30;
const WEIGHT_LIMIT = 200 * 1024;


async function apiGet(base, p) {
  const r = await fetch(new URL('/api/v1' + p, base));
  if (!r.ok) throw new Error(`GET ${p}: ${r.status}`);
  return r.json();
}

/* Whole numbers as the page writes them (web/app.js fmtNum). */
const fmtInt = (v) => (Math.abs(v) >= 1e4 ? Math.round(v).toLocaleString('en-US') : v.toFixed(0));

/* A page that records console errors, page errors, every request and the
 * bytes it received (as sent, i.e. compressed). The browser is one
 * persistent context on a fresh profile, so each page sets its own
 * viewport and colour scheme. */
async function newPage(browser, opts) {
  opts = opts || {};
  const page = await browser.newPage();
  await page.setViewportSize(opts.viewport || DESKTOP);
  await page.emulateMedia({ colorScheme: opts.colorScheme || 'light' });
  const rec = { errors: [], requests: [], bytes: 0, libBytes: 0, pending: [] };
  page.on('console', (m) => { if (m.type() === 'error') rec.errors.push(m.text()); });
  page.on('pageerror', (e) => rec.errors.push(String(e)));
  page.on('request', (r) => rec.requests.push(r.url()));
  page.on('requestfinished', (r) => rec.pending.push(r.sizes().then((s) => {
    if (new URL(r.url()).pathname.startsWith('/dygraphs/')) rec.libBytes += s.responseBodySize;
    else rec.bytes += s.responseBodySize;
  }).catch(() => {})));
  return { page, rec };
}

async function waitState(page, want) {
  await page.waitForFunction((w) => w.includes(document.body.dataset.state), want, { timeout: 20000 })
    .catch(() => {});
  return page.evaluate(() => document.body.dataset.state);
}

/* A chart's rows as plain data via getValue (Dates as ms), its labels and
 * the marks the page put on it. */
function chartData(page, id) {
  return page.evaluate((id) => {
    const g = window.twCharts[id];
    if (!g) return null;
    const rows = [];
    for (let r = 0; r < g.numRows(); r++) {
      const row = [];
      for (let c = 0; c < g.numColumns(); c++) {
        const v = g.getValue(r, c);
        row.push(v instanceof Date ? v.getTime() : v);
      }
      rows.push(row);
    }
    return { rows, labels: g.getLabels(), marks: g.twMarks || [] };
  }, id);
}

const seriesRequests = (rec) => rec.requests.filter((u) => u.includes('/api/v1/series?'));

async function checkFirstScreen(page) {
  const rec = await apiGet(URL_FULL, '/recommendation');
  const sentence = (await page.textContent('#rec-sentence')).trim();
  check(sentence === rec.sentence.trim() && sentence.length > 20, 'the recommendation sentence is the API\'s',
    { page: sentence, api: rec.sentence });
  const recFacts = await page.textContent('#rec-facts');
  const be = rec.figures.break_even_switches;
  check(be != null && recFacts.includes(`Break-even${fmtInt(be)} context switches`), 'the break-even is shown',
    { be, recFacts });
  check((await page.textContent('#rec-confidence')).includes(rec.confidence), 'the confidence is shown');
  check(/expected threads \(workload_threads in threadwatchd\.conf\)/.test(recFacts),
    'the expected thread count says which setting it comes from', recFacts);
  /* What a thread costs: each cost's finding, and the cause and fix of each
   * that is a problem, as the API gives them. */
  check(rec.costs && rec.costs.problems.includes('handoff'), 'the seeded host has a hand-off problem', rec.costs);
  /* the create rates are different measures, each named: the card's is
   * createscale's create and join, the chart's the threads probe's kept
   * threads */
  const createCost = await page.textContent('[data-cost="create"]');
  const createsCap = await page.textContent('#cap-creates');
  check(/the createscale probe: create and join/.test(createCost) && /threads kept alive/.test(createsCap) &&
    /createscale/.test(createsCap), 'each create rate says what it measures and which probe', [createCost, createsCap]);
  check(await page.isVisible('#costs-card'), 'the costs card is shown');
  for (const k of ['create', 'creators', 'handoff', 'memory']) {
    const c = rec.costs[k];
    const item = await page.textContent(`#costs-list li[data-cost="${k}"]`);
    check(item.includes(c.finding), `the ${k} cost's finding is shown`, { item, finding: c.finding });
    check(item.includes('a problem') === !!c.problem, `the ${k} cost is marked a problem only when it is one`, item);
    if (c.fix) check(item.includes(`Fix: ${c.fix}.`) && item.includes(`Cause: ${c.cause}.`),
      `the ${k} cost's cause and fix are shown`, item);
  }
  const host = await apiGet(URL_FULL, '/host');
  const fp = host.current.fingerprint;
  const hostText = await page.textContent('#host-facts');
  for (const [k, v] of [['name', fp.hostname], ['kernel', fp.kernel], ['glibc', fp.glibc],
    ['virtualization', fp.virtualization], ['CPU', fp.cpu.model_name]])
    check(hostText.includes(v), `the host card shows the ${k}`, { v, hostText });
  check(hostText.includes(`FSGSBASE${fp.cpu.fsgsbase ? 'yes' : 'no'}`), 'the host card shows FSGSBASE', hostText);
  const status = await apiGet(URL_FULL, '/status');
  const cycleText = await page.textContent('#cycle-facts');
  check(/Last cycle\d{4}-/.test(cycleText) && cycleText.includes(status.last_cycle.status) &&
    /Next due\d{4}-/.test(cycleText), 'the last cycle, its status and the next one are shown', cycleText);
  const head = await apiGet(URL_FULL, '/headroom');
  check(head.warnings.length > 0 && await page.isVisible('#headroom-card') &&
    (await page.textContent('#headroom-list')).includes('pids.max'), 'the headroom warning is shown',
  head.warnings);
  return host;
}

/* The newest series request the page made for `like`, asked again for
 * `metric` (the ctxsw chart asks for its CI bounds alone, and for the
 * medians as the history charts do, but in its own buckets). */
async function sameQuery(rec, like, metric) {
  const u = new URL(seriesRequests(rec).filter((r) => new URL(r).searchParams.get('metric') === like).pop());
  u.searchParams.set('metric', metric || like);
  return (await fetch(u)).json();
}

async function checkCharts(page, rec, host) {
  // Creates/s for the three policies: the latest threads run's points, log y, the knee marked.
  const tlist = await apiGet(URL_FULL, '/runs?probe=threads&status=ok&limit=1');
  const tdoc = (await apiGet(URL_FULL, `/runs/${tlist.runs[0].id}`)).doc;
  const creates = await chartData(page, 'creates');
  const low = tdoc.series.low_rate.points;
  const li = creates ? creates.labels.indexOf('low') : -1;
  check(creates && creates.rows.length === low.length && creates.labels.join() === 'live threads,default,low,high',
    'the creates chart has a row per bucket and the three policies', creates && [creates.rows.length, low.length, creates.labels]);
  check(creates && low.every((p, i) => creates.rows[i][0] === p[0] && creates.rows[i][li] === p[1]),
    'the creates chart holds the low policy\'s rates as stored');
  check(await page.evaluate(() => window.twCharts.creates.getOption('logscale') === false), 'the creates chart has a linear y axis by default');
  await page.click('#legend-creates button.log-toggle');
  check(await page.evaluate(() => window.twCharts.creates.getOption('logscale') === true), 'its log toggle makes the y axis log');
  await page.click('#legend-creates button.log-toggle');
  check(await page.evaluate(() => window.twCharts.creates.getOption('logscale') === false), 'and back to linear');
  const knee = tdoc.scalars.low_knee ? tdoc.scalars.low_knee.value : null;
  const ann = await page.evaluate(() => window.twCharts.creates.annotations().map((a) => ({ series: a.series, x: Number(a.x) })));
  check(knee != null && ann.some((a) => a.series === 'low' && a.x === knee) && creates.marks.some((m) => m.x === knee),
    'the low policy\'s knee is marked', { knee, ann });
  check((await page.textContent('#cap-creates')).includes(`knee (K) at ${fmtInt(knee)} threads`), 'the creates caption names the knee');

  // map32: two ladders, each against its own x axis, log-log; the classes in the caption.
  const mlist = await apiGet(URL_FULL, '/runs?probe=map32&status=ok&limit=1');
  const mdoc = (await apiGet(URL_FULL, `/runs/${mlist.runs[0].id}`)).doc;
  const map32 = await chartData(page, 'map32'), map32r = await chartData(page, 'map32retry');
  const fail = mdoc.series.fail_median_ns.points, retry = mdoc.series.retry_median_ns.points;
  const plain = mdoc.series.plain_median_ns.points;
  check(map32 && map32.rows.length === fail.length && map32.labels.length === 2 &&
    fail.every((p, i) => map32.rows[i][0] === p[0] && map32.rows[i][1] === p[1]),
  'the map32 fail chart holds the failing-call medians as stored', map32 && map32.rows.length);
  check(map32r && map32r.rows.length === retry.length && map32r.labels.length === 3 &&
    retry.every((p, i) => map32r.rows[i][0] === p[0] && map32r.rows[i][1] === p[1] && map32r.rows[i][2] === plain[i][1]),
  'the map32 retry chart holds the retry and plain medians as stored', map32r && map32r.rows.length);
  check(await page.evaluate(() => ['map32', 'map32retry'].every((id) => window.twCharts[id].getOption('logscale') === false &&
    window.twCharts[id].getOptionForAxis('logscale', 'x') === true)), 'both map32 charts have a log x (VMAs) and a linear y by default');
  check(await page.$$eval('#legend-map32 button.log-toggle, #legend-map32retry button.log-toggle', (b) => b.length) === 2,
    'both map32 charts have a log toggle');
  const cap2 = await page.textContent('#cap-map32');
  check(cap2.includes(`window: ${mdoc.info.fail_class}`) && cap2.includes(`VMAs: ${mdoc.info.retry_class}`),
    'the map32 caption gives the class of each ladder', cap2);

  // ctxsw: low and high over time, each with its CI as a band, one row per bucket.
  const ctxsw = await chartData(page, 'ctxsw');
  const lowS = await sameQuery(rec, 'ctxsw.low_ci_lo', 'ctxsw.low_ns'), loS = await sameQuery(rec, 'ctxsw.low_ci_lo');
  const since30 = Date.now() - 30 * 86400e3;
  check(ctxsw && ctxsw.rows.length === lowS.points.length && ctxsw.rows.length > 50 &&
    Math.abs(lowS.since_ms - since30) < 300e3 && Math.abs((lowS.until_ms - lowS.since_ms) / lowS.step_ms - 500) < 5,
  'the ctxsw chart has a row per bucket of the last 30 days, in 500 buckets', ctxsw && [ctxsw.rows.length, lowS.points.length, lowS.step_ms]);
  check(ctxsw && ctxsw.rows.every((r, i) => Array.isArray(r[1]) && Array.isArray(r[2]) &&
    r[1][1] === lowS.points[i].avg && r[1][0] === Math.min(loS.points[i].avg, r[1][1]) &&
    r[1][0] <= r[1][1] && r[1][1] <= r[1][2] && r[2][0] <= r[2][1] && r[2][1] <= r[2][2]) &&
    ctxsw.rows.some((r) => r[1][0] < r[1][2]), 'the ctxsw chart draws low and high with CI bands');
  // The segment selector and the A/A control as two more banded
  // arms; the ring of threads of the latest run; the caption says
  // "equivalent within ±2%" exactly when that run's CI lies in [0.98, 1.02].
  check(ctxsw && ctxsw.labels.join('|') === 'time|low stacks|high stacks|segment selector|A/A (high again)' &&
    ctxsw.rows.every((r) => [3, 4].every((c) => Array.isArray(r[c]) && r[c][0] <= r[c][1] && r[c][1] <= r[c][2])),
  'the ctxsw chart draws the selector and A/A arms with CI bands', ctxsw && ctxsw.labels);
  const clist = await apiGet(URL_FULL, '/runs?probe=ctxsw&status=ok&limit=1');
  const cdoc = (await apiGet(URL_FULL, `/runs/${clist.runs[0].id}`)).doc;
  const ring = await chartData(page, 'ring'), ringPts = cdoc.series.ring_ns.points;
  check(ring && ring.rows.length === ringPts.length && ring.labels.length === 3 &&
    ringPts.every((p, i) => ring.rows[i][0] === p[0] && ring.rows[i][1] === p[1] &&
      ring.rows[i][2] === cdoc.series.ring_selector_ns.points[i][1]) &&
    [2, 8, 64].every((n) => ring.rows.some((r) => r[0] === n)),
  'the ring chart holds the ring series of the latest ctxsw run', ring && ring.rows);
  // The ring is per hop, and the caption says how many switches a hop took.
  const capRing = await page.textContent('#cap-ring');
  check(capRing.includes('A hop took 1.00 switches at 2 threads, 1.35 switches at 4 threads') &&
    (await page.evaluate(() => window.twCharts.ring.getOption('ylabel'))) === 'ns per hop',
  'the ring chart is per hop and its caption counts the switches per hop', capRing);
  const capRatios = await page.textContent('#cap-ctxsw-latest');
  const equiv = cdoc.scalars.equivalent.value === 1;
  check(capRatios.includes('equivalent within ±2%') && capRatios.includes('not shown equivalent') === !equiv &&
    capRatios.includes('the 32-bit segment path would cost +1.2% here') && capRatios.includes('unbiased') &&
    capRatios.includes('segment selector/high in a child (its control) 1.012 [1.006, 1.018]'),
  'the context-switch caption says equivalent only when the CI is inside the margin', { equiv, capRatios });

  // History: every key figure drawn, each with the fingerprint change marked.
  const change = host.history.find((h) => h.diff);
  const hist = await page.evaluate(() => Object.keys(window.twCharts).filter((k) => k.startsWith('history-'))
    .map((k) => ({ k, n: window.twCharts[k].numRows(), marks: window.twCharts[k].twMarks })));
  // One history chart per catalogue metric with a dashboard label.
  const labelled = (await apiGet(URL_FULL, '/catalog')).metrics.filter((m) => m.label).length;
  check(labelled >= 6 && hist.length === labelled && hist.every((h) => h.n > 50),
    'every history chart has drawn data', hist.map((h) => [h.k, h.n]));
  check(change && hist.every((h) => h.marks.some((m) => m.x === change.first_seen_ms && m.diff === change.diff)) &&
    ctxsw.marks.some((m) => m.x === change.first_seen_ms), 'the history and ctxsw charts mark the kernel change',
  { change: change && change.first_seen_ms, marks: hist[0] && hist[0].marks });
  return ctxsw.rows.length;
}

/* The regression events of the last 30 days: listed with their sentence,
 * and each step of a drawn figure marked on its chart at its start. */
async function checkEvents(page) {
  const since = Math.floor((Date.now() - 30 * 86400e3) / 1000);
  const events = (await apiGet(URL_FULL, `/events?limit=100&since=${since}`)).events;
  const items = await page.$$eval('#events-list li[data-id]', (lis) => lis.map((li) => ({
    id: li.dataset.id, text: li.textContent })));
  check(events.length > 0 && items.length === events.length &&
    items.every((it, i) => it.id === String(events[i].id) && it.text.includes(events[i].message)),
  'the events list shows every event of the range with its sentence', [items.length, events.length]);
  check(events.some((e) => e.metric === 'ctxsw.high_ns' && /^kernel /.test(e.fingerprint_diff)),
    'the seeded step is an event that names the kernel change', events.map((e) => [e.metric, e.fingerprint_diff]));
  // Each step carries the badge of the path that found it: the seeded
  // kernel step the fast one, after the host change; a step with no change
  // on the host the slow, sustained one. A verdict flip has none.
  const badges = await page.$$eval('#events-list li[data-id]', (lis) => lis.map((li) => {
    const b = li.querySelector('.badge.path');
    return { path: li.dataset.path, badge: b ? b.textContent : null, title: b ? b.title : null };
  }));
  const wantBadge = { change: 'after a host change', sustained: 'sustained' };
  check(badges.length === events.length && events.every((e, i) => badges[i].path === (e.path || '') &&
    badges[i].badge === (e.kind === 'flip' ? null : wantBadge[e.path]) && (badges[i].badge === null || badges[i].title)),
  'each step shows the badge of the path that found it', badges.map((b, i) => [events[i].kind, events[i].path, b.badge]));
  check(events.some((e) => e.path === 'change' && /^after the kernel upgrade to /.test(e.headline) &&
    e.metric === 'ctxsw.high_ns'),
  'the seeded kernel step is found on the fast path, "after the kernel upgrade to ..."',
  events.map((e) => [e.path, e.headline]));
  const marked = await page.evaluate(() => Object.fromEntries(Object.entries(window.twCharts)
    .map(([k, g]) => [k, (g.twEvents || []).map((m) => m.x)])));
  const want = (metrics) => events.filter((e) => metrics.includes(e.metric)).map((e) => e.t_ms).sort();
  check(JSON.stringify(marked['history-ctxsw.high_ns'].sort()) === JSON.stringify(want(['ctxsw.high_ns'])) &&
    JSON.stringify(marked.ctxsw.sort()) === JSON.stringify(want(['ctxsw.low_ns', 'ctxsw.high_ns'])) &&
    marked.ctxsw.length > 0, 'the ctxsw and history charts mark the events of their figures', marked);
}

async function checkRuns(page) {
  const since = Math.floor((Date.now() - 30 * 86400e3) / 1000);
  const runs = (await apiGet(URL_FULL, `/runs?limit=${RUNS_PAGE}&since=${since}`)).runs;
  const rows = await page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => ({
    id: tr.dataset.id, cls: tr.className, cells: [...tr.cells].map((c) => c.textContent) })));
  check(runs.length === RUNS_PAGE && rows.length === runs.length &&
    rows.every((r, i) => r.id === String(runs[i].id) && r.cells[1] === runs[i].probe && r.cells[2] === runs[i].status),
  'the runs table lists the newest runs with probe and status', [rows.length, runs.length]);
  check(rows.filter((r) => r.cells[2] === 'ok').every((r) => /: \S/.test(r.cells[4])), 'each ok run shows its key figure');
  const bad = (await apiGet(URL_FULL, '/runs?status=error&limit=5')).runs[0];
  const row = bad && rows.find((r) => r.id === String(bad.id));
  check(row && row.cls.includes('error') && row.cells[4] === bad.reason, 'the failed run shows its reason', { bad, row });
  if (!row) return;
  await page.click(`#runs tbody tr[data-id="${bad.id}"]`);
  await page.waitForFunction(() => document.querySelector('#run-dialog').open &&
    document.querySelector('#run-json').textContent.startsWith('{'));
  const raw = JSON.parse(await page.textContent('#run-json'));
  check(raw.id === bad.id && raw.status === 'error' && raw.reason === bad.reason &&
    (await page.textContent('#run-facts')).includes(bad.reason), 'clicking the failed run opens its details and raw JSON');
  await page.keyboard.press('Escape');
  /* an ok run says what its figures were measured under */
  const good = rows.find((r) => r.cells[2] === 'ok');
  await page.click(`#runs tbody tr[data-id="${good.id}"]`);
  await page.waitForFunction((id) => document.querySelector('#run-dialog').open &&
    document.querySelector('#run-title').textContent.startsWith(`Run ${id}:`), good.id);
  const runFacts = await page.textContent('#run-facts');
  check(runFacts.includes('Ran atSCHED_IDLE, nice 10, CPU 1'), 'a run shows the policy, nice and CPU it ran at', runFacts);
  await page.screenshot({ path: path.join(OUT, 'dashboard-run-dialog.png') });
  await page.keyboard.press('Escape');
}

/* Memory per idle thread in one unit everywhere: the
 * cost card, its history chart's title, ticks and plotted values, and the
 * runs table's key figure. The metric's name holds a dot
 * (stackmem.glibc_bytes_per_thread), which a CSS selector built from it
 * would read as a class. */
async function checkMemoryUnit(page, rec) {
  const METRIC = 'stackmem.glibc_bytes_per_thread';
  const UNITS = { bytes: 1, KiB: 1024, MiB: 2 ** 20, GiB: 2 ** 30 };
  const card = await page.textContent('[data-cost="memory"]');
  const cardUnit = (/keeps [\d.,]+ (bytes|KiB|MiB|GiB)\b/.exec(card) || [])[1];
  const chart = await page.evaluate((m) => {
    const d = document.getElementById(`chart-history-${m}`), g = window.twCharts[`history-${m}`];
    return {
      title: d && d.previousElementSibling.textContent,
      ticks: d ? [...d.querySelectorAll('.dygraph-axis-label-y')].map((e) => e.textContent) : [],
      avgs: g ? Array.from({ length: g.numRows() }, (_, r) => g.getValue(r, 1)[1]) : [],
    };
  }, METRIC);
  const chartUnit = (/\((bytes|KiB|MiB|GiB)\)$/.exec(chart.title || '') || [])[1];
  const runs = await page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  const row = runs.find((c) => c[1] === 'stackmem' && c[2] === 'ok');
  const runsUnit = row && (/^Memory per idle thread: [\d.,]+ (bytes|KiB|MiB|GiB)$/.exec(row[4]) || [])[1];
  check(cardUnit && cardUnit === chartUnit && chartUnit === runsUnit,
    'memory per idle thread shows one unit on the card, its chart\'s title and the runs table',
    { card, title: chart.title, run: row && row[4] });
  /* the ticks are plain numbers in that unit (no "7.5k" of bytes), and the
   * chart plots the API's medians divided by it */
  const api = await sameQuery(rec, METRIC);
  const div = UNITS[chartUnit] || NaN;
  check(chart.ticks.length >= 2 && chart.ticks.every((t) => /^-?[\d.]+$/.test(t)),
    'the memory chart\'s ticks are plain numbers in the title\'s unit', chart.ticks);
  check(api.points.length === chart.avgs.length && api.points.length > 0 &&
    api.points.every((p, i) => Math.abs(p.avg / div - chart.avgs[i]) <= 1e-9 * Math.abs(p.avg)),
  'the memory chart plots the API\'s figures in the title\'s unit', { unit: chartUnit, first: [api.points[0], chart.avgs[0]] });
}

async function checkRange(page, rec, n30) {
  const before = seriesRequests(rec).length;
  await page.click('#range button[data-range="7d"]');
  await page.waitForFunction((n) => window.twCharts.ctxsw.numRows() !== n, n30, { timeout: 10000 }).catch(() => {});
  // Low, high, selector and A/A with their CI bounds (12 series), and one
  // per history chart (the catalogue's labelled metrics).
  const nSeries = 12 + (await apiGet(URL_FULL, '/catalog')).metrics.filter((m) => m.label).length;
  const asked = seriesRequests(rec).slice(before);
  const n7 = await page.evaluate(() => window.twCharts.ctxsw.numRows());
  const since7 = (Date.now() - 7 * 86400e3) / 1000;
  check(asked.length === nSeries && asked.every((u) => Math.abs(Number(new URL(u).searchParams.get('since')) - since7) < 300),
    'the 7 d range asks the series endpoint again for the last 7 days', asked.slice(0, 2));
  check(n7 > 0 && n7 < n30 / 3, 'the 7 d range draws fewer points than 30 d', [n7, n30]);
  const runRows = await page.$$eval('#runs tbody tr[data-id]', (trs) => trs.length);
  check(runRows === RUNS_PAGE, 'the runs table reloads for the range', runRows);

  const host = await apiGet(URL_FULL, '/host');
  const oldest = host.history[host.history.length - 1].first_seen_ms;
  const mark = seriesRequests(rec).length;
  await page.click('#range button[data-range="all"]');
  await page.waitForFunction((n) => window.twCharts.ctxsw.numRows() !== n, n7, { timeout: 10000 }).catch(() => {});
  const all = seriesRequests(rec).slice(mark);
  check(all.length === nSeries && all.every((u) => Number(new URL(u).searchParams.get('since')) === Math.floor(oldest / 1000)) &&
    await page.evaluate(() => window.twCharts.ctxsw.numRows()) >= n30,
  'the all range asks from the first fingerprint on', all.slice(0, 1));
  await page.click('#range button[data-range="30d"]');
  await page.waitForFunction((n) => window.twCharts.ctxsw.numRows() === n, n30, { timeout: 10000 }).catch(() => {});
}

/* Every chart with more than one line shows a legend of its own, without
 * hovering: visible, inside the page's width, naming every line. */
async function checkLegends(page, what) {
  await page.mouse.move(0, 0);
  const bad = await page.evaluate(() => Object.entries(window.twCharts).filter(([, g]) => g.getLabels().length > 2)
    .map(([id, g]) => {
      const box = document.getElementById(`legend-${id}`), r = box && box.getBoundingClientRect();
      const text = box ? box.textContent : '';
      const ok = box && r.width > 0 && r.height > 0 && r.right <= document.documentElement.clientWidth &&
        getComputedStyle(box).visibility === 'visible' && g.getLabels().slice(1).every((l) => text.includes(l));
      return ok ? null : { id, text };
    }).filter(Boolean));
  const n = await page.evaluate(() => Object.values(window.twCharts).filter((g) => g.getLabels().length > 2).length);
  check(n >= 3 && bad.length === 0, `every multi-line chart (${n}) shows a legend naming its lines ${what}`, bad);
}

async function testFull(browser) {
  const { page, rec } = await newPage(browser);
  await page.goto(URL_FULL);
  check(await waitState(page, ['ready', 'empty', 'unreachable', 'error-503']) === 'ready', 'the seeded dashboard is ready');
  const host = await checkFirstScreen(page);
  const n30 = await checkCharts(page, rec, host);
  await checkLegends(page, 'at desktop width');
  await page.screenshot({ path: path.join(OUT, 'dashboard-desktop.png'), fullPage: true });
  await checkEvents(page);
  await checkRuns(page);
  await checkMemoryUnit(page, rec);
  await Promise.all(rec.pending);
  check(rec.bytes > 0 && rec.bytes < WEIGHT_LIMIT, `everything but the chart library weighs under 200 KB (${rec.bytes} bytes; dygraphs ${rec.libBytes})`);
  await checkRange(page, rec, n30);
  /* the API refuses a range that starts in the future; the page, whose
   * ranges end now, never asks for one */
  const future = rec.requests.filter((u) => {
    const since = new URL(u).searchParams.get('since');
    return since != null && Number(since) * 1000 > Date.now();
  });
  check(rec.requests.some((u) => new URL(u).searchParams.has('since')) && future.length === 0,
    'the page never asks for a since in the future', future);
  await checkAxe(page, 'on the seeded dashboard');
  const axes = await page.evaluate(() => Object.keys(window.twCharts).map((k) => {
    const d = document.getElementById(`chart-${k}`);
    const lab = (cls) => [...d.querySelectorAll(cls)].map((e) => e.textContent);
    return { k, y: lab('.dygraph-axis-label-y'), x: lab('.dygraph-axis-label-x') };
  }));
  check(axes.every((a) => new Set(a.y).size === a.y.length), 'no chart repeats a y-axis label',
    axes.filter((a) => new Set(a.y).size !== a.y.length));
  check(axes.every((a) => a.y.length >= 2), 'every chart has at least two y ticks', axes.filter((a) => a.y.length < 2));
  const ring = axes.find((a) => a.k === 'ring');
  check(ring && ring.x.length >= 3 && ring.x.every((t) => [2, 4, 8, 16, 32, 64].includes(+t)),
    'the ring\'s x ticks are the ring sizes, powers of two', ring && ring.x);
  const ringCap = await page.textContent('#cap-ring');
  check(!/ratio|A\/A/.test(ringCap) && /high stacks \S+ ns at 2 threads/.test(ringCap),
    'the ring\'s caption speaks of the lines it draws only', ringCap);
  const verdict = (await apiGet(URL_FULL, '/recommendation')).verdict;
  const action = await page.textContent('#rec-action');
  const chip = await page.evaluate(() => ({ cls: document.querySelector('#rec-verdict').className,
    color: getComputedStyle(document.querySelector('#rec-verdict')).color,
    high: getComputedStyle(document.documentElement).getPropertyValue('--c-high').trim() }));
  check(verdict === 'high' ? action.startsWith('Nothing to change: keep glibc') : action.startsWith('Change:'),
    'the recommendation leads with the action in plain words', [verdict, action]);
  check(verdict !== 'high' || chip.cls.includes('keep'), 'the benign default\'s chip is not the warning colour', chip);
  const alts = await page.evaluate(() => Object.keys(window.twCharts).map((k) => {
    const d = document.getElementById(`chart-${k}`);
    return [k, d && d.getAttribute('role'), d && d.getAttribute('aria-label')];
  }));
  check(alts.length >= 9 && alts.every(([, role, label]) => role === 'img' && /\d+ points?, .*: .* to .*, last /.test(label || '')),
    'every chart has a text alternative: role img and a label with each line\'s range and last value',
    alts.filter(([, role, label]) => role !== 'img' || !/ last /.test(label || '')));
  check(rec.errors.length === 0, 'no console errors on the seeded dashboard', rec.errors);
  await page.close();

  const phone = await newPage(browser, { viewport: PHONE });
  await phone.page.goto(URL_FULL);
  check(await waitState(phone.page, ['ready']) === 'ready', 'the dashboard is ready at phone width');
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, 'nothing is wider than a phone screen', overflow);
  // The runs table was cut off on the right (it scrolled inside its box)
  const runsCut = await phone.page.evaluate(() => {
    const w = document.querySelector('#runs-box .table-wrap');
    return w ? w.scrollWidth - w.clientWidth : null;
  });
  check(runsCut !== null && runsCut <= 0, 'the runs table fits a phone screen, nothing cut off', runsCut);
  const widths = await phone.page.evaluate(() => Object.values(window.twCharts).map((g) => g.getArea().w));
  check(widths.length >= 9 && widths.every((w) => w > 200 && w < 390), 'every chart fits the phone width', widths);
  await checkLegends(phone.page, 'at phone width');
  await phone.page.screenshot({ path: path.join(OUT, 'dashboard-phone.png'), fullPage: true });
  check(phone.rec.errors.length === 0, 'no console errors at phone width', phone.rec.errors);
  await phone.page.close();

  const dark = await newPage(browser, { colorScheme: 'dark' });
  await dark.page.goto(URL_FULL);
  await waitState(dark.page, ['ready']);
  const bg = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(bg === 'rgb(15, 18, 23)', 'dark follows prefers-color-scheme', bg);
  await dark.page.screenshot({ path: path.join(OUT, 'dashboard-dark.png') });
  await checkAxe(dark.page, 'in dark mode');
  check(dark.rec.errors.length === 0, 'no console errors in dark mode', dark.rec.errors);
  await dark.page.close();
}

async function testEmpty(browser) {
  const { page, rec } = await newPage(browser);
  await page.goto(URL_EMPTY);
  check(await waitState(page, ['ready', 'empty', 'unreachable', 'error-503']) === 'empty', 'an empty database shows the empty state');
  /* The empty daemon's first cycle waits all day for a load of 0 (60-browser
   * saw the wait in its status before this ran): the page must say so, not
   * "under way". It polls every few seconds while a cycle runs, so a page
   * that loaded before the guard's first reading shows it soon after. */
  const w = (await apiGet(URL_EMPTY, '/status')).waiting_for_quiet_host;
  check(w && w.limit === 0 && w.until_ms > Date.now(), 'the empty daemon waits for a quiet host', w);
  await page.waitForFunction(() => /waits for a quiet host/.test(document.querySelector('#banner strong').textContent),
    null, { timeout: 20000 }).catch(() => {});
  const title = await page.textContent('#banner strong');
  const text = await page.textContent('#banner span');
  check(title === 'No runs yet — the first cycle waits for a quiet host.', 'the empty state says the first cycle waits for a quiet host', title);
  const esc = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pad = (n) => String(n).padStart(2, '0');
  const u = new Date(w ? w.until_ms : 0);
  const until = `${u.getFullYear()}-${pad(u.getMonth() + 1)}-${pad(u.getDate())} ${pad(u.getHours())}:${pad(u.getMinutes())}`;
  check(w && /^Pending: .*ctxsw.*threads.*map32.*; /.test(text) &&
    new RegExp(`; ${esc(w.measure)} is \\d+\\.\\d\\d${esc(w.unit)}, above 0\\.00${esc(w.unit)}; the cycle runs anyway at ${until} \\(in `).test(text),
  'the empty state says what is pending and what it waits for: the measure against its limit, until when', { text, w });
  /* every built-in probe the catalogue lists, not a list written once */
  const probes = await page.evaluate(async () => (await (await fetch('/api/v1/catalog')).json()).probes.map((p) => p.name));
  check(probes.length >= 6 && probes.every((p) => text.includes(`(${p})`)), 'the pending list names every built-in probe', { probes, text });
  check(/Not enough data yet/.test(await page.textContent('#rec-sentence')), 'the empty state says there is not enough data yet');
  await page.screenshot({ path: path.join(OUT, 'dashboard-empty.png') });
  check(rec.errors.length === 0, 'no console errors on an empty database', rec.errors);
  await page.close();
}

/* One cycle: each chart holds what the API has and draws it as points
 * big enough to see, since one or two points make no visible line. */
async function testOneCycle(browser) {
  const { page, rec } = await newPage(browser);
  await page.goto(URL_ONE);
  check(await waitState(page, ['ready', 'empty', 'unreachable', 'error-503']) === 'ready', 'a one-cycle database is ready');
  const status = await apiGet(URL_ONE, '/status');
  check(status.last_cycle && status.last_cycle.id === 1 && status.last_cycle.status === 'ok', 'the database holds exactly one ok cycle', status.last_cycle);
  const labelled = (await apiGet(URL_ONE, '/catalog')).metrics.filter((m) => m.label).length;
  await page.waitForFunction((n) => Object.keys(window.twCharts).filter((k) => k.startsWith('history-')).length === n,
    labelled, { timeout: 20000 }).catch(() => {});
  const charts = await page.evaluate(() => Object.entries(window.twCharts).map(([k, g]) => ({
    k, rows: g.numRows(), points: g.getOption('drawPoints'), size: g.getOption('pointSize'),
    // the drawn points: the canvas coordinates of row 0 of each series, inside the plot area
    inside: (() => {
      const a = g.getArea();
      return g.layout_.points.every((pts) => pts.length > 0 && pts.every((p) =>
        isFinite(p.canvasx) && isFinite(p.canvasy) && p.canvasx >= a.x - 1 && p.canvasx <= a.x + a.w + 1 &&
        p.canvasy >= a.y - 1 && p.canvasy <= a.y + a.h + 1));
    })(),
  })));
  const names = charts.map((c) => c.k).sort();
  check(['creates', 'ctxsw', 'map32'].every((k) => names.includes(k)) && names.filter((k) => k.startsWith('history-')).length === labelled,
    'every chart is drawn on a one-cycle database', names);
  const few = charts.filter((c) => c.rows <= 2);
  check(charts.find((c) => c.k === 'ctxsw').rows === 1 && few.length >= 7, 'the ctxsw and history charts have one row each',
    charts.map((c) => [c.k, c.rows]));
  check(few.every((c) => c.points === true && c.size >= 3), 'charts of one or two rows draw visible points',
    few.map((c) => [c.k, c.points, c.size]));
  check(charts.every((c) => c.inside), 'every point lies inside its plot area', charts.filter((c) => !c.inside).map((c) => c.k));
  const lone = await page.evaluate(() => Object.entries(window.twCharts).filter(([, g]) => g.numRows() === 1)
    .map(([k, g]) => { const a = g.getArea(), x = g.layout_.points[0][0].canvasx; return [k, (x - a.x) / a.w]; }));
  check(lone.length >= 7 && lone.every(([, f]) => f > 0.25 && f < 0.75), 'a lone point sits in the middle of its chart, not on the edge', lone);
  // The point's x as drawn (canvas back to time) is the run's time, not the
  // start of a 30-day view's bucket hours earlier.
  const runs = (await apiGet(URL_ONE, '/runs?limit=10')).runs;
  const xs = await page.evaluate(() => Object.entries(window.twCharts).filter(([k]) => k.startsWith('history-') || k === 'ctxsw')
    .map(([k, g]) => [k, Math.round(g.toDataXCoord(g.layout_.points[0][0].canvasx))]));
  const near = ([k, x]) => runs.some((r) => k.slice(k.startsWith('history-') ? 8 : 0).startsWith(r.probe) && Math.abs(x - r.started_ms) < 60000);
  check(xs.length >= 7 && xs.every(near), 'each history point is drawn at its run\'s time, within a minute',
    xs.map(([k, x]) => [k, new Date(x).toISOString()]).concat(runs.map((r) => [r.probe, new Date(r.started_ms).toISOString()])));
  const text = await page.textContent('#cycle-facts');
  check(/Status.*ok/.test(text), 'the cycle card shows the one cycle as ok', text);
  const notes = await page.$$eval('#chart-history p.note', (ps) => ps.map((p) => p.textContent));
  check(notes.length >= 7 && notes.every((t) => /^One run so far: the history starts with the (next cycle|cycle running now)/.test(t)),
    'each one-point history says when its history starts', notes);
  /* one run draws no band: the caption does not speak of bands it lacks;
   * the y ticks are whole ns with grouped digits, clear of the axis title */
  const capCtxsw = await page.textContent('#cap-ctxsw');
  check(/one run so far/.test(capCtxsw) && !/bands are/.test(capCtxsw), 'the one-run ctxsw caption speaks of no bands', capCtxsw);
  const ticks = await page.$$eval('#chart-ctxsw .dygraph-axis-label-y', (ls) => ls.map((l) => l.textContent));
  const ytitle = await page.evaluate(() => {
    const t = document.querySelector('#chart-ctxsw .dygraph-ylabel'), l = [...document.querySelectorAll('#chart-ctxsw .dygraph-axis-label-y')];
    if (!t || !l.length) return null;
    /* the text's own extent: a label's box is the whole gutter, its text
     * right-aligned in it */
    const text = (e) => { const r = document.createRange(); r.selectNodeContents(e); return r.getBoundingClientRect(); };
    const tt = text(t);
    return { ok: l.every((x) => text(x).left >= tt.right - 1), title: [tt.left, tt.right],
      ticks: l.map((x) => [text(x).left, text(x).right]) };
  });
  check(ticks.length > 0 && ticks.every((t) => /^[\d,]+$/.test(t)) && ytitle && ytitle.ok,
    'the ctxsw y ticks read as whole ns and clear the axis title', { ticks, ytitle });
  await page.screenshot({ path: path.join(OUT, 'dashboard-one-cycle.png'), fullPage: true });
  check(rec.errors.length === 0, 'no console errors on a one-cycle database', rec.errors);
  await page.close();
}

/* The seeded host with its latest ctxsw run crashed, as the API says it
 * (failed_probes in the recommendation; no ctxsw samples in the range):
 * the card and each ctxsw panel name the crash instead of "No ctxsw runs
 * in this range". */
async function testCrashedProbe(browser) {
  const { page, rec } = await newPage(browser);
  const real = await apiGet(URL_FULL, '/recommendation');
  const t = Date.now() - 60000;
  const crashed = Object.assign({}, real, {
    failed_probes: [{ probe: 'ctxsw', status: 'error', kind: 'crash', signal: 'SIGSEGV',
      reason: 'crashed with SIGSEGV', run_id: 999999, t_ms: t }],
    disabled_probes: [],
  });
  await page.route('**/api/v1/recommendation', (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(crashed) }));
  await page.route('**/api/v1/series?metric=ctxsw.*', async (route) => {
    const r = await route.fetch();
    const body = Object.assign(await r.json(), { points: [] });
    route.fulfill({ response: r, body: JSON.stringify(body) });
  });
  await page.goto(URL_FULL);
  await waitState(page, ['ready']);
  const panel = await page.textContent('#chart-ctxsw');
  check(/^The last ctxsw run crashed: SIGSEGV at \S/.test(panel) && !/No ctxsw runs/.test(panel),
    'the Context switches panel says the last ctxsw run crashed with SIGSEGV', panel);
  const ring = await page.textContent('#cap-ring');
  check(/^The last ctxsw run crashed: SIGSEGV at .*Shown: its last ok run\./.test(ring),
    'the ring panel says the last ctxsw run crashed and that it shows the last ok run', ring);
  const card = await page.textContent('#rec-facts');
  check(/Failed probes\s*ctxsw: crashed with SIGSEGV/.test(card), 'the recommendation card names the failed probe', card);
  const creates = await page.textContent('#cap-creates');
  check(!/crashed/.test(creates), 'the threads panel does not blame ctxsw', creates);
  await page.screenshot({ path: path.join(OUT, 'dashboard-crashed-ctxsw.png'), fullPage: true });
  check(rec.errors.length === 0, 'no console errors with a crashed ctxsw', rec.errors);
  await page.close();
}

/* The page from the real daemon with its API answering 503, or not at all. */
async function testFailures(browser) {
  for (const mode of ['503', 'unreachable']) {
    const { page } = await newPage(browser);
    await page.route('**/api/v1/**', (route) => (mode === '503'
      ? route.fulfill({ status: 503, contentType: 'application/json',
        body: JSON.stringify({ error: { status: 503, message: 'store unavailable: database is locked' } }) })
      : route.abort('connectionrefused')));
    await page.goto(URL_FULL);
    const st = await waitState(page, [mode === '503' ? 'error-503' : 'unreachable']);
    const text = await page.textContent('#banner');
    check(st === (mode === '503' ? 'error-503' : 'unreachable') &&
      (mode === '503' ? /503/.test(text) && /database is locked/.test(text) : /not reachable/.test(text)),
    `the ${mode} state is explained`, text);
    await page.screenshot({ path: path.join(OUT, `dashboard-${mode}.png`) });
    await page.close();
  }
}

/* axe-core's audit of the page as it is now (WCAG 2.1 A and AA): every
 * violation, with the nodes it names (zero). */
async function axeViolations(page) {
  // Through the DevTools protocol: the page's CSP (default-src 'self')
  // rightly refuses an injected <script>.
  await page.evaluate(fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, n: v.nodes.length,
      nodes: v.nodes.slice(0, 3).map((x) => x.target.join(' ') + ': ' + (x.failureSummary || '').split('\n')[1]) }));
  });
}

async function checkAxe(page, what) {
  const v = await axeViolations(page);
  check(v.length === 0, `axe-core finds no violation ${what}`, v);
}

/* A new host's first cycle, watched live: the page opened
 * while the cycle runs shows a run before the cycle ends, and all three
 * within 10 s of its end (it polls every few seconds while a cycle runs,
 * not every minute). */
async function testLiveCycle(browser) {
  const { page, rec } = await newPage(browser);
  await page.goto(URL_LIVE);
  const st0 = await apiGet(URL_LIVE, '/status');
  check(st0.cycle_running === true, 'the new host is in its first cycle when the page opens', st0);
  let early = 0, end = null;
  for (let i = 0; i < 600 && end === null; i++) {
    const st = await apiGet(URL_LIVE, '/status');
    const rows = await page.$$eval('#runs tbody tr', (trs) => trs.length);
    if (st.cycle_running && rows > early) early = rows;
    if (!st.cycle_running && st.last_cycle) end = Date.now();
    else await page.waitForTimeout(200);
  }
  check(end !== null, 'the first cycle ended');
  check(early >= 1, 'a probe\'s run shows on the page while its cycle still runs', early);
  const shown = await page.waitForFunction((n) => document.querySelectorAll('#runs tbody tr').length === n, LIVE_RUNS,
    { timeout: 10000 }).then(() => Date.now(), () => null);
  check(shown !== null, `the page shows the cycle's ${LIVE_RUNS} runs within 10 s of its end`,
    shown === null ? 'not after 10 s' : `${shown - end} ms`);
  await page.screenshot({ path: path.join(OUT, 'dashboard-live-first-cycle.png'), fullPage: true });
  check(rec.errors.length === 0, 'no console errors while a first cycle runs', rec.errors);
  await page.close();
}

(async () => {
  await withChromium([], async (browser) => {
    if (URL_LIVE) await testLiveCycle(browser);
    await testFull(browser);
    await testEmpty(browser);
    await testOneCycle(browser);
    await testFailures(browser);
    await testCrashedProbe(browser);
  });
  for (const f of fs.readdirSync(OUT).filter((n) => n.endsWith('.png')).sort())
    console.log(`screenshot: ${path.join(OUT, f)}`);
  console.log(`browser: ${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed ? 1 : 0);
})();
