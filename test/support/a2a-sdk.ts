import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What the official `@a2a-js/sdk` client makes of an Agent Card URL: the card its
 * DefaultAgentCardResolver resolves, and the transport and endpoint ClientFactory
 * picks from it. It runs in a child Node process because the SDK's client loads
 * `jose`, an ES module, which Jest's CommonJS loader cannot require on Node 20
 * (plain Node can); the child reaches the test server over real HTTP.
 */
export interface SdkResolution {
  card: Record<string, unknown>;
  transport: string;
  endpoint: string;
}

const SCRIPT = `
import { ClientFactory, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
const [url, path] = JSON.parse(process.argv[1]);
const card = await new DefaultAgentCardResolver().resolve(url, path ?? undefined);
const client = await new ClientFactory().createFromUrl(url, path ?? undefined);
process.stdout.write(JSON.stringify({ card, transport: client.transport.constructor.name, endpoint: client.transport.endpoint }));
`;

/** `path` as the SDK takes it: omitted → `.well-known/agent-card.json` relative to `url`; '' → `url` itself. */
export async function resolveWithSdk(url: string, path?: string): Promise<SdkResolution> {
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', SCRIPT, JSON.stringify([url, path ?? null])],
    { cwd: process.cwd() },
  );
  return JSON.parse(stdout) as SdkResolution;
}
