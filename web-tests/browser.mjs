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
