import { existsSync } from 'node:fs';

/** Where a Chromium or Chrome usually is, when CHROMIUM_PATH names none. */
export const SYSTEM_CHROMIUMS = [
  '/usr/bin/chromium', // Debian
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

export const NO_CHROMIUM =
  'no Chromium for the browser tests: set CHROMIUM_PATH to a Chromium or Chrome, or install one (Debian: apt-get install -y chromium)';

/**
 * The browser the Console's tests drive: CHROMIUM_PATH, else one installed on the
 * system, else the Linux build the `@sparticuz/chromium` dev dependency ships through the
 * npm registry (unpacked into the temporary directory on first use; Linux x64 and arm64
 * only). None: one line saying how to get one.
 */
export async function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  candidates: readonly string[] = SYSTEM_CHROMIUMS,
  packaged: () => Promise<string> = packagedChromium,
): Promise<string> {
  if (env.CHROMIUM_PATH) {
    if (existsSync(env.CHROMIUM_PATH)) {
      return env.CHROMIUM_PATH;
    }
    throw new Error(`CHROMIUM_PATH=${env.CHROMIUM_PATH} does not exist; ${NO_CHROMIUM}`);
  }
  const installed = candidates.find((path) => existsSync(path));
  if (installed) {
    return installed;
  }
  try {
    return await packaged();
  } catch {
    throw new Error(NO_CHROMIUM);
  }
}

async function packagedChromium(): Promise<string> {
  if (process.platform !== 'linux') {
    throw new Error('a Linux build');
  }
  const { default: chromium } = await import('@sparticuz/chromium');
  return chromium.executablePath();
}
