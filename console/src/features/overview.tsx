import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { components } from '../../../client';
import { api, call } from '../api';
import { Chart, type ChartSeries } from '../chart';
import { EmptyState, StartAt } from '../empty-state';
import { Link, navigate, useRoute } from '../router';
import { ErrorNotice, Loading, Select, when, usePageTitle } from '../ui';

type Overview = components['schemas']['Overview'];

/** The figures are read again this often while the page is open. */
const REFRESH_MS = 60_000;
const WINDOWS: [number, string][] = [
  [24, 'the last 24 hours'],
  [72, 'the last 3 days'],
  [168, 'the last 7 days'],
];

const COLORS = {
  completed: '#1a7f37',
  failed: '#b42318',
  canceled: '#5b6572',
  rejected: '#b54708',
  open: '#1f5fbf',
  retrying: '#b54708',
  p95: '#b54708',
};

/** The landing page (docs/api.md §13, "The overview"): the organization's last hours, and what needs attention. */
export function OverviewPage() {
  usePageTitle('Overview');
  const { search } = useRoute();
  const hours = WINDOWS.some(([h]) => String(h) === search.get('hours')) ? Number(search.get('hours')) : 24;
  const overview = useQuery({
    queryKey: ['overview', hours],
    queryFn: () => call<Overview>(api.GET('/api/v1/overview', { params: { query: { hours } } })),
    refetchInterval: REFRESH_MS,
  });
  return (
    <>
      <h1>Overview</h1>
      <div className="filters short">
        <Select
          label="Period"
          value={String(hours)}
          onChange={(e) => navigate(e.target.value === '24' ? '/overview' : `/overview?hours=${e.target.value}`)}
        >
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
  const charts = useMemo(() => chartsOf(overview), [overview]);
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
        <Chart title="Tasks per hour, by state now" hours={charts.hours} series={charts.tasks} kind="stacked" />
        <Chart
          title="Time to complete (p50, p95)"
          hours={charts.hours}
          series={charts.latency}
          kind="lines"
          format={duration}
        />
        <Chart title="Calls denied by admission" hours={charts.hours} series={charts.denials} kind="stacked" />
        <Chart title="Webhook deliveries" hours={charts.hours} series={charts.webhooks} kind="stacked" />
        <Chart title="Upstream forwards" hours={charts.hours} series={charts.upstreams} kind="stacked" />
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

function chartsOf(overview: Overview) {
  const { series } = overview;
  const pick = (values: (number | null)[], label: string, color: string): ChartSeries => ({ label, values, color });
  const outcome = (of: (hour: Overview['series'][number]) => components['schemas']['OverviewDeliveryCounts']) => [
    pick(
      series.map((h) => of(h).succeeded),
      'Succeeded',
      COLORS.completed,
    ),
    pick(
      series.map((h) => of(h).retrying),
      'Retrying',
      COLORS.retrying,
    ),
    pick(
      series.map((h) => of(h).failed),
      'Failed',
      COLORS.failed,
    ),
  ];
  return {
    hours: series.map((h) => h.hour),
    tasks: [
      pick(
        series.map((h) => h.tasks.completed),
        'Completed',
        COLORS.completed,
      ),
      pick(
        series.map((h) => h.tasks.failed),
        'Failed',
        COLORS.failed,
      ),
      pick(
        series.map((h) => h.tasks.rejected),
        'Rejected',
        COLORS.rejected,
      ),
      pick(
        series.map((h) => h.tasks.canceled),
        'Canceled',
        COLORS.canceled,
      ),
      pick(
        series.map((h) => h.tasks.open),
        'Open',
        COLORS.open,
      ),
    ],
    latency: [
      pick(
        series.map((h) => h.time_to_complete_ms.p50),
        'p50',
        COLORS.open,
      ),
      pick(
        series.map((h) => h.time_to_complete_ms.p95),
        'p95',
        COLORS.p95,
      ),
    ],
    denials: [
      pick(
        series.map((h) => h.denials.inbound),
        'Calls to us',
        COLORS.failed,
      ),
      pick(
        series.map((h) => h.denials.outbound),
        'Calls by us',
        COLORS.rejected,
      ),
    ],
    webhooks: outcome((h) => h.webhook_deliveries),
    upstreams: outcome((h) => h.upstream_forwards),
  };
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
