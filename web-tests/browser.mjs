// What the browser scripts share: how Debian's chromium is launched here, and how a
// required environment variable is read.
//
// The flags keep headless chromium off the network it would otherwise reach for at every
// start (this machine's network is closed: those connections fail, many at a time).

export const WAIT_MS = 20_000;
export const TERMINAL = ['succeeded', 'failed', 'cancelled', 'interrupted', 'skipped'];
export const CHROMIUM = process.env.STEAD_CHROMIUM || '/usr/bin/chromium';

const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches the system chromium headless, with the flags above. playwright-core is loaded
 * only now, so a script may first point TMPDIR at a directory of its own (the browser's
 * profile goes there).
 */
export async function launch() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: BROWSER_ARGS,
    timeout: WAIT_MS,
  });
}

/** The value of environment variable `name`; exits 1 naming the script when unset. */
export function env(script, name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${script}: environment variable ${name} is not set`);
    process.exit(1);
  }
  return value;
}

/**
 * Runs in the page: records when each (run id, status) is first shown in `#runs`, for
 * `window.__steadShown(id, status)` to answer (Date.now() then, or null). Idempotent.
 */
export function watchRuns() {
  if (window.__steadShown) return;
  const shown = new Map();
  const scan = () => {
    const t = Date.now();
    for (const el of document.querySelectorAll('#runs [data-run-id]')) {
      const key = `${el.getAttribute('data-run-id')}|${el.getAttribute('data-status')}`;
      if (!shown.has(key)) shown.set(key, t);
    }
  };
  scan();
  new MutationObserver(scan).observe(document.documentElement, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['data-run-id', 'data-status'],
  });
  window.__steadShown = (id, status) => shown.get(`${id}|${status}`) ?? null;
}
