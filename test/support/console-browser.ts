import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startAppAtOwnAddress, type TestApp } from './app';
import { findChromium } from './chromium';

const ROOT = resolve(__dirname, '../..');

/** Long enough for a loaded CI machine; every wait ends as soon as the page shows what it waits for. */
export const WAIT = { timeout: 20_000 };

/** The Console's suites: the built app, the service serving it, a Chromium, and every page's JavaScript errors. */
export interface ConsoleBrowser {
  t: TestApp;
  browser: Browser;
  /** A page whose JavaScript errors are collected, at a phone's height below 800 px. */
  newPage(context: BrowserContext, width?: number): Promise<Page>;
  /** The errors seen since the last call (a suite expects none after each journey). */
  takeErrors(): string[];
  /** A Console page's URL: `/identities` → http://127.0.0.1:port/console/identities. */
  url(path: string): string;
  /** A full-page screenshot: to docs/screenshots/ with UPDATE_SCREENSHOTS=1, to a temporary folder otherwise. */
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Builds the Console as `npm run build` does (into a temporary folder), starts the service
 * on its own test database with PUBLIC_BASE_URL set to its real address (and `env`), and
 * launches a headless Chromium (found as test/support/chromium.ts says). `port`: the service's
 * (a suite that must name its address before it starts, e.g. to a single sign-on provider,
 * calls this within onFreePort).
 */
export async function startConsoleBrowser(env: Record<string, string> = {}, port?: number): Promise<ConsoleBrowser> {
  const executablePath = await findChromium();
  const outDir = mkdtempSync(join(tmpdir(), 'console-build-'));
  const shots =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? join(ROOT, 'docs/screenshots')
      : mkdtempSync(join(tmpdir(), 'console-shots-'));
  mkdirSync(shots, { recursive: true });
  await promisify(execFile)(
    process.execPath,
    ['node_modules/vite/bin/vite.js', 'build', '--config', 'console/vite.config.ts', '--logLevel', 'error'],
    { cwd: ROOT, env: { ...process.env, CONSOLE_OUT_DIR: outDir } },
  );
  const t = await startAppAtOwnAddress({ CONSOLE_DIR: outDir, ...env }, { port }).catch((error) => {
    rmSync(outDir, { recursive: true, force: true });
    throw error;
  });
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  } catch (error) {
    await t.close();
    rmSync(outDir, { recursive: true, force: true });
    throw error;
  }
  const errors: string[] = [];
  const watch = (page: Page): Page => {
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') {
        return;
      }
      // Chromium logs every 4xx answer as "Failed to load resource"; the Console asks for its
      // session before sign-in (401) and shows problems to the person. Those are HTTP answers,
      // not JavaScript errors; anything else is.
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
        return;
      }
      errors.push(`console.error: ${message.text()} (${message.location().url})`);
    });
    return page;
  };
  return {
    t,
    browser,
    newPage: async (context, width = 1280) => {
      const page = watch(await context.newPage());
      await page.setViewportSize({ width, height: width > 800 ? 860 : 844 });
      return page;
    },
    takeErrors: () => errors.splice(0),
    url: (path) => `${t.baseUrl}/console${path}`,
    shot: async (page, name) => {
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await browser.close();
      await t.close();
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}
