#!/usr/bin/env node
// Real-browser test of the stead dashboard: drives Debian's chromium through playwright-core
// against a running `stead serve` with its HTTP listener. Setup: scripts/setup-browser.
//
// Environment:
//   STEAD_URL         base URL, e.g. http://127.0.0.1:PORT
//   STEAD_TOKEN       the HTTP token (DIR/http-token)
//   STEAD_SCREENSHOT  where to write the full-page PNG (its directory is created)
//   STEAD_JOB_FAST    a job that ends quickly, succeeds and prints `done` (e.g. `sleep 1; echo done`)
//   STEAD_JOB_SLOW    a job that runs long (e.g. `sleep 300`); it is run, cancelled and toggled
//   STEAD_JOB_FLAKY   a job that fails at once, with `retries` 1 and a short retry delay
//   STEAD_JOB_AFTER   a job that runs `after` STEAD_JOB_FAST, and has (so STEAD_JOB_FAST has run)
//   STEAD_QUEUE       a queue of `parallel` 1, shared by the next two jobs and no other
//   STEAD_JOB_HOLD    a job of that queue that runs long; it is run, then cancelled
//   STEAD_JOB_QUEUED  a job of that queue that ends quickly; run with parameters, then cancelled
//   STEAD_JOB_PAUSE   a scheduled job, not paused; it is paused, unpaused and left paused
//   STEAD_JOB_PAUSED  a job firing every few seconds, paused; it is disabled once checked
//   STEAD_NOTIFIER    a notifier
//   STEAD_JOB_STEPS   a job that has run once, completing the steps `fetch` then `upload`
//                     (`stead step`) and setting the checkpoint `draft`
//   STEAD_JOB_WAITED  a job that has run once, waiting for the network it never had
//   STEAD_CHROMIUM    optional, the browser binary (default /usr/bin/chromium)
//
// Prints `ok - <step>` per step and `dashboard_latency_ms=<n>` on stdout. Exit status: 0 all
// passed; 1 a step failed (details, #conn/#runs HTML and the page's console on stderr, a
// `-failure.png` screenshot beside STEAD_SCREENSHOT); 2 the 120 s watchdog fired.
// Every wait is on a condition, with a timeout of at most 20 s.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TERMINAL, WAIT_MS, env, launch, watchRuns } from './browser.mjs';

const SCRIPT = 'dashboard.mjs';


const WATCHDOG_MS = 120_000;
const POLL_MS = 20;

const BASE = env(SCRIPT, 'STEAD_URL').replace(/\/+$/, '');
const TOKEN = env(SCRIPT, 'STEAD_TOKEN');
const SHOT = path.resolve(env(SCRIPT, 'STEAD_SCREENSHOT'));
const FAST = env(SCRIPT, 'STEAD_JOB_FAST');
const SLOW = env(SCRIPT, 'STEAD_JOB_SLOW');
const FLAKY = env(SCRIPT, 'STEAD_JOB_FLAKY');
const AFTER = env(SCRIPT, 'STEAD_JOB_AFTER');
const QUEUE = env(SCRIPT, 'STEAD_QUEUE');
const HOLD = env(SCRIPT, 'STEAD_JOB_HOLD');
const QUEUED = env(SCRIPT, 'STEAD_JOB_QUEUED');
const PAUSE = env(SCRIPT, 'STEAD_JOB_PAUSE');
const PAUSED = env(SCRIPT, 'STEAD_JOB_PAUSED');
const NOTIFIER = env(SCRIPT, 'STEAD_NOTIFIER');
const STEPS = env(SCRIPT, 'STEAD_JOB_STEPS');
const WAITED = env(SCRIPT, 'STEAD_JOB_WAITED');
const SHOT_FAILURE = SHOT.endsWith('.png') ? `${SHOT.slice(0, -4)}-failure.png` : `${SHOT}-failure.png`;
const base = new URL(BASE);

// ---------------------------------------------------------------------------------------------
// Watchdog: process.exit runs playwright-core's exit hook, which SIGKILLs the browser's whole
// process group (it is spawned detached, as a group leader) and removes its temporary profile.

let current = 'startup';
const watchdog = setTimeout(() => {
  console.log(`not ok - ${current} (watchdog)`);
  console.error(`dashboard.mjs: watchdog: ${WATCHDOG_MS / 1000} s elapsed during step "${current}"; killing the browser`);
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();

// ---------------------------------------------------------------------------------------------
// Helpers

const redact = (s) => String(s).split(TOKEN).join('<token>');
const q = (s) => JSON.stringify(String(s)); // a CSS attribute value
const enc = encodeURIComponent;
const jobRow = (name) => `#jobs tr[data-job=${q(name)}]`;
const runSel = (id) => `#runs [data-run-id=${q(id)}]`;

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A request through fetch (with the Bearer token unless `token` is null; `body` sent as JSON). */
async function api(method, p, { token = TOKEN, headers = {}, body } = {}) {
  const h = { ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(BASE + p, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

async function apiOk(method, p, want = 200, body = undefined) {
  const r = await api(method, p, { body });
  if (r.status !== want) throw new Error(`${method} ${p}: HTTP ${r.status}, expected ${want}: ${r.text.slice(0, 300)}`);
  return r.json;
}

/** A GET through node's http module, which (unlike fetch) lets us set Host. No headers added. */
function rawGet(p, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname.replace(/^\[|\]$/g, ''),
        port: base.port || 80,
        path: p,
        method: 'GET',
        headers,
        agent: false,
        timeout: WAIT_MS,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => {
          let json;
          try {
            json = JSON.parse(body);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode, text: body, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${p}: no answer within ${WAIT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Polls GET /api/runs/<id> every 20 ms until the run has ended; `at` is when node saw it. */
async function pollUntilEnded(id) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const sent = Date.now();
    const r = await api('GET', `/api/runs/${enc(id)}`);
    const at = Date.now();
    if (r.status !== 200) throw new Error(`GET /api/runs/${id}: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    if (TERMINAL.includes(r.json.status)) return { at, run: r.json };
    if (at > deadline) throw new Error(`run ${id} did not end within ${WAIT_MS} ms (status ${r.json.status})`);
    await delay(Math.max(0, sent + POLL_MS - Date.now()));
  }
}

/** Polls the API until `check(json)` holds (the page may update before a later read sees it). */
async function pollApi(p, check, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const sent = Date.now();
    const json = await apiOk('GET', p);
    if (check(json)) return json;
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${WAIT_MS} ms: ${JSON.stringify(json).slice(0, 300)}`);
    await delay(Math.max(0, sent + POLL_MS - Date.now()));
  }
}

// ---------------------------------------------------------------------------------------------
// The run

let browser;
let page;
const pageLog = []; // the page's console errors, failed requests, HTTP errors, dialogs
const note = (line) => {
  pageLog.push(redact(line));
  if (pageLog.length > 200) pageLog.shift();
};

async function step(description, fn) {
  current = description;
  const detail = await fn();
  console.log(`ok - ${description}${detail ? ` (${detail})` : ''}`);
}

/** The run ids the timeline shows. */
const runIdsOnPage = () =>
  page.$$eval('#runs [data-run-id]', (els) => els.map((el) => el.getAttribute('data-run-id')));

/** Waits until the run's element shows `want`; fails at once on another final status. */
async function waitStatus(id, want) {
  const handle = await page.waitForFunction(
    ([sel, wanted, terminal]) => {
      const el = document.querySelector(sel);
      const status = el && el.getAttribute('data-status');
      return status === wanted || terminal.includes(status) ? status : null;
    },
    [runSel(id), want, TERMINAL],
    { timeout: WAIT_MS },
  );
  const got = await handle.jsonValue();
  await handle.dispose();
  if (got !== want) throw new Error(`run ${id} shows data-status="${got}", expected "${want}"`);
}

/**
 * Waits for a run element whose id is not in `known` and which the API says is a run of `job`
 * (other jobs' runs may appear meanwhile: they are passed over).
 */
async function waitNewRunOf(job, known) {
  const passed = new Set(known.map(String));
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`no new run of ${job} appeared in #runs within ${WAIT_MS} ms`);
    const handle = await page.waitForFunction(
      (seen) => {
        const fresh = [...document.querySelectorAll('#runs [data-run-id]')]
          .map((el) => el.getAttribute('data-run-id'))
          .filter((id) => !seen.includes(id));
        return fresh.length ? fresh : null;
      },
      [...passed],
      { timeout: remaining },
    );
    const fresh = await handle.jsonValue();
    await handle.dispose();
    for (const id of fresh) {
      passed.add(id);
      const r = await api('GET', `/api/runs/${enc(id)}`);
      if (r.status === 200 && r.json.job === job) return { id, run: r.json };
    }
  }
}

/** Waits until element `sel` holds each of `parts` in its text; answers the text. */
async function waitText(sel, parts) {
  try {
    const handle = await page.waitForFunction(
      ([s, want]) => {
        const text = document.querySelector(s)?.textContent ?? null;
        return text !== null && want.every((w) => text.includes(w)) ? text : null;
      },
      [sel, parts],
      { timeout: WAIT_MS },
    );
    const text = await handle.jsonValue();
    await handle.dispose();
    return text;
  } catch (err) {
    const text = await page.locator(sel).first().textContent({ timeout: 1_000 }).catch(() => '(absent)');
    throw new Error(`${sel} does not show ${JSON.stringify(parts)}: it reads ${JSON.stringify(text)} (${err.message})`);
  }
}

/** Waits until an attribute of element `sel` has a value; answers it. */
async function waitAttribute(sel, name) {
  const handle = await page.waitForFunction(
    ([s, n]) => document.querySelector(s)?.getAttribute(n) ?? null,
    [sel, name],
    { timeout: WAIT_MS },
  );
  const value = await handle.jsonValue();
  await handle.dispose();
  return value;
}

/** Clicks a run element somewhere that is not one of its buttons, links or inputs. */
async function clickRunElement(sel) {
  const loc = page.locator(sel);
  await loc.scrollIntoViewIfNeeded({ timeout: WAIT_MS });
  const position = await loc.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const spots = [[0.5, 0.5], [0.1, 0.5], [0.3, 0.5], [0.7, 0.5], [0.9, 0.5], [0.05, 0.2], [0.5, 0.1]];
    for (const [fx, fy] of spots) {
      const hit = document.elementFromPoint(r.left + r.width * fx, r.top + r.height * fy);
      if (!hit || !el.contains(hit)) continue;
      const control = hit.closest('button, a, input, select, textarea, label, summary');
      if (control && control !== el && el.contains(control)) continue;
      return { x: r.width * fx, y: r.height * fy };
    }
    return null;
  });
  await loc.click({ position: position ?? undefined, timeout: WAIT_MS });
}

async function run() {
  current = 'launch chromium';
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') note(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => note(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => note(`requestfailed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) note(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  // A confirm() before cancel or disable is fine: accept it (playwright would dismiss it).
  page.on('dialog', (d) => {
    note(`dialog (${d.type()}) accepted: ${d.message()}`);
    d.accept().catch(() => {});
  });

  // a. Open with the token in the fragment.
  await step('open the dashboard with #token=...; #conn goes live', async () => {
    await page.goto(`${BASE}/#token=${TOKEN}`, { waitUntil: 'domcontentloaded', timeout: WAIT_MS });
    await page.waitForSelector('#conn[data-state="live"]', { state: 'attached', timeout: WAIT_MS });
  });
  await step('the token is removed from the address bar and kept in sessionStorage', async () => {
    await page.waitForFunction(() => !location.hash.includes('token='), null, { timeout: WAIT_MS });
    const { href, stored } = await page.evaluate(() => ({
      href: location.href,
      stored: sessionStorage.getItem('stead-token'),
    }));
    if (href.includes(TOKEN) || href.includes('token=')) throw new Error(`location.href still holds the token: ${redact(href)}`);
    if (stored !== TOKEN) throw new Error('sessionStorage "stead-token" does not hold the token');
  });
  await step(`the rows of jobs ${FAST} and ${SLOW} are visible`, async () => {
    await page.locator(jobRow(FAST)).waitFor({ state: 'visible', timeout: WAIT_MS });
    await page.locator(jobRow(SLOW)).waitFor({ state: 'visible', timeout: WAIT_MS });
  });

  // b. A run started behind the page's back appears and finishes live (event stream).
  let fastRunB;
  await step(`a run of ${FAST} started through the API appears and ends live on the page`, async () => {
    // Record, inside the page, when each (run id, status) is first shown.
    await page.evaluate(watchRuns);
    const before = await runIdsOnPage();
    const created = await apiOk('POST', `/api/jobs/${enc(FAST)}/run`, 201);
    const id = String(created.id);
    fastRunB = id;
    if (before.includes(id)) throw new Error(`run ${id} was on the page before it was created`);
    const [ended] = await Promise.all([
      pollUntilEnded(id),
      (async () => {
        await page.waitForSelector(runSel(id), { state: 'visible', timeout: WAIT_MS });
        await waitStatus(id, 'succeeded');
      })(),
    ]);
    if (ended.run.status !== 'succeeded') throw new Error(`run ${id} ended ${ended.run.status} per the API`);
    const text = await page.locator(runSel(id)).textContent({ timeout: WAIT_MS });
    if (!text.includes(FAST)) throw new Error(`run ${id}'s element does not show its job name ${FAST}: ${JSON.stringify(text)}`);
    const shownAt = (await page.evaluate(([rid]) => window.__steadShown(rid, 'succeeded'), [id])) ?? Date.now();
    // From the end the ledger recorded (the monitor's clock; same machine) to the page
    // showing it: the whole path through the server, the event stream and the render.
    const endedAt = Date.parse(ended.run.ended_at);
    if (Number.isNaN(endedAt)) throw new Error(`run ${id} has no ended_at: ${JSON.stringify(ended.run)}`);
    const latency = shownAt - endedAt;
    console.log(`dashboard_latency_ms=${Math.round(latency)}`);
    return `run ${id}, shown ${latency} ms after its recorded end`;
  });

  // c. "Run now" on the page.
  let fastRunC;
  await step(`"Run now" on ${FAST} shows a new on-demand run`, async () => {
    const known = [...(await runIdsOnPage()), fastRunB];
    await page.click(`${jobRow(FAST)} button[data-action="run"]`, { timeout: WAIT_MS });
    const { id, run: r } = await waitNewRunOf(FAST, known);
    fastRunC = id;
    if (r.trigger !== 'on_demand') throw new Error(`run ${id} has trigger ${r.trigger}, expected on_demand`);
    const trigger = await page.locator(runSel(id)).getAttribute('data-trigger', { timeout: WAIT_MS });
    if (trigger !== 'on_demand') throw new Error(`run ${id} shows data-trigger="${trigger}", expected "on_demand"`);
    return `run ${id}`;
  });
  await step(`the new run of ${FAST} reaches succeeded`, async () => {
    await waitStatus(fastRunC, 'succeeded');
  });

  // d. Select it: its log shows.
  await step(`selecting run ${fastRunC} shows its log ("done")`, async () => {
    await clickRunElement(runSel(fastRunC));
    await page.waitForFunction(
      () => (document.querySelector('#log-text')?.textContent ?? '').includes('done'),
      null,
      { timeout: WAIT_MS },
    );
  });

  // e. Cancel a running run.
  let slowRun;
  await step(`"Run now" on ${SLOW} shows a new run that gets to running`, async () => {
    const known = await runIdsOnPage();
    await page.click(`${jobRow(SLOW)} button[data-action="run"]`, { timeout: WAIT_MS });
    ({ id: slowRun } = await waitNewRunOf(SLOW, known));
    await waitStatus(slowRun, 'running');
    return `run ${slowRun}`;
  });
  await step(`cancelling that run of ${SLOW} from the page ends it cancelled`, async () => {
    await page.click(`${runSel(slowRun)} button[data-action="cancel"]`, { timeout: WAIT_MS });
    await waitStatus(slowRun, 'cancelled');
    await pollApi(`/api/runs/${enc(slowRun)}`, (r) => r.status === 'cancelled', `run ${slowRun} cancelled per the API`);
  });

  // f. Disable and enable again.
  const row = jobRow(SLOW);
  const toggle = `${row} button[data-action="toggle"]`;
  const initial = await page.locator(row).getAttribute('data-enabled', { timeout: WAIT_MS });
  if (initial !== 'true' && initial !== 'false') {
    current = `the row of ${SLOW} has data-enabled`;
    throw new Error(`${row} has data-enabled=${JSON.stringify(initial)}, expected "true" or "false"`);
  }
  const flipped = initial === 'true' ? 'false' : 'true';
  for (const want of [flipped, initial]) {
    const verb = want === 'true' ? 'enable' : 'disable';
    await step(`the toggle button ${verb}s ${SLOW} (data-enabled="${want}")`, async () => {
      await page.click(toggle, { timeout: WAIT_MS });
      await page.waitForSelector(`${row}[data-enabled="${want}"]`, { timeout: WAIT_MS });
      await pollApi(`/api/jobs/${enc(SLOW)}`, (j) => String(j.enabled !== false) === want, // the wire omits `enabled` when true
      `job ${SLOW} enabled=${want} per the API`);
      const label = ((await page.locator(toggle).textContent({ timeout: WAIT_MS })) ?? '').trim();
      const expected = want === 'true' ? 'Disable' : 'Enable';
      if (!label.includes(expected)) throw new Error(`the toggle button reads ${JSON.stringify(label)}, expected "${expected}"`);
    });
  }

  // g. A retry chain: the failed run links to its retry, and the retry back to it.
  let failed;
  let retry;
  await step(`a run of ${FLAKY} fails; its row links to its retry, whose row says what it retries`, async () => {
    failed = String((await apiOk('POST', `/api/jobs/${enc(FLAKY)}/run`, 201)).id);
    retry = await waitAttribute(`${runSel(failed)} button.follow`, 'data-target');
    const r = await apiOk('GET', `/api/runs/${enc(retry)}`);
    if (r.trigger !== 'retry' || String(r.parent_id) !== failed) {
      throw new Error(`run ${retry} is not a retry of run ${failed}: ${JSON.stringify(r)}`);
    }
    await waitText(runSel(failed), [`retried as #${retry}`]);
    await waitText(runSel(retry), [`retry of #${failed}`, 'attempt 2']);
    return `run ${failed}, retried as run ${retry}`;
  });
  await step(`following that link shows the retry, whose details lead back to the failed run`, async () => {
    await page.click(`${runSel(failed)} button.follow`, { timeout: WAIT_MS });
    await waitText('#details-h', [`Run #${retry}`]);
    await waitText('#details-explain', [`Retries failed run #${failed}`]);
    await page.waitForSelector(`#details-nav button[data-target=${q(failed)}]`, { timeout: WAIT_MS });
  });

  // h. An after-run names the upstream run whose success started it.
  await step(`the run of ${AFTER} says which run of ${FAST} it follows`, async () => {
    const [after] = await apiOk('GET', `/api/runs?job=${enc(AFTER)}&limit=1`);
    if (!after || after.trigger !== 'after') throw new Error(`no after-run of ${AFTER}: ${JSON.stringify(after)}`);
    await waitText(runSel(after.id), [`after #${after.parent_id}`, `of ${FAST}`]);
    return `run ${after.id}, after run ${after.parent_id}`;
  });

  // i. A queue: one run holds its only place, the next waits, with its own parameters.
  let held;
  let queued;
  await step(`a run of ${QUEUED} waits for a place in queue ${QUEUE} while ${HOLD} runs`, async () => {
    held = String((await apiOk('POST', `/api/jobs/${enc(HOLD)}/run`, 201)).id);
    await waitStatus(held, 'running');
    const params = { env: { GREETING: 'hello world' }, args: ['a', 'b c'] };
    queued = String((await apiOk('POST', `/api/jobs/${enc(QUEUED)}/run`, 201, params)).id);
    await waitText(`${runSel(queued)} .waiting`, [`a place in queue ${QUEUE}`]);
    return `run ${queued} waits behind run ${held}`;
  });
  await step(`the waiting run's details show its parameters and its queue`, async () => {
    await clickRunElement(runSel(queued));
    await waitText('#details-h', [`Run #${queued}`]);
    await waitText('#run-fields', ["GREETING='hello world'", "a 'b c'", `a place in queue ${QUEUE}`]);
  });
  await step(`a run's details show its steps as segments, in order, and its checkpoint keys`, async () => {
    const run = (await apiOk('GET', `/api/runs?job=${enc(STEPS)}`))[0];
    if (!run) throw new Error(`no run of ${STEPS} per the API`);
    await clickRunElement(runSel(run.id));
    await waitText('#details-h', [`Run #${run.id}`]);
    await waitText('#run-steps', ['fetch', 'upload', 'attempt 1', 'draft']);
    const names = await page.$$eval('#run-steps .steps-bar .step-name', (els) => els.map((e) => e.textContent));
    if (names.join(',') !== 'fetch,upload') throw new Error(`segments: ${names.join(',')}`);
    return `run ${run.id}: ${names.join(' → ')}`;
  });
  await step(`a run's details show what it waited for and how the wait ended`, async () => {
    const run = (await apiOk('GET', `/api/runs?job=${enc(WAITED)}`))[0];
    if (!run || !run.wait_note) throw new Error(`no run of ${WAITED} with a wait per the API: ${JSON.stringify(run)}`);
    await clickRunElement(runSel(run.id));
    await waitText('#details-h', [`Run #${run.id}`]);
    await waitText('#run-fields', ['waited_ms', 'wait_note', run.wait_note]);
    return `run ${run.id}: ${run.wait_note}`;
  });
  await step(`the queues section lists ${QUEUE}: 1 of 1 running, 1 waiting, and its jobs`, async () => {
    const row = `#queues-table tr[data-queue=${q(QUEUE)}]`;
    await waitText(row, [QUEUE, '1 of 1', HOLD, QUEUED]);
    await waitText(`${row} td:nth-of-type(2)`, ['1']);
  });
  await step(`the notifiers section lists ${NOTIFIER}, its receiver and its events`, async () => {
    const notifier = (await apiOk('GET', '/api/notifiers')).find((n) => n.name === NOTIFIER);
    if (!notifier) throw new Error(`no notifier ${NOTIFIER} per the API`);
    await waitText(`#notifiers-table tr[data-notifier=${q(NOTIFIER)}]`, [NOTIFIER, notifier.url, ...notifier.delivers]);
  });

  // j. Pauses: one made elsewhere shows; Unpause and Pause act.
  const pauseRow = jobRow(PAUSE);
  const pauseButton = `${pauseRow} button[data-action="pause"]`;
  await step(`${PAUSE} paused through the API shows as paused, with its end`, async () => {
    const job = await apiOk('POST', `/api/jobs/${enc(PAUSE)}/pause`, 200, { for: '2h' });
    if (!job.paused_until) throw new Error(`the pause's answer has no paused_until: ${JSON.stringify(job)}`);
    await page.waitForSelector(`${pauseRow}[data-paused="true"]`, { timeout: WAIT_MS });
    await waitText(pauseRow, ['paused', 'until']);
    await waitText(pauseButton, ['Unpause']);
  });
  await step(`the Unpause button unpauses ${PAUSE}`, async () => {
    await page.click(pauseButton, { timeout: WAIT_MS });
    await page.waitForSelector(`${pauseRow}[data-paused="false"]`, { timeout: WAIT_MS });
    await pollApi(`/api/jobs/${enc(PAUSE)}`, (j) => !j.paused_until, `job ${PAUSE} not paused per the API`);
    await waitText(pauseButton, ['Pause 1 h']);
  });
  await step(`the Pause button pauses ${PAUSE} for an hour`, async () => {
    const asked = Date.now();
    await page.click(pauseButton, { timeout: WAIT_MS });
    await page.waitForSelector(`${pauseRow}[data-paused="true"]`, { timeout: WAIT_MS });
    const job = await pollApi(`/api/jobs/${enc(PAUSE)}`, (j) => Boolean(j.paused_until), `job ${PAUSE} paused per the API`);
    const ahead = Date.parse(job.paused_until) - asked;
    if (Math.abs(ahead - 3_600_000) > 60_000) throw new Error(`paused until ${job.paused_until}: not an hour from the click`);
    return `until ${job.paused_until}`;
  });

  // k. A fire a pause passed over: a skipped tick on the timeline, its title naming the pause.
  await step(`a fire of ${PAUSED} passed over by its pause reads as such on the timeline`, async () => {
    const handle = await page.waitForFunction(
      (job) => {
        for (const el of document.querySelectorAll('#tl-layer .tl-skip')) {
          const title = el.getAttribute('title') || '';
          if (title.includes(` · ${job}\n`) && title.includes('the job is paused until ')) return title;
        }
        return null;
      },
      PAUSED,
      { timeout: WAIT_MS },
    );
    const title = await handle.jsonValue();
    await handle.dispose();
    if (/\d{4}-\d\d-\d\dT\d\d:/.test(title)) throw new Error(`the title shows a raw RFC 3339 time: ${JSON.stringify(title)}`);
    await apiOk('POST', `/api/jobs/${enc(PAUSED)}/disable`); // no more fires to skip
    return JSON.stringify(title);
  });

  // l. Security, from node.
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const expectStatus = async (description, headers, want, code) => {
    await step(description, async () => {
      const r = await rawGet('/api/status', headers);
      if (r.status !== want) throw new Error(`HTTP ${r.status}, expected ${want}: ${r.text.slice(0, 300)}`);
      if (code && r.json?.code !== code) throw new Error(`body ${r.text.slice(0, 300)}, expected code "${code}"`);
    });
  };
  await expectStatus('GET /api/status with the token: 200', { Host: base.host, ...auth }, 200);
  await expectStatus('GET /api/status without a token: 401', { Host: base.host }, 401, 'unauthorized');
  await expectStatus(
    'GET /api/status with a wrong token: 401',
    { Host: base.host, Authorization: `Bearer ${'0'.repeat(64)}` },
    401,
    'unauthorized',
  );
  await expectStatus(
    `GET /api/status with Host: evil.example:${base.port}: 403`,
    { Host: `evil.example:${base.port}`, ...auth },
    403,
    'forbidden',
  );
  await expectStatus(
    'GET /api/status with Origin: http://evil.example: 403',
    { Host: base.host, Origin: 'http://evil.example', ...auth },
    403,
    'forbidden',
  );
  await expectStatus(
    'GET /api/status with Sec-Fetch-Site: cross-site: 403',
    { Host: base.host, 'Sec-Fetch-Site': 'cross-site', ...auth },
    403,
    'forbidden',
  );

  // m. Screenshot.
  await step(`full-page screenshot saved to ${SHOT}`, async () => {
    fs.mkdirSync(path.dirname(SHOT), { recursive: true });
    await page.screenshot({ path: SHOT, fullPage: true, timeout: WAIT_MS });
    if (fs.statSync(SHOT).size === 0) throw new Error('the screenshot is empty');
  });

  // n. The queue's place passes on, and the queue empties.
  await step(`cancelling the run of ${HOLD} lets the waiting run of ${QUEUED} run; queue ${QUEUE} empties`, async () => {
    await apiOk('POST', `/api/runs/${enc(held)}/cancel`);
    await waitStatus(held, 'cancelled');
    await waitStatus(queued, 'succeeded');
    await waitText(`#queues-table tr[data-queue=${q(QUEUE)}]`, ['0 of 1']);
  });
}

async function reportFailure(err) {
  console.log(`not ok - ${current}`);
  console.error(`dashboard.mjs: FAILED: ${current}`);
  console.error(redact(err?.stack ?? err));
  if (page && !page.isClosed()) {
    try {
      const html = await withTimeout(
        page.evaluate(() =>
          ['#conn', '#runs'].map((sel) => {
            const el = document.querySelector(sel);
            return `--- ${sel}:\n${el ? el.outerHTML : '(absent)'}`;
          }),
        ),
        5_000,
        'reading #conn and #runs',
      );
      for (const part of html) console.error(redact(part.length > 20_000 ? `${part.slice(0, 20_000)}\n(... cut)` : part));
    } catch (e) {
      console.error(`(could not read #conn/#runs: ${redact(e.message)})`);
    }
  }
  if (pageLog.length) console.error(`--- the page's console errors, failed requests, HTTP errors, dialogs:\n${pageLog.join('\n')}`);
  if (page && !page.isClosed()) {
    try {
      fs.mkdirSync(path.dirname(SHOT_FAILURE), { recursive: true });
      await page.screenshot({ path: SHOT_FAILURE, fullPage: true, timeout: 10_000 });
      console.error(`--- failure screenshot: ${SHOT_FAILURE}`);
    } catch (e) {
      console.error(`(could not save the failure screenshot: ${redact(e.message)})`);
    }
  }
}

let exitCode = 0;
fs.rmSync(SHOT_FAILURE, { force: true }); // a previous run's
try {
  await run();
} catch (err) {
  exitCode = 1;
  await reportFailure(err);
} finally {
  if (browser) {
    // If closing hangs, process.exit's hook kills the browser's process group anyway.
    await withTimeout(browser.close(), 10_000, 'closing the browser').catch((e) => console.error(redact(e.message)));
  }
  clearTimeout(watchdog);
}
process.exit(exitCode);
