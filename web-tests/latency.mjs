#!/usr/bin/env node
// Latency of the stead dashboard in a real browser, for `stead-bench web`: from a run's
// recorded end (its ended_at in the ledger, written by the run's monitor) to the page first
// showing the run succeeded. Drives Debian's chromium through playwright-core, launched as
// dashboard.mjs launches it. Setup: scripts/setup-browser.
//
// Environment:
//   STEAD_URL       base URL, e.g. http://127.0.0.1:PORT
//   STEAD_TOKEN     the HTTP token (DIR/http-token)
//   STEAD_JOB       a job that succeeds at once (e.g. `true`)
//   STEAD_RUNS      how many runs to time (default 30)
//   STEAD_CHROMIUM  optional, the browser binary (default /usr/bin/chromium)
// Argument (optional): a directory for the browser's temporary profile and crash reports
// (TMPDIR, XDG_CONFIG_HOME and XDG_CACHE_HOME point there). The bench passes one under its
// own temporary directory, so that its cleanup finds node and every chromium process by
// their command lines.
//
// Opens the dashboard, waits for #conn live, then for each run, one after another: POST
// /api/jobs/JOB/run from node, wait until the page shows the run succeeded, and take the
// time a MutationObserver in the page first saw `#runs [data-run-id=ID]` with
// data-status="succeeded" (Date.now()) minus the run's ended_at (GET /api/runs/ID).
//
// Prints one line {"samples_ms":[...]} on stdout; progress and errors go to stderr.
// Exit status: 0 done; 1 failed; 2 the watchdog fired.

import fs from 'node:fs';
import path from 'node:path';
import { TERMINAL, WAIT_MS, env, launch, watchRuns } from './browser.mjs';

const SCRIPT = 'latency.mjs';



const BASE = env(SCRIPT, 'STEAD_URL').replace(/\/+$/, '');
const TOKEN = env(SCRIPT, 'STEAD_TOKEN');
const JOB = env(SCRIPT, 'STEAD_JOB');
const RUNS = Number(process.env.STEAD_RUNS || 30);
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`latency.mjs: STEAD_RUNS=${process.env.STEAD_RUNS} is not a positive integer`);
  process.exit(1);
}
const WATCHDOG_MS = 60_000 + RUNS * 2_000;

if (process.argv[2]) {
  const dir = path.resolve(process.argv[2]);
  fs.mkdirSync(dir, { recursive: true });
  for (const name of ['TMPDIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME']) process.env[name] = dir;
}

// process.exit runs playwright-core's exit hook, which kills the browser's process group.
const watchdog = setTimeout(() => {
  console.error(`latency.mjs: watchdog: ${WATCHDOG_MS / 1000} s elapsed; killing the browser`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

const redact = (s) => String(s).split(TOKEN).join('<token>');
const enc = encodeURIComponent;
const runSel = (id) => `#runs [data-run-id=${JSON.stringify(String(id))}]`;

/** A request through fetch with the Bearer token; the answer must have status `want`. */
async function apiOk(method, p, want = 200) {
  const res = await fetch(BASE + p, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await res.text();
  if (res.status !== want) throw new Error(`${method} ${p}: HTTP ${res.status}, expected ${want}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Waits until the run's element shows a final status, which must be succeeded. */
async function waitSucceeded(page, id) {
  const handle = await page.waitForFunction(
    ([sel, terminal]) => {
      const status = document.querySelector(sel)?.getAttribute('data-status');
      return terminal.includes(status) ? status : null;
    },
    [runSel(id), TERMINAL],
    { timeout: WAIT_MS },
  );
  const status = await handle.jsonValue();
  await handle.dispose();
  if (status !== 'succeeded') throw new Error(`run ${id} shows data-status="${status}", expected "succeeded"`);
}

/** One run: its recorded end to the page first showing it succeeded, in ms. */
async function timeOne(page) {
  const created = await apiOk('POST', `/api/jobs/${enc(JOB)}/run`, 201);
  const id = String(created.id);
  await waitSucceeded(page, id);
  const shownAt = await page.evaluate((rid) => window.__steadShown(rid, 'succeeded'), id);
  if (shownAt === null) throw new Error(`the page's observer never saw run ${id} succeeded`);
  const run = await apiOk('GET', `/api/runs/${enc(id)}`);
  const endedAt = Date.parse(run.ended_at);
  if (Number.isNaN(endedAt)) throw new Error(`run ${id} has no ended_at: ${JSON.stringify(run)}`);
  return shownAt - endedAt;
}

let browser;
let exitCode = 0;
try {
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`latency.mjs: pageerror: ${redact(e.message)}`));
  await page.goto(`${BASE}/#token=${TOKEN}`, { waitUntil: 'domcontentloaded', timeout: WAIT_MS });
  await page.waitForSelector('#conn[data-state="live"]', { state: 'attached', timeout: WAIT_MS });
  await page.evaluate(watchRuns);
  const samples = [];
  for (let i = 0; i < RUNS; i += 1) samples.push(await timeOne(page));
  console.log(JSON.stringify({ samples_ms: samples }));
} catch (err) {
  exitCode = 1;
  console.error(`latency.mjs: FAILED: ${redact(err?.stack ?? err)}`);
} finally {
  if (browser) await browser.close().catch((e) => console.error(`latency.mjs: closing the browser: ${redact(e.message)}`));
  clearTimeout(watchdog);
}
process.exit(exitCode);
