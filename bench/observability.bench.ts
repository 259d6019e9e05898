import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTracing, type Tracing } from '../src/tracing/tracing';
import { load, startBenchServer, table, type LoadResult } from './lib';
import { agentPair } from './protocol.bench';

/**
 * Issue 16: what metrics and tracing cost on the send path. Two servers in one
 * process, one with metrics off (`METRICS_PORT=off`), one with metrics on (a listener
 * on a free port); tracing is started (an OTLP/HTTP exporter to a local sink that
 * answers 200) only for the "metrics + tracing" rounds, and shut down otherwise.
 * Each round runs both off, metrics on, metrics + tracing on — non-blocking
 * `message/send` at 50 connections — so drift on the machine hits all three alike.
 * Each run also reports the CPU time per send of the bench process (both servers
 * live in it; the load generator does not) and of its main thread alone — the event
 * loop that serves every request, without the garbage collector's and the compiler's
 * helper threads: on a shared machine, where throughput follows whatever else runs,
 * the CPU a send costs is the steadier measure of overhead.
 */
export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const sink = await startSink();
  const off = await startBenchServer({ METRICS_PORT: 'off' });
  const on = await startBenchServer({ METRICS_PORT: '0' });
  let tracing: Tracing | null = null;
  try {
    const targets = {
      off: { server: off, pair: await agentPair(off.baseUrl, off.db, 'obs-off') },
      on: { server: on, pair: await agentPair(on.baseUrl, on.db, 'obs-on') },
    };
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', role: 'user', messageId: '[<id>]', parts: [{ kind: 'text', text: 'benchmark' }] },
        configuration: { blocking: false },
      },
    });
    const label = { off: 'both off', metrics: 'metrics on', on: 'metrics + tracing on' };
    const send = async (which: 'off' | 'metrics' | 'on', seconds: number) => {
      const cpu = process.cpuUsage();
      const loop = mainThreadCpuMs();
      const result = await load(label[which], {
        url: `${targets[which === 'off' ? 'off' : 'on'].server.baseUrl}/a2a/${targets[which === 'off' ? 'off' : 'on'].pair.worker.handle}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': targets[which === 'off' ? 'off' : 'on'].pair.requester.key,
        },
        body,
        idReplacement: true,
        connections: 50,
        duration: seconds,
      });
      const used = process.cpuUsage(cpu);
      const sends = result.requestsPerSecond * seconds;
      return {
        ...result,
        cpuMsPerSend: (used.user + used.system) / 1000 / sends,
        loopMsPerSend: (mainThreadCpuMs() - loop) / sends,
      };
    };
    type Result = LoadResult & { cpuMsPerSend: number; loopMsPerSend: number };
    const results: Record<'off' | 'metrics' | 'on', Result[]> = { off: [], metrics: [], on: [] };
    await send('off', 2);
    await send('metrics', 2);
    for (let round = 0; round < rounds; round++) {
      results.off.push(await send('off', duration));
      results.metrics.push(await send('metrics', duration));
      tracing = startTracing({ endpoint: sink.url, serviceName: 'a2a-bench' });
      if (round === 0) {
        await send('on', 2);
      }
      results.on.push(await send('on', duration));
      await tracing.shutdown();
      tracing = null;
    }
    const rows = [...results.off, ...results.metrics, ...results.on].map((r) => ({
      measure: r.name,
      'req/s': Math.round(r.requestsPerSecond),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'CPU ms/send': r.cpuMsPerSend.toFixed(2),
      'main thread ms/send': r.loopMsPerSend.toFixed(2),
      errors: r.errors,
      non2xx: r.non2xx,
    }));
    table(rows);
    const mean = (list: Result[], of: (r: Result) => number) => list.reduce((sum, r) => sum + of(r), 0) / list.length;
    const rate = (r: Result) => r.requestsPerSecond;
    const cpu = (r: Result) => r.cpuMsPerSend;
    const loop = (r: Result) => r.loopMsPerSend;
    const overhead = (list: Result[]) => `${((1 - mean(list, rate) / mean(results.off, rate)) * 100).toFixed(1)}%`;
    const extra = (list: Result[], of: (r: Result) => number) => {
      const percent = (mean(list, of) / mean(results.off, of) - 1) * 100;
      return `${percent >= 0 ? '+' : ''}${percent.toFixed(1)}%`;
    };
    const summary = (list: Result[]) =>
      `${Math.round(mean(list, rate))} req/s (overhead ${overhead(list)}), ${mean(list, cpu).toFixed(2)} CPU ms/send ` +
      `(${extra(list, cpu)}), main thread ${mean(list, loop).toFixed(2)} ms/send (${extra(list, loop)})`;
    console.log(
      `\nmean over ${rounds} rounds each: both off ${Math.round(mean(results.off, rate))} req/s, ` +
        `${mean(results.off, cpu).toFixed(2)} CPU ms/send, main thread ${mean(results.off, loop).toFixed(2)} ms/send; ` +
        `metrics on ${summary(results.metrics)}; metrics + tracing on ${summary(results.on)}; ` +
        `the sink received ${sink.batches()} span batches`,
    );
  } finally {
    await tracing?.shutdown();
    await off.close();
    await on.close();
    await sink.close();
  }
}

/** An OTLP/HTTP receiver that accepts and discards every export. */
async function startSink(): Promise<{ url: string; batches: () => number; close: () => Promise<void> }> {
  let batches = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        batches += 1;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    batches: () => batches,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** CPU time of this process's main thread (the event loop) so far, from Linux's /proc; NaN elsewhere. */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ: 100 on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}
