#!/usr/bin/env node
// Keeps the stead dashboard open in a real browser until stdin closes, for the memory figure
// of `stead-bench web`. Drives Debian's chromium through playwright-core, launched as
// dashboard.mjs launches it. Setup: scripts/setup-browser.
//
// Environment:
//   STEAD_URL       base URL, e.g. http://127.0.0.1:PORT
//   STEAD_TOKEN     the HTTP token (DIR/http-token)
//   STEAD_CHROMIUM  optional, the browser binary (default /usr/bin/chromium)
// Argument (optional): a directory for the browser's temporary profile and crash reports
// (TMPDIR, XDG_CONFIG_HOME and XDG_CACHE_HOME point there), as for latency.mjs.
//
// Opens the dashboard and waits for #conn live, then prints `ready` on stdout. When stdin
// closes it prints one JSON line {"conn": <#conn's data-state>, "runs": <rows in #runs>},
// closes the browser and exits 0. Errors go to stderr, exit status 1.

import fs from 'node:fs';
import path from 'node:path';
import { WAIT_MS, env, launch } from './browser.mjs';

const SCRIPT = 'hold-open.mjs';



const BASE = env(SCRIPT, 'STEAD_URL').replace(/\/+$/, '');
const TOKEN = env(SCRIPT, 'STEAD_TOKEN');

if (process.argv[2]) {
  const dir = path.resolve(process.argv[2]);
  fs.mkdirSync(dir, { recursive: true });
  for (const name of ['TMPDIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME']) process.env[name] = dir;
}

const redact = (s) => String(s).split(TOKEN).join('<token>');

/** Resolves when stdin is closed (or was never open). */
function stdinClosed() {
  return new Promise((resolve) => {
    process.stdin.on('end', resolve);
    process.stdin.on('close', resolve);
    process.stdin.on('error', resolve);
    process.stdin.resume();
  });
}

let browser;
let exitCode = 0;
try {
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`hold-open.mjs: pageerror: ${redact(e.message)}`));
  await page.goto(`${BASE}/#token=${TOKEN}`, { waitUntil: 'domcontentloaded', timeout: WAIT_MS });
  await page.waitForSelector('#conn[data-state="live"]', { state: 'attached', timeout: WAIT_MS });
  console.log('ready');
  await stdinClosed();
  const summary = await page.evaluate(() => ({
    conn: document.querySelector('#conn')?.getAttribute('data-state') ?? null,
    runs: document.querySelectorAll('#runs [data-run-id]').length,
  }));
  console.log(JSON.stringify(summary));
} catch (err) {
  exitCode = 1;
  console.error(`hold-open.mjs: FAILED: ${redact(err?.stack ?? err)}`);
} finally {
  if (browser) await browser.close().catch((e) => console.error(`hold-open.mjs: closing the browser: ${redact(e.message)}`));
}
process.exit(exitCode);
