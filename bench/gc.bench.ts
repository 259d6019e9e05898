import { GCProfiler } from 'node:v8';
import { load, startBenchServer, table } from './lib';
import { agentPair, sendBody } from './protocol.bench';

/**
 * Issue 13: the young generation under load. A request's objects should die young,
 * collected by a scavenge at the cost of what is still alive; a route whose requests
 * outlive their answer has them copied, then promoted to the old generation, each
 * scavenge (BENCHMARKS.md, "Requests kept for a full collection"). For GET /healthz,
 * GET /api-keys/self and a non-blocking message/send in turn, BENCH_DURATION seconds
 * (default 10) at 50 connections after a warm-up, with v8.GCProfiler on: requests a
 * second, scavenges per 1,000 requests, their mean pause, the MB each promoted (the old
 * generation's growth across it), and the share of the time spent in scavenges.
 */
export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const server = await startBenchServer();
  try {
    const { requester, worker } = await agentPair(server.baseUrl, server.db, 'gc');
    const routes: Array<Parameters<typeof load>[1] & { name: string }> = [
      { name: 'GET /healthz', url: `${server.baseUrl}/healthz` },
      { name: 'GET /api-keys/self', url: `${server.baseUrl}/api-keys/self`, headers: { 'x-api-key': requester.key } },
      {
        name: 'message/send, non-blocking',
        url: `${server.baseUrl}/a2a/${worker.handle}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
        body: sendBody(),
        idReplacement: true,
      },
    ];
    const rows: Array<Record<string, string | number>> = [];
    for (const route of routes) {
      await load(route.name, { ...route, duration: 3 });
      const profiler = new GCProfiler();
      profiler.start();
      const result = await load(route.name, { ...route, duration });
      const { statistics } = profiler.stop();
      const scavenges = statistics.filter((gc) => gc.gcType === 'Scavenge');
      const old = (gc: (typeof statistics)[number], when: 'beforeGC' | 'afterGC') =>
        gc[when].heapSpaceStatistics
          .filter((space) => space.spaceName === 'old_space' || space.spaceName === 'large_object_space')
          .reduce((sum, space) => sum + space.spaceUsedSize, 0);
      const promoted = scavenges.reduce((sum, gc) => sum + old(gc, 'afterGC') - old(gc, 'beforeGC'), 0);
      const pauseMs = scavenges.reduce((sum, gc) => sum + gc.cost, 0) / 1000;
      const requests = result.requestsPerSecond * duration;
      rows.push({
        route: route.name,
        'req/s': Math.round(result.requestsPerSecond),
        'scavenges per 1,000 requests': (scavenges.length / requests) * 1000,
        'mean pause ms': scavenges.length ? pauseMs / scavenges.length : 0,
        'MB promoted a scavenge': scavenges.length ? promoted / scavenges.length / 1e6 : 0,
        'time in scavenges': `${((pauseMs / (duration * 1000)) * 100).toFixed(1)}%`,
        errors: result.errors + result.non2xx,
      });
    }
    table(rows);
    console.log(
      `\n${duration} s at 50 connections each after 3 s to warm up; "promoted": the old generation's growth across a scavenge.`,
    );
  } finally {
    await server.close();
  }
}
