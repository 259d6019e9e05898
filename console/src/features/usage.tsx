import { type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { EmptyState } from '../empty-state';
import { api, call } from '../api';
import type { Usage } from '../types';
import { ErrorNotice, Field, Loading, Select, Submit, usePageTitle } from '../ui';
import { useDraft, useUrlFilters } from '../url-filters';
import { UsageCharts } from './usage-charts';

type GroupBy = 'identity' | 'peer' | 'organization' | 'day' | 'hour';

/** The filters, in the page's URL (`/usage?group_by=identity&days=7`). */
const DEFAULTS = { group_by: 'day', days: '30', identity: '' };
type UsageFilters = typeof DEFAULTS;

const GROUPS: Array<[GroupBy, string]> = [
  ['day', 'Day'],
  ['identity', 'Identity'],
  ['peer', 'Peer'],
  ['organization', 'Peer organization'],
  ['hour', 'Hour'],
];

/** The query of a filter set, as the API takes it (and the CSV link repeats it). */
function queryOf(filters: UsageFilters): { group_by: GroupBy; from: string; identity?: string } {
  const days = Math.min(400, Math.max(1, Number(filters.days) || 30));
  return {
    group_by: groupOf(filters)[0],
    from: new Date(Date.now() - days * 24 * 3600_000).toISOString(),
    identity: filters.identity || undefined,
  };
}

/** The grouping asked for and its name, the default (by day) when the URL names none the API knows. */
function groupOf(filters: UsageFilters): [GroupBy, string] {
  return GROUPS.find(([value]) => value === filters.group_by) ?? GROUPS[0];
}

/**
 * The organization's usage (docs/api.md §18): charts of the range (usage-charts.tsx), and a
 * table grouped as asked (kept in the URL), with its CSV export.
 */
export function UsagePage() {
  usePageTitle('Usage');
  const [filters, setFilters] = useUrlFilters(DEFAULTS);
  const [draft, setDraft] = useDraft(filters);
  const query = queryOf(filters);
  const groupLabel = groupOf(filters)[1];
  const usage = useQuery({
    queryKey: ['usage', filters],
    queryFn: () => call<Usage>(api.GET('/api/v1/usage', { params: { query } })),
  });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ ...draft, identity: draft.identity.trim() });
  };
  const csv = `/api/v1/usage?${new URLSearchParams({
    group_by: query.group_by,
    from: query.from,
    ...(query.identity ? { identity: query.identity } : {}),
    format: 'csv',
  }).toString()}`;
  return (
    <>
      <h1>Usage</h1>
      <p className="muted">
        Tasks that ended, by the hour they were created; tokens and cost as their workers reported them.
      </p>
      <form className="filters" onSubmit={apply} aria-label="Usage filters">
        <Select
          label="Group by"
          value={groupOf(draft)[0]}
          onChange={(e) => setDraft({ ...draft, group_by: e.target.value })}
        >
          {GROUPS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </Select>
        <Field
          label="Last days"
          type="number"
          min={1}
          max={400}
          value={draft.days}
          onChange={(e) => setDraft({ ...draft, days: e.target.value })}
        />
        <Field
          label="Identity"
          placeholder="handle (all when empty)"
          value={draft.identity}
          onChange={(e) => setDraft({ ...draft, identity: e.target.value })}
        />
        <Submit pending={usage.isFetching}>Show usage</Submit>
      </form>
      <p>
        <a href={csv} download="usage.csv">
          Download as CSV
        </a>
      </p>
      <UsageCharts from={query.from} identity={query.identity} filters={filters} />
      <h2>By {groupLabel.toLowerCase()}</h2>
      {usage.isPending ? (
        <Loading />
      ) : usage.error ? (
        <ErrorNotice error={usage.error} />
      ) : usage.data.groups.length === 0 ? (
        <EmptyState>No task ended in this range.</EmptyState>
      ) : (
        <table aria-label="Usage">
          <thead>
            <tr>
              <th scope="col">{groupLabel}</th>
              <th scope="col">Role</th>
              <th scope="col">Tasks</th>
              <th scope="col">Completed</th>
              <th scope="col">Failed</th>
              <th scope="col">Input tokens</th>
              <th scope="col">Output tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {usage.data.groups.map((group) => (
              <tr key={`${group.key} ${group.role}`}>
                <th scope="row">{group.label ?? group.key}</th>
                <td>{group.role === 'requester' ? 'as requester' : 'as worker'}</td>
                <td>{group.tasks}</td>
                <td>{group.completed}</td>
                <td>{group.failed}</td>
                <td>{group.input_tokens}</td>
                <td>{group.output_tokens}</td>
                <td>{group.cost.map((c) => `${c.amount} ${c.currency}`).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {usage.data?.truncated && <p className="muted">More groups than shown: narrow the range.</p>}
    </>
  );
}
