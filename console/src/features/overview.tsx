import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { components } from '../../../client';
import { api, call } from '../api';
import { Chart, PALETTE, type ChartSeries } from '../chart';
import { EmptyState, StartAt } from '../empty-state';
import { Link } from '../router';
import { ErrorNotice, Loading, Select, when, usePageTitle } from '../ui';
import { useUrlFilters } from '../url-filters';

type Overview = components['schemas']['Overview'];

/** The figures are read again this often while the page is open. */
const REFRESH_MS = 60_000;
const WINDOWS: [number, string][] = [
  [24, 'the last 24 hours'],
  [72, 'the last 3 days'],
  [168, 'the last 7 days'],
];

const COLORS = {
  completed: PALETTE.green,
  failed: PALETTE.red,
  canceled: PALETTE.grey,
  rejected: PALETTE.orange,
  open: PALETTE.blue,
  retrying: PALETTE.orange,
  p95: PALETTE.orange,
};

type Hour = Overview['series'][number];

/** One chart of the page: its series, each a label, a color and its figure in an hour. */
interface ChartDefinition {
  title: string;
  kind: 'stacked' | 'lines';
  format?: (value: number) => string;
  series: [label: string, color: string, value: (hour: Hour) => number | null][];
}

/** A webhook's or an upstream's deliveries in an hour, by outcome. */
const outcomes = (of: (hour: Hour) => components['schemas']['OverviewDeliveryCounts']): ChartDefinition['series'] => [
  ['Succeeded', COLORS.completed, (h) => of(h).succeeded],
  ['Retrying', COLORS.retrying, (h) => of(h).retrying],
  ['Failed', COLORS.failed, (h) => of(h).failed],
];

const CHARTS: ChartDefinition[] = [
  {
    title: 'Tasks per hour, by state now',
    kind: 'stacked',
    series: [
      ['Completed', COLORS.completed, (h) => h.tasks.completed],
      ['Failed', COLORS.failed, (h) => h.tasks.failed],
      ['Rejected', COLORS.rejected, (h) => h.tasks.rejected],
      ['Canceled', COLORS.canceled, (h) => h.tasks.canceled],
      ['Open', COLORS.open, (h) => h.tasks.open],
    ],
  },
  {
    title: 'Time to complete (p50, p95)',
    kind: 'lines',
    format: duration,
    series: [
      ['p50', COLORS.open, (h) => h.time_to_complete_ms.p50],
      ['p95', COLORS.p95, (h) => h.time_to_complete_ms.p95],
    ],
  },
  {
    title: 'Calls denied by admission',
    kind: 'stacked',
    series: [
      ['Calls to us', COLORS.failed, (h) => h.denials.inbound],
      ['Calls by us', COLORS.rejected, (h) => h.denials.outbound],
    ],
  },
  { title: 'Webhook deliveries', kind: 'stacked', series: outcomes((h) => h.webhook_deliveries) },
  { title: 'Upstream forwards', kind: 'stacked', series: outcomes((h) => h.upstream_forwards) },
];

/** The landing page (docs/api.md §13, "The overview"): the organization's last hours, and what needs attention. */
export function OverviewPage() {
  usePageTitle('Overview');
  const [filters, setFilters] = useUrlFilters({ hours: '24' });
  const hours = WINDOWS.find(([h]) => String(h) === filters.hours)?.[0] ?? 24;
  const overview = useQuery({
    queryKey: ['overview', hours],
    queryFn: () => call<Overview>(api.GET('/api/v1/overview', { params: { query: { hours } } })),
    refetchInterval: REFRESH_MS,
  });
  return (
    <>
      <h1>Overview</h1>
      <div className="filters short">
        <Select label="Period" value={String(hours)} onChange={(e) => setFilters({ hours: e.target.value })}>
          {WINDOWS.map(([h, label]) => (
            <option key={h} value={h}>
              {label}
            </option>
          ))}
        </Select>
      </div>
      {overview.isPending ? (
        <Loading />
      ) : overview.error ? (
        <ErrorNotice error={overview.error} />
      ) : (
        <Figures overview={overview.data} />
      )}
    </>
  );
}

function Figures({ overview }: { overview: Overview }) {
  const { totals } = overview;
  const tasks = Object.values(totals.tasks).reduce((sum, n) => sum + n, 0);
  const deliveries = totals.webhook_deliveries;
  const delivered = deliveries.succeeded + deliveries.failed;
  return (
    <>
      <Attention overview={overview} />
      <section aria-labelledby="totals-title">
        <h2 id="totals-title">
          In {WINDOWS.find(([h]) => h === overview.hours)?.[1] ?? `the last ${overview.hours} hours`}
        </h2>
        <dl className="stats">
          <div>
            <dt>Tasks</dt>
            <dd>{tasks}</dd>
          </div>
          <div>
            <dt>Completed</dt>
            <dd>{tasks === 0 ? '—' : `${Math.round((100 * totals.tasks.completed) / tasks)}%`}</dd>
          </div>
          <div>
            <dt>Time to complete, p50 / p95</dt>
            <dd>
              {duration(totals.time_to_complete_ms.p50)} / {duration(totals.time_to_complete_ms.p95)}
            </dd>
          </div>
          <div>
            <dt>Calls denied</dt>
            <dd>{totals.denials.inbound + totals.denials.outbound}</dd>
          </div>
          <div>
            <dt>Webhook deliveries succeeded</dt>
            <dd>{delivered === 0 ? '—' : `${Math.round((100 * deliveries.succeeded) / delivered)}%`}</dd>
          </div>
          <div>
            <dt>Approvals waiting</dt>
            <dd>
              {overview.approvals_pending > 0 ? (
                <Link to="/approvals">{overview.approvals_pending}</Link>
              ) : (
                overview.approvals_pending
              )}
            </dd>
          </div>
        </dl>
        {tasks === 0 && (
          <EmptyState
            title="No tasks in this period."
            actions={
              <>
                <StartAt to="/identities">Create an identity</StartAt>
                <StartAt to="/keys">Mint an agent key</StartAt>
              </>
            }
          >
            The charts fill as your identities send and answer tasks through the protocol: how many, how they end, how
            long they take, and how your webhooks and upstream agents keep up.
          </EmptyState>
        )}
      </section>
      <div className="charts">
        {CHARTS.map((chart) => (
          <OverviewChart key={chart.title} chart={chart} series={overview.series} />
        ))}
      </div>
      <p className="muted">Hours in your time zone; tasks count in the hour they were created. Updated every minute.</p>
    </>
  );
}

function Attention({ overview }: { overview: Overview }) {
  const { failing_webhooks: webhooks, expiring_keys: keys, failing_upstreams: upstreams } = overview.attention;
  const pending = overview.approvals_pending;
  const nothing = webhooks.length + keys.length + upstreams.length + pending === 0;
  return (
    <section aria-labelledby="attention-title" className={nothing ? undefined : 'attention'}>
      <h2 id="attention-title">Needs attention</h2>
      {nothing ? (
        <p className="muted">Nothing needs attention: no failing webhook or upstream, no key about to expire.</p>
      ) : (
        <ul className="cards" aria-label="Needs attention">
          {pending > 0 && (
            <li>
              <Link to="/approvals">
                {pending === 1 ? '1 approval request waits' : `${pending} approval requests wait`} for a decision
              </Link>
            </li>
          )}
          {webhooks.map((hook) => (
            <li key={hook.id}>
              Webhook <Link to={`/webhooks/${hook.id}`}>{hook.url}</Link>{' '}
              {hook.status === 'disabled' ? 'was disabled after failing' : 'is failing'} since{' '}
              {when(hook.failing_since)}
            </li>
          ))}
          {keys.map((key) => (
            <li key={key.id}>
              Key{' '}
              <Link to={key.scoped_identity_id ? `/keys?identity=${key.scoped_identity_id}` : '/keys'}>
                {key.label || key.prefix}
              </Link>{' '}
              expires {when(key.expires_at)}
            </li>
          ))}
          {upstreams.map((upstream) => (
            <li key={upstream.identity}>
              The upstream of <Link to={`/identities/${upstream.identity}`}>{upstream.identity}</Link>:{' '}
              {upstream.failed} failed, {upstream.retrying} retrying
              {upstream.last_error_at && <> (last error {when(upstream.last_error_at)})</>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One of CHARTS, its figures read from the overview's hours (again only when they change). */
function OverviewChart({ chart, series }: { chart: ChartDefinition; series: Hour[] }) {
  const hours = useMemo(() => series.map((h) => h.hour), [series]);
  const lines = useMemo(
    (): ChartSeries[] => chart.series.map(([label, color, value]) => ({ label, color, values: series.map(value) })),
    [chart, series],
  );
  return <Chart title={chart.title} times={hours} series={lines} kind={chart.kind} format={chart.format} />;
}

/** 840 → "840 ms", 5120 → "5.1 s", 192000 → "3.2 min". */
function duration(ms: number | null): string {
  if (ms === null) {
    return '—';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60_000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  return ms < 3_600_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 3_600_000).toFixed(1)} h`;
}
