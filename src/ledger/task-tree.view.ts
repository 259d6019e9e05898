import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { MoneyView } from '../common/money';
import type { NodeUsage, TopTreeRecord, TreeNodeRecord, TreeTotalsRecord } from './task-tree.repository';
import { toParticipantView, type ParticipantView } from './ledger.view';
import { TASK_STATES, type TaskState } from './task-state';

export interface NodeUsageView {
  input_tokens: number;
  output_tokens: number;
  cost: MoneyView | null;
  messages: number;
  parts: number;
  artifact_bytes: number;
  duration_ms: number;
  state_ms: Record<string, number> | null;
}

/**
 * A node of a delegation tree (docs/api.md §18): a task the caller may see in full, or
 * an opaque one (`opaque: true`) — its state and usage, never its id, pair or messages.
 */
export interface TreeNodeView {
  opaque?: true;
  id?: string;
  depth: number;
  state: TaskState;
  requester?: ParticipantView;
  worker?: ParticipantView;
  created_at?: string;
  updated_at?: string;
  usage: NodeUsageView;
  children?: TreeNodeView[];
  /** More children than shown (`fan_out`). */
  children_truncated?: true;
}

export interface TreeTotalsView {
  tasks: number;
  by_state: Partial<Record<TaskState, number>>;
  input_tokens: number;
  output_tokens: number;
  messages: number;
  parts: number;
  artifact_bytes: number;
  cost: MoneyView[];
}

export interface TaskTreeView {
  /** The task's ancestors, its root first (opaque where the caller may not see them). */
  ancestors: TreeNodeView[];
  /** The task, its descendants nested under it. */
  task: TreeNodeView;
  /** Nodes were left out beyond the most one answer holds. */
  truncated: boolean;
  /** The whole tree's, from its root: every task, opaque ones included. */
  totals: TreeTotalsView;
}

/** A tree of the top-trees list (docs/api.md §18): its root task, the whole tree's size and reported usage. */
export interface TopTreeView {
  /** The root task (open its tree with `GET /api/v1/tasks/{id}/tree`). */
  id: string;
  requester: ParticipantView;
  worker: ParticipantView;
  state: TaskState;
  created_at: string;
  tasks: number;
  input_tokens: number;
  output_tokens: number;
  cost: MoneyView[];
}

export interface TopTreesView {
  from: string;
  to: string;
  trees: TopTreeView[];
}

function toUsageView(usage: NodeUsage): NodeUsageView {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cost: usage.cost,
    messages: usage.messages,
    parts: usage.parts,
    artifact_bytes: usage.artifactBytes,
    duration_ms: usage.durationMs,
    state_ms: usage.stateMs,
  };
}

/** A node as the caller may see it: whole, or opaque. */
export function toTreeNodeView(node: TreeNodeRecord): TreeNodeView {
  if (!node.visible) {
    return { opaque: true, depth: node.depth, state: node.state, usage: toUsageView(node.usage) };
  }
  return {
    id: node.id,
    depth: node.depth,
    state: node.state,
    requester: toParticipantView(node.requester),
    worker: toParticipantView(node.worker),
    created_at: node.createdAt.toISOString(),
    updated_at: node.updatedAt.toISOString(),
    usage: toUsageView(node.usage),
  };
}

export function toTreeTotalsView(totals: TreeTotalsRecord): TreeTotalsView {
  return {
    tasks: totals.tasks,
    by_state: totals.byState,
    input_tokens: totals.inputTokens,
    output_tokens: totals.outputTokens,
    messages: totals.messages,
    parts: totals.parts,
    artifact_bytes: totals.artifactBytes,
    cost: totals.cost,
  };
}

export function toTopTreeView(tree: TopTreeRecord): TopTreeView {
  return {
    id: tree.id,
    requester: toParticipantView(tree.requester),
    worker: toParticipantView(tree.worker),
    state: tree.state,
    created_at: tree.createdAt.toISOString(),
    tasks: tree.tasks,
    input_tokens: tree.inputTokens,
    output_tokens: tree.outputTokens,
    cost: tree.cost,
  };
}

@ApiSchema({ name: 'TreeMoney' })
class TreeMoneySchema implements MoneyView {
  @ApiProperty({ example: '0.42' }) amount: string;
  @ApiProperty({ example: 'USD' }) currency: string;
}

@ApiSchema({ name: 'TreeNodeUsage' })
class NodeUsageSchema implements NodeUsageView {
  @ApiProperty() input_tokens: number;
  @ApiProperty() output_tokens: number;
  @ApiProperty({ type: TreeMoneySchema, nullable: true }) cost: MoneyView | null;
  @ApiProperty() messages: number;
  @ApiProperty() parts: number;
  @ApiProperty() artifact_bytes: number;
  @ApiProperty({ description: 'From creation to its end (to now while open).' }) duration_ms: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' }, nullable: true }) state_ms: Record<
    string,
    number
  > | null;
}

@ApiSchema({ name: 'TreeParty' })
class TreePartySchema implements ParticipantView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() agent_handle: string;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
}

@ApiSchema({ name: 'TreeNode' })
export class TreeNodeSchema implements TreeNodeView {
  @ApiPropertyOptional({ enum: [true], description: 'A task the caller may not see: state and usage only.' })
  opaque?: true;
  @ApiPropertyOptional({ format: 'uuid' }) id?: string;
  @ApiProperty() depth: number;
  @ApiProperty({ enum: TASK_STATES }) state: TaskState;
  @ApiPropertyOptional({ type: TreePartySchema }) requester?: ParticipantView;
  @ApiPropertyOptional({ type: TreePartySchema }) worker?: ParticipantView;
  @ApiPropertyOptional({ format: 'date-time' }) created_at?: string;
  @ApiPropertyOptional({ format: 'date-time' }) updated_at?: string;
  @ApiProperty({ type: NodeUsageSchema }) usage: NodeUsageView;
  @ApiPropertyOptional({ type: () => [TreeNodeSchema] }) children?: TreeNodeView[];
  @ApiPropertyOptional({ enum: [true] }) children_truncated?: true;
}

@ApiSchema({ name: 'TreeTotals' })
class TreeTotalsSchema implements TreeTotalsView {
  @ApiProperty() tasks: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'integer' } }) by_state: Partial<
    Record<TaskState, number>
  >;
  @ApiProperty() input_tokens: number;
  @ApiProperty() output_tokens: number;
  @ApiProperty() messages: number;
  @ApiProperty() parts: number;
  @ApiProperty() artifact_bytes: number;
  @ApiProperty({ type: [TreeMoneySchema] }) cost: MoneyView[];
}

@ApiSchema({ name: 'TaskTree' })
export class TaskTreeSchema implements TaskTreeView {
  @ApiProperty({ type: [TreeNodeSchema] }) ancestors: TreeNodeView[];
  @ApiProperty({ type: TreeNodeSchema }) task: TreeNodeView;
  @ApiProperty() truncated: boolean;
  @ApiProperty({ type: TreeTotalsSchema }) totals: TreeTotalsView;
}

@ApiSchema({ name: 'TopTree' })
class TopTreeSchema implements TopTreeView {
  @ApiProperty({ format: 'uuid', description: 'The root task.' }) id: string;
  @ApiProperty({ type: TreePartySchema }) requester: ParticipantView;
  @ApiProperty({ type: TreePartySchema }) worker: ParticipantView;
  @ApiProperty({ enum: TASK_STATES, description: "The root task's state." }) state: TaskState;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ description: 'The root and its descendants.' }) tasks: number;
  @ApiProperty() input_tokens: number;
  @ApiProperty() output_tokens: number;
  @ApiProperty({ type: [TreeMoneySchema] }) cost: MoneyView[];
}

@ApiSchema({ name: 'TopTrees' })
export class TopTreesSchema implements TopTreesView {
  @ApiProperty({ format: 'date-time' }) from: string;
  @ApiProperty({ format: 'date-time' }) to: string;
  @ApiProperty({ type: [TopTreeSchema] }) trees: TopTreeView[];
}
