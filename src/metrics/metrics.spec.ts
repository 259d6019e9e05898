import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../config/config';
import { Metrics } from './metrics';

const ROOT = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every metric name the registry holds (histograms also as their _bucket, _count and _sum series). */
async function registered(): Promise<Set<string>> {
  const metrics = new Metrics(loadConfig({ METRICS_PORT: '0' }), { driver: {} } as unknown as DataSource);
  const names = (await metrics.registry.getMetricsAsJSON()).flatMap((metric) =>
    String(metric.type) === 'histogram'
      ? ['', '_bucket', '_count', '_sum'].map((suffix) => metric.name + suffix)
      : [metric.name],
  );
  metrics.registry.clear();
  return new Set(names);
}

/** Metric names in a PromQL text: the service's own, and prom-client's default ones the dashboard uses. */
function metricNames(text: string): string[] {
  return [...new Set([...text.matchAll(/\b((?:a2a|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]))];
}

describe('the deployment files name only metrics that exist', () => {
  let names: Set<string>;
  beforeAll(async () => {
    names = await registered();
  });

  it('docker/grafana-dashboard.json: every expression', () => {
    const dashboard = JSON.parse(read('docker/grafana-dashboard.json')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const used = dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => metricNames(target.expr)));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !names.has(name))).toEqual([]);
    // Every series of the service has a panel.
    const own = [...names].filter((name) => name.startsWith('a2a_') && !/_(bucket|sum)$/.test(name));
    expect(
      own.filter(
        (name) => ![name, `${name}_bucket`, name.replace(/_count$/, '_bucket')].some((series) => used.includes(series)),
      ),
    ).toEqual([]);
  });

  it('docker/prometheus.yml: the rules it suggests', () => {
    const used = metricNames(read('docker/prometheus.yml'));
    expect(used.filter((name) => !names.has(name))).toEqual([]);
  });

  it('docs/operations.md: the Metrics list names every series of the service, and nothing else', () => {
    const operations = read('docs/operations.md');
    const section = operations.slice(operations.indexOf('## Metrics'), operations.indexOf('## Logs'));
    const listed = metricNames(section).filter((name) => name.startsWith('a2a_'));
    const own = [...names].filter((name) => name.startsWith('a2a_') && !/_(bucket|count|sum)$/.test(name));
    expect(listed.filter((name) => !names.has(name))).toEqual([]);
    expect(own.filter((name) => !listed.includes(name))).toEqual([]);
  });
});
