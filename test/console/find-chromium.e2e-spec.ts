import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findChromium, NO_CHROMIUM } from '../support/chromium';

/** Which Chromium the browser tests drive (test/support/chromium.ts), and the one line when there is none. */
describe('the browser tests find a Chromium', () => {
  const nowhere = '/nonexistent/chromium';
  const none = () => Promise.reject(new Error('no packaged build here'));

  it('CHROMIUM_PATH first; a CHROMIUM_PATH that does not exist is an error, not a fallback', async () => {
    expect(await findChromium({ CHROMIUM_PATH: process.execPath }, [nowhere], none)).toBe(process.execPath);
    await expect(findChromium({ CHROMIUM_PATH: nowhere }, [process.execPath], none)).rejects.toThrow(
      `CHROMIUM_PATH=${nowhere} does not exist; ${NO_CHROMIUM}`,
    );
  });

  it("then the system's, then the packaged one", async () => {
    expect(await findChromium({}, [nowhere, process.execPath], none)).toBe(process.execPath);
    expect(await findChromium({}, [nowhere], () => Promise.resolve('/packaged/chromium'))).toBe('/packaged/chromium');
  });

  it('none: the run fails with one line saying how to get one', async () => {
    const error = await findChromium({}, [nowhere], none).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(NO_CHROMIUM);
    expect(NO_CHROMIUM).not.toContain('\n');
    expect(NO_CHROMIUM).toMatch(/CHROMIUM_PATH.*apt-get install -y chromium/);
  });

  it('the Chromium that npm installs runs on this machine', async () => {
    const path = await findChromium({}, []);
    expect(existsSync(path)).toBe(true);
    expect(execFileSync(path, ['--version'], { encoding: 'utf8' })).toMatch(/^Chromium \d+\./);
  }, 120_000);
});
