/* The threadwatch dashboard: reads the public JSON API under /api/v1 (see
 * /api/v1/openapi.json) and draws the first screen, five charts with the
 * host's own dygraphs, who pays for threads here (the observer's last
 * window and its history), the regression events (also marked on the charts)
 * and the runs table. The chart objects are exposed as
 * window.twCharts and the page's state as body[data-state] ("ready",
 * "empty", "unreachable", "error-NNN") for the browser test. */
'use strict';

const API = '/api/v1';
const DAY = 86400e3;
const RANGES = { '1d': DAY, '7d': 7 * DAY, '30d': 30 * DAY, all: 0 };
const POLICIES = ['default', 'low', 'high'];
/* The break-even when the recommendation has no number for it, by rule. */
const NO_BREAK_EVEN = {
  no_ctxsw: 'unknown: no context-switch figures yet',
  no_window: 'none: not one stack fits in the MAP_32BIT window',
  no_threads: 'none: the workload has no threads',
  no_benefit: 'none: low stacks save nothing significant per switch, so nothing repays them',
  fits: 'not needed: every expected thread fits in the MAP_32BIT window',
  cost_unknown: 'unknown: the extra create cost is not measured yet',
};
/* What each headroom limit counts. */
const LIMIT_NAMES = {
  threads_max: 'Threads on the host against kernel.threads-max',
  pid_max: 'Threads on the host against kernel.pid_max',
  pids_max: "Tasks in threadwatchd's cgroup against pids.max",
  max_map_count: 'VMAs of the largest process against vm.max_map_count',
};
const RUNS_PAGE = 30;
const POLL_MS = 60e3;
const POLL_RUNNING_MS = 3e3;

const $ = (sel) => document.querySelector(sel);
const charts = {};
window.twCharts = charts;
/* The metric catalogue (/api/v1/catalog): each figure's label and unit. */
const state = { catalog: null, range: '30d', cursor: null, skew: 0, oldest: null, stored: new Set(), status: null, failed: false, loadedOnce: false, events: [] };

class ApiError extends Error {
  constructor(status, message, notYet) {
    super(message);
    this.status = status;
    /* a 503 with Retry-After: the answer comes later (the first cycle) */
    this.notYet = !!notYet;
  }
}

async function api(path, opts) {
  let res, body = null;
  try {
    res = await fetch(API + path, Object.assign({ headers: { Accept: 'application/json' } }, opts));
  } catch (e) {
    throw new ApiError(0, 'threadwatchd is not reachable');
  }
  try {
    body = await res.json();
  } catch (e) {
    body = null;
  }
  if (!res.ok) {
    const msg = body && (body.detail || (body.error && body.error.message)) || res.statusText;
    throw new ApiError(res.status, msg, res.status === 503 && res.headers.has('Retry-After'));
  }
  return body;
}

/* null for "nothing there yet" (404, or 503 with Retry-After), the body
 * otherwise. */
async function apiMaybe(path) {
  try {
    return await api(path);
  } catch (e) {
    if (e.status === 404 || e.notYet) return null;
    throw e;
  }
}

/* --- formatting -------------------------------------------------------- */
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

const pad = (n) => String(n).padStart(2, '0');
const now = () => Date.now() + state.skew;

function fmtTime(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function fmtDuration(s) {
  if (s == null || !isFinite(s)) return '—';
  s = Math.abs(s);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 2 * 86400) {
    /* minutes rounded before the split: 5 h 59.7 min is 6 h, not 5 h 60 min */
    const mins = Math.round(s / 60), h = Math.floor(mins / 60), m = mins % 60;
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  return `${Math.round(s / 86400)} days`;
}

function fmtRel(ms) {
  const d = (ms - now()) / 1000;
  if (Math.abs(d) < 30) return 'now';
  return d < 0 ? `${fmtDuration(-d)} ago` : `in ${fmtDuration(d)}`;
}

const fmtWhen = (ms) => (ms ? `${fmtTime(ms)} (${fmtRel(ms)})` : '—');

function fmtNum(v, digits) {
  if (v == null || !isFinite(v)) return '—';
  const a = Math.abs(v);
  if (digits == null) digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  if (a >= 1e4) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(digits);
}

function fmtUnit(v, unit) {
  if (v == null || !isFinite(v)) return '—';
  switch (unit) {
    case 'ns':
      if (v >= 1e6) return `${fmtNum(v / 1e6)} ms`;
      return v >= 1e4 ? `${fmtNum(v / 1e3)} µs` : `${fmtNum(v)} ns`;
    case 'per_s': return `${fmtNum(v)}/s`;
    case 'ratio': return fmtNum(v, 3);
    case 'share': return `${fmtNum(v * 100)}%`;
    case 'bytes': {
      const [div, name] = bytesScale(v);
      return `${fmtNum(v / div)} ${name}`;
    }
    case 'bool': return v ? 'yes' : 'no';
    case 's': return fmtDuration(v);
    case 'count': return fmtNum(v);
    default: return unit ? `${fmtNum(v)} ${unit}` : fmtNum(v);
  }
}

/* The binary unit bytes read best in: KiB below 1 MiB (an idle thread's
 * 8 KiB stack), MiB below 1 GiB, else GiB; the card, the chart and the
 * runs table all show a figure in it. */
function bytesScale(v) {
  const a = Math.abs(v);
  if (a >= 2 ** 30) return [2 ** 30, 'GiB'];
  return a >= 2 ** 20 ? [2 ** 20, 'MiB'] : [1024, 'KiB'];
}

/* Axis labels: 1.5k, 2M, 0.93; never milli-prefixes for ratios. */
function shortNum(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return String(+v.toPrecision(3));
}

/* An axis's labels with as many digits as its ticks need to differ
 * (2.62k, 2.62k, 2.6k read as one value; 2,615, 2,620, 2,625 do not):
 * the decimals follow the tick step on a linear axis, three significant
 * digits on a log one. */
function axisFmt(axis) {
  return (v, gran, opts, g) => {
    if (!g || opts('logscale')) return shortNum(v);
    const [lo, hi] = axis === 'x' ? g.xAxisRange() : g.yAxisRange();
    const big = Math.max(Math.abs(lo), Math.abs(hi));
    const [scale, unit] = big >= 1e6 ? [1e6, 'M'] : big >= 1e3 ? [1e3, 'k'] : [1, ''];
    const step = (hi - lo) / 5 / scale;
    const decimals = step > 0 && isFinite(step) ? Math.min(4, Math.max(0, Math.ceil(-Math.log10(step)))) : 0;
    return `${(v / scale).toFixed(decimals)}${unit}`;
  };
}

/* Ticks of a log axis: 1, 2 and 5 times the powers of ten in range, and
 * every whole multiple when that leaves fewer than three (a 290 to 660 ns
 * ladder had one tick); a linear axis keeps dygraphs' own. */
function logAwareTicks(min, max, pixels, opts, g, vals) {
  if (!opts('logscale') || !(min > 0) || !(max > min)) return Dygraph.numericTicks(min, max, pixels, opts, g, vals);
  const fmt = opts('axisLabelFormatter');
  const pick = (mults) => {
    const out = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++)
      for (const m of mults) {
        const v = m * 10 ** e;
        if (v >= min && v <= max) out.push(v);
      }
    return out;
  };
  let ticks = pick([1, 2, 5]);
  if (ticks.length < 3) ticks = pick([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  return ticks.map((v) => ({ v, label: fmt(v, 0, opts, g) }));
}

/* Ticks at the powers of two in range: rings of 2 to 64 threads. */
function pow2Ticks(min, max, pixels, opts, g) {
  const out = [];
  for (let v = 1; v <= max; v *= 2) if (v >= min) out.push({ v, label: String(v) });
  return out;
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function facts(dl, rows) {
  dl.replaceChildren();
  for (const [k, v] of rows) {
    if (v == null || v === '') continue;
    dl.append(el('dt', { text: k }), el('dd', {}, v));
  }
}

/* --- states ------------------------------------------------------------ */
function banner(kind, title, text) {
  const b = $('#banner');
  b.hidden = !kind;
  b.className = 'banner ' + (kind || '');
  b.replaceChildren(...(kind ? [el('strong', { text: title }), el('span', { text })] : []));
}

function showFailure(e) {
  state.failed = true;
  document.body.dataset.state = e.status === 0 ? 'unreachable' : `error-${e.status}`;
  if (e.status === 0)
    banner('error', 'threadwatchd is not reachable.', 'Is it running? The page tries again every minute' +
      (state.loadedOnce ? '; what is shown below is from the last answer.' : '.'));
  else if (e.status === 503)
    banner('error', 'threadwatchd answered 503: its database is unavailable.',
      `${e.message}. The page tries again every minute.`);
  else banner('error', `threadwatchd answered ${e.status}.`, e.message);
  if (!state.loadedOnce) {
    $('#rec-sentence').textContent = 'Not available.';
    facts($('#host-facts'), [['Name', 'not available']]);
    facts($('#cycle-facts'), [['Last cycle', 'not available']]);
  }
}

/* --- first screen ------------------------------------------------------ */
/* The fingerprint's capabilities and what ctxsw proved, labelled as
 * `threadwatch run` labels them (fingerprint_section_text()). */
const CAPS = {
  capabilities: [['ia32_emulation', 'ia32 emulation'], ['thp', 'thp'], ['pmu', 'pmu'],
    ['constant_tsc', 'constant_tsc'], ['nonstop_tsc', 'nonstop_tsc'], ['clocksource', 'clocksource']],
  probed: [['ia32_int80', 'int $0x80'], ['selector_gdt', 'GDT selector'],
    ['selector_ldt', 'LDT selector'], ['cpus_allowed', 'probe CPUs'], ['cpus_pinned', 'CPUs per probe']],
};

function capsText(fp, section) {
  const o = fp[section];
  if (!o) return null;
  const text = (v) => (v == null ? 'unknown' : v === true ? 'yes' : v === false ? 'no' : String(v));
  return CAPS[section].map(([k, label]) => `${label} ${text(o[k])}`).join(', ');
}

function renderHost(host) {
  const fp = host && host.current ? host.current.fingerprint : null;
  if (!fp) {
    facts($('#host-facts'), [['Name', 'not read yet']]);
    return;
  }
  const cpu = fp.cpu || {};
  $('#hostname').textContent = fp.hostname || '';
  document.title = `threadwatch · ${fp.hostname || 'host'}`;
  const ids = [cpu.vendor, cpu.family != null ? `family ${cpu.family}` : null,
    cpu.model != null ? `model ${cpu.model}` : null, cpu.stepping != null ? `stepping ${cpu.stepping}` : null,
    cpu.microcode ? `microcode ${cpu.microcode}` : null].filter(Boolean).join(', ');
  const cpuText = el('span', { text: cpu.model_name || cpu.vendor || 'unknown' });
  if (ids) cpuText.append(el('br'), el('small', { class: 'muted', text: ids }));
  const hist = host.history || [];
  const change = hist.find((h) => h.diff);
  state.oldest = hist.length ? hist[hist.length - 1].first_seen_ms : null;
  facts($('#host-facts'), [
    ['Name', fp.hostname],
    ['CPU', cpuText],
    ['CPUs', fp.ncpus != null ? String(fp.ncpus) : null],
    ['Kernel', fp.kernel],
    ['glibc', fp.glibc],
    ['FSGSBASE', cpu.fsgsbase == null ? 'unknown' : cpu.fsgsbase ? 'yes' : 'no'],
    ['Virtualization', fp.virtualization || 'unknown'],
    ['Capabilities', capsText(fp, 'capabilities')],
    ['ctxsw proved', capsText(fp, 'probed')],
    ['Last change', change ? `${fmtTime(change.first_seen_ms)}: ${change.diff}` : null],
  ]);
}

/* Why a probe's panel may lack its latest figures, from the recommendation
 * (the API's failed_probes and disabled_probes), or null: "The last ctxsw
 * run crashed: SIGSEGV at 12:03." */
function probeTrouble(probe) {
  const r = state.rec || {};
  if ((r.disabled_probes || []).includes(probe))
    return `${probe} is disabled in this daemon's configuration (probes_disabled).`;
  const f = (r.failed_probes || []).find((x) => x.probe === probe);
  if (!f) return null;
  const at = f.t_ms != null ? ` at ${fmtTime(f.t_ms)}` : '';
  return f.kind === 'crash' ? `The last ${probe} run crashed: ${f.signal}${at}.`
    : `The last ${probe} run failed${at}: ${f.reason}.`;
}

/* An empty panel says why: the probe's trouble, else `text`. */
function emptyPanel(id, probe, text) {
  return emptyChart(id, probeTrouble(probe) || text);
}

/* A drawn panel's caption, led by the probe's trouble when it has one. */
function caption(node, probe, text) {
  const t = probeTrouble(probe);
  node.textContent = t ? `${t} Shown: its last ok run. ${text}` : text;
}

function breakEven(r) {
  const f = r.figures || {};
  if (f.break_even_switches != null) {
    const ci = f.break_even_switches_ci;
    return `${fmtNum(f.break_even_switches, 0)} context switches per low-stack thread` +
      (ci && ci[0] != null && ci[1] != null ? ` (${fmtNum(ci[0], 0)} to ${fmtNum(ci[1], 0)})` : '');
  }
  return NO_BREAK_EVEN[r.rule] || 'not computed';
}


/* result.costs: one line per cost, with the cause and the fix of each
 * that is a problem here. */
const COST_TITLES = [['create', 'Create and join'], ['creators', 'Two creators at once'],
  ['handoff', 'Hand-off to another CPU'], ['memory', 'Memory per idle thread']];

function renderCosts(costs) {
  const card = $('#costs-card');
  card.hidden = !costs;
  if (!costs) return;
  $('#costs-list').replaceChildren(...COST_TITLES.filter(([k]) => costs[k]).map(([k, title]) => {
    const c = costs[k];
    return el('li', { class: c.problem ? 'problem' : '', 'data-cost': k },
      el('strong', { text: title }),
      c.problem ? el('span', { class: 'badge change', text: 'a problem' })
        : c.near_limit ? el('span', { class: 'badge', text: 'near the limit' }) : null,
      el('p', { text: c.finding }),
      c.cause ? el('p', { class: 'muted', text: `Cause: ${c.cause}.` }) : null,
      c.fix ? el('p', { text: `Fix: ${c.fix}.` }) : null);
  }));
}

function renderRecommendation(r) {
  const s = $('#rec-sentence');
  const v = $('#rec-verdict'), c = $('#rec-confidence');
  if (!r) {
    $('#rec-action').textContent = '';
    s.textContent = 'Not enough data yet: a recommendation comes once a probe cycle has measured this host.';
    v.textContent = c.textContent = '';
    facts($('#rec-facts'), []);
    $('#rec-reasons-box').hidden = true;
    renderCosts(null);
    return;
  }
  renderCosts(r.costs);
  const f = r.figures || {};
  /* The action first, in plain words; the why after it. High stacks are
   * glibc's default: nothing to change, so its chip is not a warning. */
  $('#rec-action').textContent = r.action || '';
  s.textContent = r.sentence;
  v.textContent = r.verdict === 'low' ? 'verdict: low stacks (MAP_32BIT)' : 'verdict: high stacks (MAP_STACK)';
  v.className = 'badge ' + (r.verdict === 'low' ? 'change' : 'keep');
  c.textContent = `confidence: ${r.confidence}`;
  c.className = 'badge ' + r.confidence;
  const ci = f.switch_saving_ci_ns;
  facts($('#rec-facts'), [
    ['Break-even', breakEven(r)],
    ['Saving per switch', f.switch_saving_ns != null ? `${fmtNum(f.switch_saving_ns, 1)} ns` +
      (ci && ci[0] != null ? ` (95% CI ${fmtNum(ci[0], 1)} to ${fmtNum(ci[1], 1)})` : '') : null],
    ['Extra per create', f.extra_create_ns != null ? `${fmtUnit(f.extra_create_ns, 'ns')} once the window is full` : null],
    ['Stacks in window', f.window_stacks != null ? `${fmtNum(f.window_stacks, 0)} of ${fmtNum(f.threads, 0)} expected threads (workload_threads in threadwatchd.conf)` +
      (f.window_assumed ? ' (assumed window, not measured: no map32 figures yet)' :
        f.window_stacks_source === 'measured' ? ' (as map32 filled the window)' : '') : null],
    ['Failed probes', (r.failed_probes || []).length ? r.failed_probes.map((x) => `${x.probe}: ${x.reason}`).join('; ') : null],
    ['Disabled probes', (r.disabled_probes || []).length ? r.disabled_probes.join(', ') : null],
    ['Computed', fmtWhen(r.computed_ms)],
  ]);
  $('#rec-reasons').replaceChildren(...(r.reasons || []).map((t) => el('li', { text: t })));
  $('#rec-reasons-box').hidden = !(r.reasons || []).length;
}

/* "CPU pressure (PSI some avg10) is 25.2%, above 10%; it runs anyway at
 * 14:03": what a cycle waits for before its probes run. */
function waitText(w) {
  return `${w.measure} is ${fmtNum(w.value, 2)}${w.unit}, above ${fmtNum(w.limit, 2)}${w.unit}; ` +
    `the cycle runs anyway at ${fmtWhen(w.until_ms)}`;
}

function renderStatus(st, hasRuns) {
  const lc = st.last_cycle;
  const last = st.last_cycle_ms || (lc && lc.ended_ms);
  const w = st.cycle_running && st.waiting_for_quiet_host;
  const status = w ? 'waiting for a quiet host'
    : st.cycle_running ? `running${st.current_probe ? `: ${st.current_probe}` : ''}`
    : lc ? `${lc.status || 'unfinished'}, took ${fmtDuration(lc.duration_s)} (${lc.trigger})` : '—';
  /* ok: every probe answered; partial: some failed; failed: none did */
  const dot = st.cycle_running ? 'run' : !lc ? 'bad' : lc.status === 'ok' ? 'ok' : lc.status === 'partial' ? 'warn' : 'bad';
  const badge = el('span', {}, el('span', { class: 'dot ' + dot }), status);
  facts($('#cycle-facts'), [
    ['Last cycle', last ? fmtWhen(last) : 'none yet'],
    ['Status', lc || st.cycle_running ? badge : null],
    ['Waiting for', w ? waitText(w) : null],
    ['Next due', st.cycle_running ? 'after this one' : fmtWhen(st.next_cycle_ms)],
  ]);
  $('#trigger').hidden = !st.trigger_enabled;
  if (hasRuns) return banner(null);
  const next = st.next_cycle_ms;
  const pending = `Pending: ${probeList()}; `;
  if (w)
    banner('info', 'No runs yet — the first cycle waits for a quiet host.', `${pending}${waitText(w)}.`);
  else if (st.cycle_running)
    banner('info', 'No runs yet — the first cycle is under way' + (st.current_probe ? `: ${st.current_probe} is running.` : '.'),
      pending + (st.current_probe ? 'results appear here as each one finishes.'
        : 'it starts as soon as the quiet-host guard finds the machine quiet.'));
  else
    banner('info', `No runs yet — the first cycle starts at ${next ? fmtWhen(next) : 'start-up'}.`,
      pending + (st.trigger_enabled ? 'or start it now with the token under Probe cycles.' : 'the charts fill in after it.'));
}

/* "the context-switch (ctxsw), ... and hand-off (handoff) probes", from the
 * catalogue's list of built-in probes. */
function probeList() {
  const ps = ((state.catalog && state.catalog.probes) || []).map((p) => `${p.title} (${p.name})`);
  if (!ps.length) return 'the built-in probes';
  const last = ps.pop();
  return `the ${ps.length ? ps.join(', ') + ' and ' : ''}${last} probe${ps.length ? 's' : ''}`;
}

function renderHeadroom(h) {
  const warnings = (h && h.warnings) || [];
  $('#headroom-card').hidden = !warnings.length;
  const byName = new Map(((h && h.limits) || []).map((l) => [l.name, l]));
  $('#headroom-list').replaceChildren(...warnings.map((w) => {
    const l = byName.get(w.limit);
    if (!l || !LIMIT_NAMES[w.limit] || l.limit == null) return el('li', { text: w.message });
    return el('li', { text: `${LIMIT_NAMES[w.limit]}: ${fmtNum(l.used, 0)} of ${fmtNum(l.limit, 0)} in use (${fmtNum(100 * l.ratio, 1)}%)` });
  }));
}

/* --- who pays for threads (GET /api/v1/workloads) ---------------------- */
/* Workloads drawn over time, the dearest of the latest window. */
const WORKLOADS_CHARTED = 5;

function workloadCell(w) {
  const th = el('th', { scope: 'row' }, el('span', { class: 'wl-name', text: w.name }));
  if (w.kind === 'other') th.append(el('span', { class: 'muted', text: ` (${fmtNum(w.workloads, 0)} workloads)` }));
  else th.append(el('span', { class: 'muted wl-kind', text: ` ${w.kind}` }));
  return th;
}

/* Each finding with its cause and fix; the workload's verdict on low
 * stacks last. Every text is the observer's or the pricing's, shown as
 * text (a process may name itself anything). */
function findingsCell(w) {
  const td = el('td', { class: 'wl-findings' });
  for (const f of w.findings || [])
    td.append(el('details', {}, el('summary', { text: f.finding }),
      el('p', { text: `Cause: ${f.cause}` }), el('p', { text: `Fix: ${f.fix}` })));
  if (w.recommendation && w.recommendation.verdict)
    td.append(el('p', { class: 'muted', text: `Low stacks: ${w.recommendation.sentence || w.recommendation.verdict}` }));
  if (!td.childNodes.length) td.textContent = '—';
  return td;
}

/* A workload's figure: a count whole, nothing as a plain 0. */
function figureText(v, unit) {
  if (v === 0) return '0';
  if (unit === 'threads' && v != null) return fmtNum(v, 0);
  return fmtUnit(v, unit);
}

function renderWorkloads(w) {
  $('#workloads-box').hidden = !w;
  if (!w) return;
  const figures = (state.catalog && state.catalog.workload_metrics) || [];
  $('#workloads thead').replaceChildren(el('tr', {}, el('th', { scope: 'col', text: 'Workload' }),
    ...figures.map((m) => el('th', { scope: 'col', class: 'num', title: m.description, text: m.label })),
    el('th', { scope: 'col', text: 'Findings' })));
  $('#workloads tbody').replaceChildren(...(w.workloads || []).map((row) => el('tr', {}, workloadCell(row),
    ...figures.map((m) => el('td', { class: 'num', text: figureText((row.figures || {})[m.name], m.unit) })),
    findingsCell(row))));
  $('#workloads-when').textContent = `· a ${fmtDuration(w.window_s)} window ending ${fmtWhen(w.window_end_ms)}, ` +
    `${fmtNum(w.seen, 0)} workloads seen`;
}

/* The dearest workloads' cost over the selected range, or their threads
 * while nothing is priced yet (no probe figures). */
async function drawWorkloads(w) {
  const figures = (state.catalog && state.catalog.workload_metrics) || [];
  const rows = (w.workloads || []).filter((r) => r.kind !== 'other').slice(0, WORKLOADS_CHARTED);
  const priced = rows.some((r) => r.figures && r.figures.cpu_share != null);
  const metric = figures.find((m) => m.name === (priced ? 'cpu_share' : 'threads'));
  if (!metric || !rows.length) return emptyChart('workloads', 'no workload to chart yet');
  const since = sinceMs() || now() - 30 * DAY;
  const step = Math.max(60, Math.ceil((now() - since) / 1000 / 300));
  const series = await Promise.all(rows.map((r) => apiMaybe(
    `/workloads/${encodeURIComponent(r.ref)}/series?metric=${metric.name}&since=${Math.floor(since / 1000)}&step=${step}`)));
  const scale = metric.unit === 'share' ? 100 : 1;
  const data = mergeByX(series.map((s) => ((s && s.points) || []).map((p) => [p.t, p.avg * scale])))
    .map(([t, ...ys]) => [new Date(t), ...ys]);
  if (!data.length) return emptyChart('workloads', 'no window stored in this range');
  $('#cap-workloads').textContent = `${metric.label} of the ${rows.length} dearest workloads of the last window` +
    (priced ? ' (percent of one CPU that their creates and switches cost at this host\'s prices)' : ' (not priced yet: no probe figures)') + '.';
  /* the palette's colours, each readable as legend text (WCAG AA) */
  const colors = ['--c-low', '--c-high', '--c-extra', '--ok', '--c-default'].map(cssVar);
  /* one label a line: a name two rows share (two processes of one comm)
   * gets its key, as /metrics does */
  const labels = [];
  for (const r of rows) labels.push(labels.includes(r.name) ? r.key : r.name);
  draw('workloads', data, { labels: ['time', ...labels], colors: colors.slice(0, rows.length),
    ylabel: priced ? '% of a CPU' : metric.label, title: 'Who pays for threads over time' });
}

/* Asked only once the status names a stored window: a host without the
 * observer never gets a 503 in its console. */
async function loadWorkloads() {
  try {
    const w = state.status && state.status.workloads_window_end_ms ? await apiMaybe('/workloads') : null;
    state.workloadsEnd = w ? w.window_end_ms : null;
    renderWorkloads(w);
    if (w) await drawWorkloads(w);
  } catch (e) {
    /* the panel's own trouble stays in the panel: the rest of the page is fine */
    $('#workloads-when').textContent = `· could not be read: ${e.message}`;
  }
}

/* --- charts ------------------------------------------------------------ */
function plotDiv(id) {
  return document.getElementById(`chart-${id}`);
}

function emptyChart(id, text) {
  if (charts[id]) charts[id].destroy();
  delete charts[id];
  plotDiv(id).replaceChildren(el('div', { class: 'empty-chart', text }));
  const box = document.getElementById(`legend-${id}`);
  if (box) box.remove();
}

/* The strip under a chart (#legend-ID): its legend, always shown, when it
 * draws more than one line, and a log/linear toggle for the y axis when
 * opts.twLog. Null when it needs neither. */
function legendStrip(id, opts) {
  const multi = (opts.labels || []).length > 2;
  let box = document.getElementById(`legend-${id}`);
  if (!multi && !opts.twLog) {
    if (box) box.remove();
    return null;
  }
  if (!box) {
    box = el('div', { class: 'chart-legend', id: `legend-${id}` });
    plotDiv(id).after(box);
  }
  const labels = el('span', { class: 'legend-labels' });
  box.replaceChildren(labels);
  if (opts.twLog) box.append(el('button', { type: 'button', class: 'log-toggle', text: 'log y' }));
  return { box, labels: multi ? labels : null };
}

/* The y axis label and scale of a chart with a log toggle. */
function setLogY(g, on) {
  const base = g.twYlabel || '';
  g.updateOptions({ logscale: on, ylabel: on ? `${base} (log)` : base });
  const legend = document.getElementById(`legend-${g.twId}`);
  const b = legend && legend.querySelector('button.log-toggle');
  if (b) {
    b.textContent = on ? 'linear y' : 'log y';
    b.setAttribute('aria-pressed', String(on));
  }
}

/* A dygraph in #chart-ID, replacing what was there. Charts of several
 * lines get a legend that is always visible; y axes are linear unless the
 * chart's toggle says log. */
function draw(id, data, opts) {
  if (charts[id]) charts[id].destroy();
  const div = plotDiv(id);
  div.replaceChildren();
  const strip = legendStrip(id, opts);
  const legendOpts = strip && strip.labels
    ? { legend: 'always', labelsDiv: strip.labels, labelsSeparateLines: false } : {};
  /* One or two rows make no visible line: draw them as points, and a lone
   * point in time in the middle of an hour either side, not on the edge. */
  const few = data.length <= 2, lone = data.length === 1 && data[0][0] instanceof Date;
  const g = new Dygraph(div, data, Object.assign({
    drawPoints: few,
    pointSize: few ? 4 : 1,
    dateWindow: lone ? [data[0][0].getTime() - 3600e3, data[0][0].getTime() + 3600e3] : null,
    axisLineColor: cssVar('--line'),
    gridLineColor: cssVar('--grid'),
    strokeWidth: 1.6,
    legend: 'follow',
    labelsSeparateLines: true,
    axisLabelFontSize: 11,
    xLabelHeight: 16,
    yLabelWidth: 16,
    axes: { y: { axisLabelWidth: 46, axisLabelFormatter: axisFmt('y'), ticker: logAwareTicks } },
  }, opts, legendOpts, opts.twLog ? { logscale: false } : {}));
  g.twMarks = opts.twMarks || [];
  g.twEvents = opts.twEvents || [];
  g.twId = id;
  g.twYlabel = opts.ylabel;
  const toggle = strip && strip.box.querySelector('button.log-toggle');
  if (toggle) {
    toggle.setAttribute('aria-pressed', 'false');
    toggle.addEventListener('click', () => setLogY(g, !g.getOption('logscale')));
  }
  charts[id] = g;
  describeChart(div, data, opts);
  return g;
}

/* A chart's text alternative (a canvas says nothing to a screen reader):
 * role img, and a label naming what it plots and each line's range and
 * last value. Band rows [lo, mid, hi] read by their middle. */
function describeChart(div, data, opts) {
  const labels = opts.labels || [];
  const x = labels[0] || 'x', xAt = (r) => (r[0] instanceof Date ? fmtWhen(r[0].getTime()) : fmtNum(r[0]));
  const lines = labels.slice(1).map((name, i) => {
    const ys = data.map((r) => r[i + 1]).map((v) => (Array.isArray(v) ? v[1] : v)).filter((v) => v != null && isFinite(v));
    if (!ys.length) return `${name}: no data`;
    return `${name}: ${fmtNum(Math.min(...ys))} to ${fmtNum(Math.max(...ys))}, last ${fmtNum(ys[ys.length - 1])}`;
  });
  const span = data.length ? `${data.length} point${data.length === 1 ? '' : 's'}, ${x} ${xAt(data[0])}` +
    (data.length > 1 ? ` to ${xAt(data[data.length - 1])}` : '') : 'no points';
  div.setAttribute('role', 'img');
  div.setAttribute('aria-label', `${opts.title || opts.ylabel || 'chart'}: ${span}. ${lines.join('; ')}.`);
}

/* Rows [x, y1, y2, ...] from several [[x, y], ...] arrays. */
function mergeByX(arrays) {
  const m = new Map();
  arrays.forEach((pts, i) => {
    for (const [x, y] of pts || []) {
      if (!m.has(x)) m.set(x, new Array(arrays.length).fill(null));
      m.get(x)[i] = y;
    }
  });
  return [...m.keys()].sort((a, b) => a - b).map((x) => [x, ...m.get(x)]);
}

const seriesPoints = (doc, name) => (doc && doc.series && doc.series[name] ? doc.series[name].points : null);

function scalar(doc, name) {
  const s = doc && doc.scalars && doc.scalars[name];
  return s && typeof s.value === 'number' ? s.value : null;
}

/* Vertical dashed lines with a label at each mark's x; `row` moves the
 * labels down a line (events under host changes). */
function markerUnderlay(marks, color, row) {
  return (ctx, area, g) => {
    ctx.save();
    ctx.strokeStyle = ctx.fillStyle = color;
    ctx.setLineDash([4, 3]);
    ctx.font = '11px sans-serif';
    for (const m of marks) {
      const x = g.toDomXCoord(m.x);
      if (!(x >= area.x && x <= area.x + area.w)) continue;
      ctx.beginPath();
      ctx.moveTo(x, area.y);
      ctx.lineTo(x, area.y + area.h);
      ctx.stroke();
      if (!m.label) continue;
      const w = ctx.measureText(m.label).width;
      ctx.fillText(m.label, x + 4 + w > area.x + area.w ? x - w - 4 : x + 4, area.y + 12 + 13 * (row || 0));
    }
    ctx.restore();
  };
}

function drawCreates(doc) {
  const cap = $('#cap-creates');
  if (!doc) return emptyPanel('creates', 'threads', 'No successful threads run yet.');
  const data = mergeByX(POLICIES.map((p) => seriesPoints(doc, `${p}_rate`)));
  if (!data.length) return emptyChart('creates', 'The latest threads run has no rate series.');
  const knees = POLICIES.map((p) => ({ p, x: scalar(doc, `${p}_knee`) })).filter((k) => k.x != null);
  const g = draw('creates', data, {
    labels: ['live threads', ...POLICIES],
    colors: [cssVar('--c-default'), cssVar('--c-low'), cssVar('--c-high')],
    twLog: true,
    axes: { x: { axisLabelFormatter: axisFmt('x') }, y: { axisLabelWidth: 46, axisLabelFormatter: axisFmt('y'), ticker: logAwareTicks } },
    xlabel: 'live threads',
    ylabel: 'creates per second',
    twMarks: knees.map((k) => ({ x: k.x, label: `${k.p} knee` })),
    underlayCallback: markerUnderlay(knees.map((k) => ({ x: k.x, label: `${k.p} knee` })), cssVar('--bad')),
  });
  g.ready(() => g.setAnnotations(knees.map((k) => ({
    series: k.p, x: k.x, shortText: 'K', width: 16, height: 16,
    text: `${k.p}: knee at ${k.x} live threads, where the rate fell below a tenth of the first bucket`,
  }))));
  const kneeText = knees.length
    ? knees.map((k) => `${k.p} stacks hit a knee (K) at ${fmtNum(k.x, 0)} threads`).join('; ')
    : 'no policy steps down and stays down';
  caption(cap, 'threads', `Creates/s of threads kept alive as they pile up (the threads probe: no join, so no stack is reused), per stack policy (run of ${fmtTime(doc.started_unix * 1000)}): ${kneeText}. The cost card's create is another measure: create and join in turn, glibc's stack cache reused (createscale).`);
}

/* The two ladders of map32, each against its own x axis: the failing
 * MAP_32BIT call against the VMAs inside the window, and the plain retry
 * after it (with a plain mmap alone, the baseline) against all VMAs.
 * Runs from before the two ladders name the retry `fallback`. */
function drawMap32(doc) {
  const cap = $('#cap-map32');
  if (!doc) {
    emptyPanel('map32retry', 'map32', 'No successful map32 run yet.');
    return emptyPanel('map32', 'map32', 'No successful map32 run yet.');
  }
  const fail = mergeByX([seriesPoints(doc, 'fail_median_ns')]);
  const retryName = seriesPoints(doc, 'retry_median_ns') ? 'retry_median_ns' : 'fallback_median_ns';
  const retry = mergeByX([seriesPoints(doc, retryName), seriesPoints(doc, 'plain_median_ns')]);
  const common = {
    twLog: true,
    axes: { x: { logscale: true, axisLabelFormatter: shortNum }, y: { axisLabelWidth: 46, axisLabelFormatter: axisFmt('y'), ticker: logAwareTicks } },
    drawPoints: true,
    pointSize: 2,
    ylabel: 'ns, median',
  };
  if (fail.length) {
    draw('map32', fail, Object.assign({}, common, {
      labels: ['VMAs in the window', 'failing MAP_32BIT'],
      colors: [cssVar('--bad')],
      xlabel: 'mappings (VMAs) inside the MAP_32BIT window, log',
    }));
  } else {
    emptyChart('map32', 'The latest map32 run has no failing-call ladder.');
  }
  if (retry.length) {
    draw('map32retry', retry, Object.assign({}, common, {
      labels: ['VMAs', 'retry after a failure', 'plain mmap'],
      colors: [cssVar('--c-high'), cssVar('--c-default')],
      xlabel: 'mappings (VMAs) in the process, log',
    }));
  } else {
    emptyChart('map32retry', 'The latest map32 run has no retry ladder.');
  }
  const info = doc.info || {};
  const ladder = (what, name, cls) => {
    const b = scalar(doc, `${name}_ns_per_vma`);
    return `${what}: ${cls || 'unclassified'}` + (b != null ? ` (${fmtNum(b, 3)} ns per VMA)` : '');
  };
  caption(cap, 'map32', ladder('Failing MAP_32BIT mmap against the VMAs in the window', 'fail', info.fail_class || info.class) +
    '; ' + ladder('the plain retry after it against all VMAs', 'retry', info.retry_class) +
    '. Flat is a tree search; linear is the walk of the kernels before 3.8.');
}

function sinceMs() {
  const r = RANGES[state.range];
  return r ? now() - r : state.oldest;
}

function sinceParam() {
  const since = sinceMs();
  return since ? `&since=${Math.floor(since / 1000)}` : '';
}

/* The series of a metric in the selected range, in about `buckets`
 * buckets (a chart a few hundred pixels wide needs no more); empty when
 * the metric was never stored. */
async function fetchSeries(metric, buckets) {
  if (!state.stored.has(metric)) return { points: [], markers: [] };
  const since = sinceMs();
  const step = since ? `&step=${Math.max(1, Math.ceil((now() - since) / 1000 / buckets))}` : '';
  return api(`/series?metric=${encodeURIComponent(metric)}${sinceParam()}${step}`);
}

/* Host changes as chart marks; the label names what changed and its new
 * value ("kernel → 6.1.0-21-amd64"), the legend of the caption the rest. */
function fpMarks(series) {
  return (series.markers || []).map((m) => {
    const first = (m.diff || 'host changed').split(';')[0];
    const parts = first.split(' → ');
    const what = parts[0].split(' ')[0];
    return { x: m.t, label: parts.length > 1 ? `${what} → ${parts[1]}` : first, diff: m.diff };
  });
}

/* Regression events of these metrics as chart marks: ▲ or ▼ and the change. */
function eventMarks(metrics) {
  return state.events.filter((e) => e.kind === 'step' && metrics.includes(e.metric)).map((e) => ({
    x: e.t_ms,
    label: `${e.direction === 'down' ? '▼' : '▲'} ${e.change_pct > 0 ? '+' : ''}${fmtNum(e.change_pct, 1)}%`,
    message: e.message,
    id: e.id,
  }));
}

/* Host changes in the marker colour, events below them in red. */
function marksUnderlay(fp, ev) {
  const a = markerUnderlay(fp, cssVar('--marker')), b = markerUnderlay(ev, cssVar('--bad'), 1);
  return (ctx, area, g) => {
    a(ctx, area, g);
    b(ctx, area, g);
  };
}

/* Rows [Date, [lo, mid, hi], ...] for customBars; each triple is three series. */
function barsRows(triples) {
  const m = new Map();
  triples.forEach(([lo, mid, hi], i) => {
    const L = new Map(lo.points.map((p) => [p.t, p.avg])), H = new Map(hi.points.map((p) => [p.t, p.avg]));
    for (const p of mid.points) {
      if (!m.has(p.t)) m.set(p.t, new Array(triples.length).fill(null));
      const l = L.get(p.t), h = H.get(p.t);
      m.get(p.t)[i] = [l != null ? Math.min(l, p.avg) : p.avg, p.avg, h != null ? Math.max(h, p.avg) : p.avg];
    }
  });
  return [...m.keys()].sort((a, b) => a - b).map((t) => [new Date(t), ...m.get(t)]);
}

/* The arms of the ctxsw chart: name, label, colour; selector and A/A only
 * where stored runs have them. */
const CTXSW_ARMS = [
  ['low', 'low stacks', '--c-low'],
  ['high', 'high stacks', '--c-high'],
  ['selector', 'segment selector', '--c-extra'],
  ['aa', 'A/A (high again)', '--c-default'],
];

async function drawCtxsw() {
  const arms = CTXSW_ARMS.filter(([a], i) => i < 2 || state.stored.has(`ctxsw.${a}_ns`));
  const s = await Promise.all(arms.flatMap(([a]) =>
    [`${a}_ci_lo`, `${a}_ns`, `${a}_ci_hi`].map((n) => fetchSeries(`ctxsw.${n}`, 500))));
  const rows = barsRows(arms.map((_, i) => s.slice(3 * i, 3 * i + 3)));
  if (!rows.length) return emptyPanel('ctxsw', 'ctxsw', 'No ctxsw runs in this range.');
  const marks = fpMarks(s[1]), events = eventMarks(['ctxsw.low_ns', 'ctxsw.high_ns']);
  draw('ctxsw', rows, {
    labels: ['time', ...arms.map(([, label]) => label)],
    colors: arms.map(([, , c]) => cssVar(c)),
    customBars: true,
    fillAlpha: 0.25,
    xlabel: 'time',
    ylabel: 'ns per context switch',
    /* whole ns with grouped digits (2,330, not 2.330k), in a gutter wide
     * enough that the axis title clears them */
    axes: { y: { axisLabelWidth: 60, axisLabelFormatter: (v) => fmtNum(v, 0) } },
    twMarks: marks,
    twEvents: events,
    underlayCallback: marksUnderlay(marks, events),
  });
  const last = rows[rows.length - 1];
  const latest = arms.map(([, label], i) => `${label} ${fmtNum(last[i + 1] && last[i + 1][1], 0)}`).join(', ');
  caption($('#cap-ctxsw'), 'ctxsw', rows.length > 1
    ? `ns per switch, bands are 95% CIs (latest: ${latest}). Low stacks pay only where the bands part; the A/A control must overlap high.`
    : `ns per switch of the one run so far (${latest}); its 95% CIs are in the run's details, and the bands draw from the second run on.`);
}

/* "0.998 [0.990, 1.006]" for a ratio scalar and its CI. */
function ratioText(doc, p) {
  const r = scalar(doc, `${p}ratio`), lo = scalar(doc, `${p}ratio_ci_lo`), hi = scalar(doc, `${p}ratio_ci_hi`);
  return `${fmtNum(r, 3)}` + (lo != null && hi != null ? ` [${fmtNum(lo, 3)}, ${fmtNum(hi, 3)}]` : '');
}

/* What the latest ctxsw run says: equivalence (only when its CI lies in
 * the margin), the segment path and the A/A control. */
function ctxswVerdict(doc) {
  const m = scalar(doc, 'equivalence_margin') ?? 0.02, pct = `±${fmtNum(100 * m, 0)}%`;
  const parts = [`low/high ${ratioText(doc, '')}: ` +
    (scalar(doc, 'equivalent') === 1 ? `equivalent within ${pct}` : `not shown equivalent within ${pct}`)];
  /* The selector runs in child processes: read against its control (high
   * stacks sampled the same way) where the run had one. */
  const sp = scalar(doc, 'selector_child_ratio') != null ? 'selector_child_' : 'selector_';
  const sel = scalar(doc, `${sp}ratio`), slo = scalar(doc, `${sp}ratio_ci_lo`), shi = scalar(doc, `${sp}ratio_ci_hi`);
  if (sel != null)
    parts.push(`segment selector/${sp === 'selector_' ? 'high' : 'high in a child (its control)'} ${ratioText(doc, sp)}: ` +
      (slo > 1 ? `the 32-bit segment path would cost +${fmtNum(100 * (sel - 1), 1)}% here`
        : shi < 1 ? `the segment path is ${fmtNum(100 * (1 - sel), 1)}% cheaper, but this kernel does not use it`
          : 'no measurable difference'));
  else if (doc.info && typeof doc.info.selector === 'string')
    parts.push(`segment path ${doc.info.selector}`);
  if (scalar(doc, 'aa_ratio') != null)
    parts.push(`A/A ${ratioText(doc, 'aa_')}: ` + (doc.info && doc.info.aa_biased ? 'its CI excludes 1.0, so this run is biased' : 'unbiased'));
  return parts.join('; ');
}

/* The ring of threads of the latest ctxsw run: ns per hop (one pass of the
 * token) against the threads in the ring, for high stacks and the segment
 * selector, and the switches a hop took where the probe counted them. */
function drawRing(doc) {
  const cap = $('#cap-ring');
  $('#cap-ctxsw-latest').textContent = '';
  if (!doc) return emptyPanel('ring', 'ctxsw', 'No successful ctxsw run yet.');
  const data = mergeByX(['ring_ns', 'ring_selector_ns'].map((n) => seriesPoints(doc, n)));
  if (!data.length) return emptyChart('ring', 'The latest ctxsw run has no ring series.');
  const sel = seriesPoints(doc, 'ring_selector_ns');
  draw('ring', sel ? data : data.map((r) => r.slice(0, 2)), {
    labels: ['threads', 'high stacks', ...(sel ? ['segment selector'] : [])],
    colors: [cssVar('--c-high'), cssVar('--c-extra')],
    axes: { x: { logscale: true, ticker: pow2Ticks }, y: { axisLabelWidth: 46, axisLabelFormatter: axisFmt('y'), ticker: logAwareTicks } },
    drawPoints: true,
    pointSize: 3,
    xlabel: 'threads in the ring (log)',
    ylabel: 'ns per hop',
  });
  /* What the ring draws, and only that: one median per ring size, no CI. */
  const ends = (i, name) => {
    const pts = data.filter((r) => r[i] != null);
    return pts.length ? `${name} ${fmtNum(pts[0][i], 0)} ns at ${pts[0][0]} threads, ` +
      `${fmtNum(pts[pts.length - 1][i], 0)} ns at ${pts[pts.length - 1][0]}` : null;
  };
  const drawn = [ends(1, 'high stacks'), sel ? ends(2, 'segment selector') : null].filter(Boolean).join('; ');
  /* A hop is one switch with 2 threads; from 4 a woken thread may preempt
   * its waker, which runs again to sleep: more switches, not dearer ones. */
  const sw = seriesPoints(doc, 'ring_switches_per_hop');
  const hops = sw && sw.length ? ` A hop took ${sw.map(([n, v]) => `${fmtNum(v, 2)} switches at ${n} threads`).join(', ')}` +
    ' (counted from schedstat): the rise with the ring\'s size is partly more switches per hop.' : '';
  /* The ratios belong to the chart that draws those arms. */
  $('#cap-ctxsw-latest').textContent = `Latest run: ${ctxswVerdict(doc)}.`;
  caption(cap, 'ctxsw', `A token passed around a ring of threads on one CPU (run of ${fmtTime(doc.started_unix * 1000)}, ` +
    `cycles from ${(doc.info && doc.info.cycles_source) || 'unknown'}): ${drawn}; ` +
    'one median per ring size, so no band.' + hops);
}

/* The figures whose history is drawn: the catalogue's labelled metrics,
 * as [metric, title, unit]. */
function keyMetrics() {
  return state.catalog.metrics.filter((m) => m.label).map((m) => [m.name, m.label, m.unit]);
}

/* The catalogue's label of a metric, or its name. */
function metricLabel(name) {
  const m = state.catalog.metrics.find((x) => x.name === name);
  return (m && m.label) || name;
}

async function drawHistory() {
  const box = $('#chart-history'), figures = keyMetrics();
  if (!box.children.length)
    for (const [m, title, unit] of figures)
      box.append(el('div', { class: 'small' }, el('h3', { text: `${title} (${unit === 'per_s' ? 'per s' : unit})` }),
        el('div', { class: 'plot', id: `chart-history-${m}` }), el('p', { class: 'muted note', id: `note-history-${m}` })));
  const all = await Promise.all(figures.map(([m]) => fetchSeries(m, 250)));
  /* A chart of bytes is drawn in the unit its largest point reads best in
   * (KiB for a thread's stack), as the card and the runs table show it. */
  const scale = figures.map(([, , unit], i) => (unit === 'bytes'
    ? bytesScale(Math.max(0, ...all[i].points.map((p) => Math.abs(p.max ?? p.avg ?? 0)))) : [1, unit]));
  figures.forEach(([m, , unit], i) => {
    /* by id, not a selector: a metric's name holds a dot */
    const h = document.getElementById(`chart-history-${m}`);
    if (unit === 'bytes' && h) h.previousElementSibling.textContent = h.previousElementSibling.textContent.replace(/\((bytes|[KMG]iB)\)$/, `(${scale[i][1]})`);
  });
  /* One point is not yet a history: say when the second comes. */
  const st = state.status || {};
  const next = st.cycle_running ? 'with the cycle running now' : st.next_cycle_ms ? `with the next cycle, due ${fmtWhen(st.next_cycle_ms)}` : 'with the next cycle';
  figures.forEach(([m, title, unit], i) => {
    const id = `history-${m}`, pts = all[i].points;
    document.getElementById(`note-history-${m}`).textContent = pts.length === 1 ? `One run so far: the history starts ${next}.` : '';
    if (!pts.length) return emptyChart(id, 'no data in this range');
    const marks = fpMarks(all[i]), events = eventMarks([m]);
    const div = scale[i][0];
    draw(id, pts.map((p) => [new Date(p.t), [p.min / div, p.avg / div, p.max / div]]), {
      labels: ['time', title],
      colors: [cssVar('--accent')],
      customBars: true,
      fillAlpha: 0.2,
      legend: 'never',
      axes: { y: { axisLabelWidth: 46, axisLabelFormatter: axisFmt('y'), ticker: logAwareTicks, valueFormatter: (v) => fmtUnit(v * div, unit) } },
      twMarks: marks,
      twEvents: events,
      underlayCallback: marksUnderlay(marks, events),
    });
  });
}

/* The document of a probe's newest ok run, or null. */
async function latestDoc(probe) {
  const list = await api(`/runs?probe=${probe}&status=ok&limit=1`);
  if (!list.runs.length) return null;
  return (await api(`/runs/${list.runs[0].id}`)).doc;
}

/* --- regression events -------------------------------------------------- */
/* Which path found a step: with a host change (fast) or sustained (slow). */
const EVENT_PATHS = {
  change: { text: 'after a host change', title: 'Found in the runs since the host fingerprint changed' },
  sustained: { text: 'sustained', title: 'Held for detect_k_sustained runs with no change on the host' },
};

function eventItem(e) {
  const kind = e.kind === 'flip' ? `verdict → ${e.after.verdict}` : e.direction === 'down' ? '▼ fell' : '▲ rose';
  const path = EVENT_PATHS[e.path];
  return el('li', { class: `event ${e.kind}`, 'data-id': String(e.id), 'data-path': e.path || '' },
    el('time', { text: fmtTime(e.t_ms) }), ' ',
    el('span', { class: 'badge ' + (e.kind === 'flip' ? e.after.verdict : 'bad'), text: kind }), ' ',
    ...(path ? [el('span', { class: 'badge path', title: path.title, text: path.text }), ' '] : []),
    el('span', { text: e.message }));
}

/* The events whose change began in the selected range, newest first. */
async function loadEvents() {
  const list = await api(`/events?limit=100${sinceParam()}`);
  state.events = list.events;
  const ul = $('#events-list');
  ul.replaceChildren(...list.events.map(eventItem));
  if (!list.events.length) ul.append(el('li', { class: 'muted none', text: 'No regression events in this range.' }));
  $('#events-count').textContent = list.events.length ? `(${list.events.length}${list.more ? ', newest shown' : ''})` : '';
}

/* --- runs table -------------------------------------------------------- */
function keyFigure(run) {
  if (run.status !== 'ok') return run.reason || '';
  const k = run.key_figure;
  return k ? `${metricLabel(k.metric)}: ${fmtUnit(k.value, k.unit)}` : '';
}

function runRow(run) {
  const tr = el('tr', { tabindex: '0', 'data-id': String(run.id), class: run.status });
  tr.append(
    el('td', { text: fmtTime(run.started_ms) }),
    el('td', { text: run.probe }),
    el('td', {}, el('span', { class: 'badge ' + run.status, text: run.status.replace('_', ' ') })),
    el('td', { class: 'num', text: fmtDuration(run.duration_s) }),
    el('td', { class: run.status === 'ok' ? '' : 'reason', text: keyFigure(run) }));
  tr.addEventListener('click', () => openRun(run.id));
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') openRun(run.id); });
  return tr;
}

async function loadRuns(append) {
  const cursor = append && state.cursor ? `&cursor=${state.cursor}` : '';
  const list = await api(`/runs?limit=${RUNS_PAGE}${sinceParam()}${cursor}`);
  const tbody = $('#runs tbody');
  if (!append) tbody.replaceChildren();
  tbody.append(...list.runs.map(runRow));
  if (!tbody.children.length)
    tbody.append(el('tr', { class: 'none' }, el('td', { colspan: '5', class: 'muted', text: 'No runs in this range.' })));
  state.cursor = list.next_cursor;
  $('#runs-more').hidden = !state.cursor;
  $('#runs-count').textContent = `(${tbody.querySelectorAll('tr[data-id]').length} shown)`;
}

/* "SCHED_IDLE, nice 10, CPU 1": what a run's figures were measured under
 * (a switch between SCHED_IDLE threads costs more than between normal ones). */
function runConditions(doc) {
  const i = (doc && doc.info) || {};
  if (i.sched_policy == null && i.cpus_allowed == null) return null;
  const policy = { normal: 'SCHED_OTHER', idle: 'SCHED_IDLE', batch: 'SCHED_BATCH' }[i.sched_policy] || i.sched_policy;
  return [policy, i.nice != null ? `nice ${i.nice}` : null,
    i.cpus_allowed != null ? `CPU ${i.cpus_allowed}` : null].filter(Boolean).join(', ');
}

async function openRun(id) {
  const d = $('#run-dialog');
  $('#run-title').textContent = `Run ${id}`;
  $('#run-json').textContent = 'Loading…';
  facts($('#run-facts'), []);
  if (!d.open) d.showModal();
  try {
    const run = await api(`/runs/${id}`);
    $('#run-title').textContent = `Run ${id}: ${run.probe}`;
    facts($('#run-facts'), [
      ['Started', fmtTime(run.started_ms)],
      ['Status', run.status],
      ['Reason', run.reason],
      ['Duration', fmtDuration(run.duration_s)],
      ['Key figure', run.status === 'ok' ? keyFigure(run) : null],
      ['Ran at', runConditions(run.doc)],
      ['Load average', run.loadavg1 != null ? fmtNum(run.loadavg1, 2) : null],
      ['CPU steal', run.steal_pct != null ? `${fmtNum(run.steal_pct, 1)}%` : null],
      ['Cycle', run.cycle_id != null ? String(run.cycle_id) : null],
      ['Pruned', run.pruned_ms ? `document dropped by retention ${fmtTime(run.pruned_ms)}` : null],
    ]);
    /* The document when there is one; otherwise the run with its raw output. */
    const shown = run.doc || Object.fromEntries(Object.entries(run).filter(([k]) => k !== 'series' && k !== 'samples'));
    $('#run-json').textContent = JSON.stringify(shown, null, 2);
  } catch (e) {
    $('#run-json').textContent = `Could not load run ${id}: ${e.message}`;
  }
}

/* --- loading ----------------------------------------------------------- */
async function loadRange() {
  await loadEvents(); /* the charts mark them */
  await Promise.all([drawCtxsw(), drawHistory(), loadRuns(false)]);
}

async function loadAll() {
  try {
    const status = await api('/status');
    state.skew = status.now_ms - Date.now();
    state.status = status;
    const cycled = !!(status.last_cycle || status.last_cycle_ms);
    if (!state.catalog) state.catalog = await api('/catalog');
    const [host, catalogue, any, rec, headroom] = await Promise.all([
      apiMaybe('/host'), api('/metrics'), api('/runs?limit=1'),
      cycled ? apiMaybe('/recommendation') : null, cycled ? apiMaybe('/headroom') : null]);
    state.stored = new Set(catalogue.metrics.filter((m) => m.stored).map((m) => m.name));
    const hasRuns = any.runs.length > 0;
    renderHost(host);
    state.rec = rec;
    renderRecommendation(rec);
    renderHeadroom(headroom);
    /* Charts and runs only once there is something to show; shown before
     * drawing, since dygraphs sizes itself from its element. */
    $('#charts').hidden = $('#events-box').hidden = $('#runs-box').hidden = !hasRuns;
    if (hasRuns) {
      const [threadsDoc, map32Doc, ctxswDoc] = await Promise.all([latestDoc('threads'), latestDoc('map32'), latestDoc('ctxsw')]);
      drawCreates(threadsDoc);
      drawMap32(map32Doc);
      drawRing(ctxswDoc);
      await loadRange();
    }
    await loadWorkloads();
    renderStatus(status, hasRuns);
    state.failed = false;
    state.loadedOnce = true;
    $('#loaded-at').textContent = ` · updated ${fmtTime(Date.now())}`;
    document.body.dataset.state = hasRuns ? 'ready' : 'empty';
  } catch (e) {
    showFailure(e);
  }
}

/* The status every minute, every few seconds while a cycle runs; and
 * everything when a cycle started or ended, a probe's run landed (the
 * running probe changed) or the daemon came back, so that each probe's
 * panels fill as its run lands. */
async function poll() {
  const before = state.status;
  try {
    if (document.hidden) return;
    const st = await api('/status');
    const lc = (s) => (s && s.last_cycle ? s.last_cycle.id : 0);
    if (state.failed || !before || lc(st) !== lc(before) || st.cycle_running !== before.cycle_running ||
        st.current_probe !== before.current_probe) return await loadAll();
    state.status = st;
    renderStatus(st, document.body.dataset.state === 'ready');
    /* a new observer window since the last look */
    if ((st.workloads_window_end_ms || null) !== state.workloadsEnd) await loadWorkloads();
  } catch (e) {
    showFailure(e);
  } finally {
    setTimeout(poll, state.status && state.status.cycle_running ? POLL_RUNNING_MS : POLL_MS);
  }
}

function setupRange() {
  for (const b of document.querySelectorAll('#range button'))
    b.addEventListener('click', async () => {
      if (state.range === b.dataset.range) return;
      state.range = b.dataset.range;
      for (const o of document.querySelectorAll('#range button')) o.setAttribute('aria-pressed', String(o === b));
      if (document.body.dataset.state !== 'ready') return;
      try {
        await loadRange();
        await loadWorkloads();
      } catch (e) {
        showFailure(e);
      }
    });
}

function setupTrigger() {
  $('#trigger').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const out = $('#trigger-result');
    out.textContent = 'starting…';
    try {
      const r = await api('/runs', { method: 'POST', headers: { Authorization: `Bearer ${ev.target.token.value}`, Accept: 'application/json' } });
      out.textContent = `cycle ${r.cycle_id} started`;
      setTimeout(loadAll, 3000);
    } catch (e) {
      out.textContent = e.status === 409 ? 'a cycle is already running' : e.message;
    }
  });
}

function start() {
  if (typeof Dygraph === 'undefined') {
    banner('error', 'The chart library did not load.', 'threadwatchd serves it from /dygraphs/ (Debian package libjs-dygraphs).');
    return;
  }
  setupRange();
  setupTrigger();
  $('#runs-more').addEventListener('click', () => loadRuns(true).catch(showFailure));
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', loadAll);
  loadAll().finally(() => setTimeout(poll, state.status && state.status.cycle_running ? POLL_RUNNING_MS : POLL_MS));
}

document.addEventListener('DOMContentLoaded', start);
