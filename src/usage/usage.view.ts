import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { decimal, type MoneyView } from '../common/money';
import { MoneySchema } from '../identities/identity.view';
import type { UsageGroup, UsageRow } from './usage.repository';

/** Totals of tasks that ended (docs/api.md §18). */
export interface UsageTotalsView {
  tasks: number;
  completed: number;
  failed: number;
  canceled: number;
  rejected: number;
  messages: number;
  parts: number;
  artifact_bytes: number;
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
  /** One entry per currency reported. */
  cost: MoneyView[];
}

export interface UsageGroupView extends UsageTotalsView {
  /** An identity or organization id, a day (`2026-12-05`) or an hour (`2026-12-05T10:00:00Z`). */
  key: string;
  /** The identity's handle or the organization's name; null for days and hours. */
  label: string | null;
  /** The side of the tasks counted: the identities in scope as requesters, or as workers. */
  role: 'requester' | 'worker';
}

export interface UsageView {
  group_by: UsageGroup;
  from: string;
  to: string;
  groups: UsageGroupView[];
  /** More groups than one answer holds (narrow the range or the grouping). */
  truncated: boolean;
}

/** Rows of one key and role (one per currency) as one group. */
export function toUsageGroups(rows: readonly UsageRow[], labels: ReadonlyMap<string, string>): UsageGroupView[] {
  const groups = new Map<string, UsageGroupView>();
  for (const row of rows) {
    const id = `${row.key}\n${row.role}`;
    let group = groups.get(id);
    if (!group) {
      group = {
        key: row.key,
        label: labels.get(row.key) ?? null,
        role: row.role,
        tasks: 0,
        completed: 0,
        failed: 0,
        canceled: 0,
        rejected: 0,
        messages: 0,
        parts: 0,
        artifact_bytes: 0,
        duration_ms: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost: [],
      };
      groups.set(id, group);
    }
    group.tasks += row.tasks;
    group.completed += row.completed;
    group.failed += row.failed;
    group.canceled += row.canceled;
    group.rejected += row.rejected;
    group.messages += row.messages;
    group.parts += row.parts;
    group.artifact_bytes += row.artifactBytes;
    group.duration_ms += row.durationMs;
    group.input_tokens += row.inputTokens;
    group.output_tokens += row.outputTokens;
    if (row.currency !== '') {
      group.cost.push({ amount: decimal(row.cost), currency: row.currency });
    }
  }
  return [...groups.values()];
}

const CSV_COLUMNS = [
  'key',
  'label',
  'role',
  'tasks',
  'completed',
  'failed',
  'canceled',
  'rejected',
  'messages',
  'parts',
  'artifact_bytes',
  'duration_ms',
  'input_tokens',
  'output_tokens',
  'cost_amount',
  'cost_currency',
] as const;

/** The groups as CSV (RFC 4180): a line per group and currency (a group without cost: one line, cost empty). */
export function toUsageCsv(view: UsageView): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const group of view.groups) {
    const costs = group.cost.length > 0 ? group.cost : [{ amount: '', currency: '' }];
    costs.forEach((cost, i) => {
      // The totals other than cost go on the group's first line only, so that a column's sum is the total.
      const totals = i === 0 ? group : null;
      const values = [
        group.key,
        group.label ?? '',
        group.role,
        ...(
          [
            'tasks',
            'completed',
            'failed',
            'canceled',
            'rejected',
            'messages',
            'parts',
            'artifact_bytes',
            'duration_ms',
            'input_tokens',
            'output_tokens',
          ] as const
        ).map((column) => (totals ? String(totals[column]) : '0')),
        cost.amount,
        cost.currency,
      ];
      lines.push(values.map(csvField).join(','));
    });
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A field quoted when it must be; a leading =, +, - or @ is prefixed with ' so that spreadsheets do not run it. */
function csvField(value: string): string {
  const safe = /^[=+\-@]/.test(value) && !/^-?\d/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

@ApiSchema({ name: 'UsageGroup' })
export class UsageGroupSchema implements UsageGroupView {
  @ApiProperty() key: string;
  @ApiProperty({ type: String, nullable: true }) label: string | null;
  @ApiProperty({ enum: ['requester', 'worker'] }) role: 'requester' | 'worker';
  @ApiProperty({ description: 'Tasks that ended.' }) tasks: number;
  @ApiProperty() completed: number;
  @ApiProperty() failed: number;
  @ApiProperty() canceled: number;
  @ApiProperty() rejected: number;
  @ApiProperty() messages: number;
  @ApiProperty() parts: number;
  @ApiProperty() artifact_bytes: number;
  @ApiProperty({ description: 'Summed time from submitted to terminal.' }) duration_ms: number;
  @ApiProperty() input_tokens: number;
  @ApiProperty() output_tokens: number;
  @ApiProperty({ type: [MoneySchema] }) cost: MoneyView[];
}

@ApiSchema({ name: 'Usage' })
export class UsageSchema implements UsageView {
  @ApiProperty({ enum: ['identity', 'peer', 'organization', 'day', 'hour'] }) group_by: UsageGroup;
  @ApiProperty({ format: 'date-time' }) from: string;
  @ApiProperty({ format: 'date-time' }) to: string;
  @ApiProperty({ type: [UsageGroupSchema] }) groups: UsageGroupView[];
  @ApiProperty() truncated: boolean;
}
