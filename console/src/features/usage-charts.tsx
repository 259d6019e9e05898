import { useQuery } from '@tanstack/react-query';
import { useId, useMemo } from 'react';
import { api, call } from '../api';
import { Chart, PALETTE, type ChartSeries } from '../chart';
import { Link } from '../router';
import type { TopTrees, Usage } from '../types';
import { ErrorNotice, Loading, when } from '../ui';

type Group = Usage['groups'][number];
type Role = Group['role'];

/** The page's range and identity, as the API takes them; `filters` keys the cache (`from` moves with the clock). */
interface UsageChartsProps {
  from: string;
  identity?: string;
  filters: { days: string; identity: string };
}

const DAY_MS = 24 * 3600_000;
/** Entries shown in each breakdown. */
const TOP = 8;
/** The two sides of a task, as the identities in scope took part in it. */
const ROLES: [Role, string, string][] = [
  ['requester', 'Sent', PALETTE.blue],
  ['worker', 'Received', PALETTE.green],
];
/** Further currencies' colors, after the first's (the roles' own). */
const MORE_COLORS = [PALETTE.orange, PALETTE.purple, PALETTE.red, PALETTE.grey];

/** Costs are often fractions: the cost axis reaches at least the cent. */
const CENT = 0.01;
const amount = (value: number) => value.toLocaleString([], { maximumFractionDigits: 6 });

/**
 * The usage page's charts (docs/console.md, "Usage"): tasks and cost per day, the
 * identities and peers with the most tasks, and the largest delegation trees — each with
 * its figures as a table, as the overview's charts.
 */
export function UsageCharts({ from, identity, filters }: UsageChartsProps) {
  const read = (group_by: 'day' | 'identity' | 'peer') =>
    // The same key as the page's table for the same grouping: one request serves both.
    ({
      queryKey: ['usage', { group_by, days: filters.days, identity: filters.identity }],
      queryFn: () => call<Usage>(api.GET('/api/v1/usage', { params: { query: { group_by, from, identity } } })),
    });
  const daily = useQuery(read('day'));
  const identities = useQuery(read('identity'));
  const peers = useQuery(read('peer'));
  const trees = useQuery({
    queryKey: ['usage-trees', { days: filters.days, identity: filters.identity }],
    queryFn: () => call<TopTrees>(api.GET('/api/v1/usage/trees', { params: { query: { from, identity } } })),
  });
  return (
    <section aria-labelledby="usage-charts-title">
      <h2 id="usage-charts-title">Charts</h2>
      {daily.isPending ? <Loading /> : daily.error ? <ErrorNotice error={daily.error} /> : <Daily usage={daily.data} />}
      <div className="charts">
        {identities.data && (
          <Leaders title="Identities with the most tasks" heading="Identity" usage={identities.data} />
        )}
        {peers.data && <Leaders title="Peers with the most tasks" heading="Peer" usage={peers.data} />}
      </div>
      {trees.error ? <ErrorNotice error={trees.error} /> : trees.data && <Trees trees={trees.data} />}
    </section>
  );
}

/** Tasks and cost per UTC day of the range, each role a series (a day without tasks: 0). */
function Daily({ usage }: { usage: Usage }) {
  const { days, tasks, costs } = useMemo(() => dailySeries(usage), [usage]);
  return (
    <div className="charts">
      <Chart title="Tasks per day" times={days} period="day" series={tasks} kind="lines" />
      {costs.length > 0 ? (
        <Chart
          title="Cost per day"
          times={days}
          period="day"
          series={costs}
          kind="lines"
          format={amount}
          least={CENT}
        />
      ) : (
        <p className="muted">No cost was reported in this range.</p>
      )}
    </div>
  );
}

function dailySeries(usage: Usage) {
  const start = Math.floor(Date.parse(usage.from) / DAY_MS) * DAY_MS;
  const keys: string[] = [];
  for (let at = start; at < Date.parse(usage.to); at += DAY_MS) {
    keys.push(new Date(at).toISOString().slice(0, 10));
  }
  const of = (role: Role, day: string) => usage.groups.find((g) => g.key === day && g.role === role);
  const tasks: ChartSeries[] = ROLES.map(([role, label, color]) => ({
    label,
    color,
    values: keys.map((day) => of(role, day)?.tasks ?? 0),
  }));
  const currencies = [...new Set(usage.groups.flatMap((g) => g.cost.map((c) => c.currency)))].sort();
  const costs: ChartSeries[] = currencies.flatMap((currency, i) =>
    ROLES.map(([role, label, color], r) => ({
      label: `${label}, ${currency}`,
      color: i === 0 ? color : MORE_COLORS[(2 * (i - 1) + r) % MORE_COLORS.length],
      values: keys.map((day) => Number(of(role, day)?.cost.find((c) => c.currency === currency)?.amount ?? 0)),
    })),
  );
  return { days: keys.map((day) => `${day}T00:00:00Z`), tasks, costs };
}

interface Leader {
  key: string;
  label: string;
  sent: number;
  received: number;
  /** Of the tasks sent, per currency. */
  cost: string;
}

/** The entries of an identity or peer grouping with the most tasks (both roles), as bars with their figures. */
function Leaders({ title, heading, usage }: { title: string; heading: string; usage: Usage }) {
  const captionId = useId();
  const leaders = useMemo(() => rank(usage.groups), [usage]);
  const most = Math.max(1, ...leaders.map((l) => l.sent + l.received));
  return (
    <figure className="chart bars" aria-labelledby={captionId}>
      <figcaption id={captionId}>{title}</figcaption>
      {leaders.length === 0 ? (
        <p className="muted">No task ended in this range.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{heading}</th>
              <th scope="col">
                <span className="visually-hidden">Share</span>
              </th>
              <th scope="col">Sent</th>
              <th scope="col">Received</th>
              <th scope="col">Cost of those sent</th>
            </tr>
          </thead>
          <tbody>
            {leaders.map((l) => (
              <tr key={l.key}>
                <th scope="row">{l.label}</th>
                <td className="bar" aria-hidden="true">
                  <span className="sent" style={{ width: `${(100 * l.sent) / most}%` }} />
                  <span className="received" style={{ width: `${(100 * l.received) / most}%` }} />
                </td>
                <td>{l.sent}</td>
                <td>{l.received}</td>
                <td>{l.cost || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  );
}

function rank(groups: Group[]): Leader[] {
  const byKey = new Map<string, Leader>();
  for (const g of groups) {
    const leader = byKey.get(g.key) ?? { key: g.key, label: g.label ?? g.key, sent: 0, received: 0, cost: '' };
    if (g.role === 'requester') {
      leader.sent += g.tasks;
      leader.cost = g.cost.map((c) => `${c.amount} ${c.currency}`).join(', ');
    } else {
      leader.received += g.tasks;
    }
    byKey.set(g.key, leader);
  }
  return [...byKey.values()]
    .sort((a, b) => b.sent + b.received - (a.sent + a.received) || a.label.localeCompare(b.label))
    .slice(0, TOP);
}

/** The largest delegation trees of the range, each a link to its tree (docs/api.md §18). */
function Trees({ trees }: { trees: TopTrees }) {
  const captionId = useId();
  const most = Math.max(1, ...trees.trees.map((tree) => tree.tasks));
  return (
    <figure className="chart bars" aria-labelledby={captionId}>
      <figcaption id={captionId}>Top trees</figcaption>
      {trees.trees.length === 0 ? (
        <p className="muted">No task delegated onward in this range.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Tree from</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span className="visually-hidden">Share</span>
              </th>
              <th scope="col">Tasks</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {trees.trees.map((tree) => (
              <tr key={tree.id}>
                <th scope="row">
                  <Link to={`/tasks/${tree.id}`}>
                    {tree.requester.agent_handle} → {tree.worker.agent_handle}
                  </Link>{' '}
                  <span className={`badge ${tree.state}`}>{tree.state}</span>
                </th>
                <td>{when(tree.created_at)}</td>
                <td className="bar" aria-hidden="true">
                  <span className="sent" style={{ width: `${(100 * tree.tasks) / most}%` }} />
                </td>
                <td>{tree.tasks}</td>
                <td>{tree.input_tokens + tree.output_tokens}</td>
                <td>{tree.cost.map((c) => `${c.amount} ${c.currency}`).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  );
}
