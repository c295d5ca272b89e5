// Headless Chromium (Debian's, driven by playwright-core) for the dashboard's tests, on a
// profile of its own that starts empty: nothing a former run kept (a token in sessionStorage,
// a cached file) shapes what the page shows.
import { rmSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

export async function launchBrowser(profile: string): Promise<BrowserContext> {
  rmSync(profile, { recursive: true, force: true });
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 1000 },
  });
}
