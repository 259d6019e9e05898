import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * An in-process CPU profile (node:inspector) around `work`, e.g. an autocannon run
 * against a bench server in this process. Writes the `.cpuprofile` (open it in Chrome
 * DevTools) when `file` is given, and returns the self time summed by function and by
 * package (a `node_modules` package, `src/<module>`, Node's internals, GC, idle).
 */
export async function profiled<T>(
  work: () => Promise<T>,
  file?: string,
): Promise<{ result: T; byFunction: SelfTime[]; byPackage: SelfTime[] }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  let result: T;
  let profile: Parameters<typeof summarize>[0];
  try {
    result = await work();
  } finally {
    ({ profile } = await session.post('Profiler.stop'));
    session.disconnect();
  }
  if (file) {
    writeFileSync(file, JSON.stringify(profile));
  }
  return { result, ...summarize(profile) };
}

export interface SelfTime {
  name: string;
  ms: number;
  /** Share of the non-idle time. */
  share: number;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

function summarize(profile: { nodes: ProfileNode[]; samples?: number[]; timeDeltas?: number[] }): {
  byFunction: SelfTime[];
  byPackage: SelfTime[];
} {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let busy = 0;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const node = nodes.get(samples[i]);
    if (!node) {
      continue;
    }
    const us = deltas[i + 1] ?? 0;
    const where = packageOf(node.callFrame);
    if (where !== '(idle)') {
      busy += us;
    }
    const name = `${node.callFrame.functionName || '(anonymous)'} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    pkg.set(where, (pkg.get(where) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: us / 1000, share: name === '(idle)' ? NaN : us / busy }));
  return { byFunction: rank(fn), byPackage: rank(pkg) };
}

function packageOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) {
    if (['(idle)', '(program)', '(garbage collector)'].includes(functionName)) {
      return functionName;
    }
    return '(native)';
  }
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) {
    return modules[1];
  }
  const source = /\/(src|bench|test)\/([^/]+)/.exec(url);
  if (source) {
    return `${source[1]}/${source[2].replace(/\.ts$/, '')}`;
  }
  if (url.startsWith('node:')) {
    return `node:${url.slice(5).split('/')[0]}`;
  }
  return url;
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|bench|test)\//, '$1/');
}
