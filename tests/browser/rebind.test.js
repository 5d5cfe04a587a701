// A DNS-rebinding page against a real threadwatchd, in Debian's chromium
// (through playwright-core). Chromium resolves rebind.test to 127.0.0.1
// (--host-resolver-rules), as an attacker's name would once rebound, so
// every request below reaches the daemon with "Host: rebind.test:PORT", a
// name outside its allow-list. Checks, reading each answer's status from
// playwright's network events:
//  - a page of the attacker's own site (http://rebind.test:ATTACKER_PORT/,
//    a static file server) fetches http://rebind.test:PORT/api/v1/host and
//    frames http://rebind.test:PORT/: both get 421;
//  - the rebinding itself: a page at http://rebind.test:PORT/ whose first
//    document still came from the attacker (handed in by playwright before
//    the name "rebinds"), so that its script is same-origin with the daemon
//    from then on, fetches /api/v1/host: 421, and the script reads no
//    fingerprint;
//  - the same dashboard and API at http://127.0.0.1:PORT/ still work.
//
// usage: node rebind.test.js --port PORT --attacker-port PORT
'use strict';

const { check, counts, withChromium } = require('./harness');

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.port || !args['attacker-port']) {
  console.error('usage: node rebind.test.js --port PORT --attacker-port PORT');
  process.exit(2);
}
const DAEMON = `http://rebind.test:${args.port}`;
const ATTACKER = `http://rebind.test:${args['attacker-port']}`;
const LOOPBACK = `http://127.0.0.1:${args.port}`;

/* A page that records the status of every answer by URL. */
async function newPage(browser) {
  const page = await browser.newPage();
  const status = {};
  page.on('response', (r) => { status[r.url()] = r.status(); });
  page.on('requestfailed', (r) => { status[r.url()] = status[r.url()] || r.failure().errorText; });
  page.on('console', (m) => console.log(`# console: ${m.text()}`));
  return { page, status };
}

/* What the page's script got from fetch(url): the status and whether the
 * body it could read holds the host fingerprint. A cross-site URL is
 * fetched with no-cors, as a page would to reach a server that sends no
 * CORS headers: the request is made, and its answer is opaque. */
function readHost(url) {
  return fetch(url, { mode: url.startsWith('/') ? 'same-origin' : 'no-cors' }).then(async (r) => {
    const body = await r.text();
    return { status: r.status, type: r.type, fingerprint: body.includes('"kernel"'),
      body: body.slice(0, 200) };
  }, (e) => ({ error: String(e) }));
}

async function waitStatus(status, url) {
  for (let i = 0; i < 100 && !(url in status); i++) await new Promise((r) => setTimeout(r, 100));
  return status[url];
}

async function attackerSite(browser) {
  const { page, status } = await newPage(browser);
  await page.goto(`${ATTACKER}/attack.html`);
  check(status[`${ATTACKER}/attack.html`] === 200, 'the attacker page loads from its own server',
    status);
  const got = await page.evaluate(readHost, `${DAEMON}/api/v1/host`);
  check(await waitStatus(status, `${DAEMON}/api/v1/host`) === 421,
    'a cross-site fetch of /api/v1/host through the rebound name gets 421', status);
  check(!got.fingerprint, 'the attacker page read no fingerprint', got);
  await page.evaluate((u) => new Promise((resolve) => {
    const f = document.createElement('iframe');
    f.onload = resolve;
    f.src = u;
    document.body.appendChild(f);
  }), `${DAEMON}/`);
  check(await waitStatus(status, `${DAEMON}/`) === 421,
    'the dashboard framed through the rebound name gets 421', status);
  await page.close();
}

async function rebound(browser) {
  const { page, status } = await newPage(browser);
  // The first document at the rebound origin is still the attacker's.
  await page.route(`${DAEMON}/rebind.html`, (route) => route.fulfill({
    status: 200, contentType: 'text/html', body: '<!doctype html><title>rebind</title><p>hello',
  }));
  await page.goto(`${DAEMON}/rebind.html`);
  const got = await page.evaluate(readHost, '/api/v1/host');
  check(await waitStatus(status, `${DAEMON}/api/v1/host`) === 421,
    'a same-origin fetch after the rebinding gets 421', status);
  check(got.status === 421 && !got.fingerprint,
    'the rebound page\'s script reads the 421, not the fingerprint', got);
  const nav = await page.goto(`${DAEMON}/`);
  check(nav && nav.status() === 421, 'navigating to the rebound name gets 421',
    nav && nav.status());
  await page.close();
}

async function loopback(browser) {
  const { page } = await newPage(browser);
  const nav = await page.goto(`${LOOPBACK}/`);
  check(nav && nav.status() === 200, 'the dashboard at 127.0.0.1 loads', nav && nav.status());
  const got = await page.evaluate(readHost, '/api/v1/host');
  check(got.status === 200 && got.fingerprint, 'its script reads /api/v1/host at 127.0.0.1', got);
  await page.close();
}

(async () => {
  await withChromium([
    '--host-resolver-rules=MAP rebind.test 127.0.0.1',
    // Chromium's own Private Network Access checks would stop the rebound
    // page before the daemon sees it (its first document has no address,
    // so counts as public); other browsers have none, and the daemon's
    // Host check is what is tested here. No HTTPS upgrade of the
    // plain-HTTP test names either.
    '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,' +
      'PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks,HttpsUpgrades,' +
      'HttpsFirstBalancedModeAutoEnable',
  ], async (browser) => {
    await attackerSite(browser);
    await rebound(browser);
    await loopback(browser);
  });
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed || !counts.passed ? 1 : 0);
})();
