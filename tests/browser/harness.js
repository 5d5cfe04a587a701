// harness: what the browser tests share: ok / not ok lines with their
// counts, and a headless Debian chromium on a fresh profile
// (playwright-core, which never downloads a browser of its own).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const counts = { passed: 0, failed: 0 };

function check(cond, what, detail) {
  if (cond) {
    counts.passed++;
    console.log(`ok - ${what}`);
  } else {
    counts.failed++;
    console.log(`not ok - ${what}${detail !== undefined ? ': ' + JSON.stringify(detail).slice(0, 600) : ''}`);
  }
}

/* Runs body(browser) in chromium started with the common flags and
 * extraArgs; a throw counts as one failure. The profile is removed after. */
async function withChromium(extraArgs, body) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-chromium-'));
  let browser;
  try {
    // playwright-core refuses --user-data-dir in args; a persistent context
    // on a fresh directory is the same thing.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        ...extraArgs],
    });
    await body(browser);
  } catch (e) {
    counts.failed++;
    console.log(`not ok - the test stopped: ${e.stack || e}`);
  } finally {
    if (browser) await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

module.exports = { check, counts, withChromium };
