import { Inject, Injectable } from '@nestjs/common';
import { badRequest, type AppError } from '../common/app-error';
import { failureOf } from '../database/errors';
import { notVisible, sideOf } from '../auth/access';
import type { Principal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { usageRange } from '../usage/usage-range';
import type { TopTreesQuery } from './dto/top-trees.query';
import { MAX_TREE_NODES, type TreeQuery } from './dto/tree.query';
import { TaskTreeRepository, type TreeNodeRecord } from './task-tree.repository';
import {
  toTopTreeView,
  toTreeNodeView,
  toTreeTotalsView,
  type TaskTreeView,
  type TopTreesView,
  type TreeNodeView,
} from './task-tree.view';

/** The SQLSTATE of a new task deeper than LEDGER_MAX_TREE_DEPTH (a2a_child_depth). */
export const TREE_TOO_DEEP = 'TDEEP';

/** A send refused for starting a task too deep in its tree, or null for any other failure. */
export function treeRefusal(error: unknown): AppError | null {
  const failure = failureOf(error, TREE_TOO_DEEP);
  return failure
    ? badRequest('tree_too_deep', `Refused: ${failure.message} (LEDGER_MAX_TREE_DEPTH); delegate less deeply.`)
    : null;
}

/**
 * `GET /api/v1/tasks/{id}/tree` (docs/api.md §18): a task the caller may read, its
 * ancestors up to its root and its descendants, each node whole or opaque as the
 * caller's side may see it (the rule of every ledger read, src/auth/access.ts), and the
 * whole tree's totals. A held task the caller's side may not see is left out entirely,
 * as every read of the worker's side leaves it out.
 */
@Injectable()
export class TaskTreeService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: TaskTreeRepository,
  ) {}

  async tree(principal: Principal, taskId: string, query: TreeQuery): Promise<TaskTreeView> {
    const side = sideOf(principal);
    const task = await this.repository.node(taskId, side);
    if (!task?.visible) {
      throw notVisible('task.read');
    }
    const fanOut = query.fan_out ?? 50;
    const levels = Math.min(query.depth ?? this.config.ledgerMaxTreeDepth, this.config.ledgerMaxTreeDepth);
    const [ancestors, descendants, totals] = await Promise.all([
      this.repository.ancestors(task.id, side, this.config.ledgerMaxTreeDepth),
      this.repository.descendants(task.id, side, fanOut, levels, MAX_TREE_NODES),
      this.repository.totals(task.rootTaskId ?? task.id),
    ]);
    const truncated = descendants.length > MAX_TREE_NODES;
    const top = toTreeNodeView(task);
    const views = new Map<string, TreeNodeView>([[task.id, top]]);
    for (const node of truncated ? descendants.slice(0, MAX_TREE_NODES) : descendants) {
      const parent = views.get(node.parentTaskId!);
      if (!parent || (node.held && !node.visible)) {
        continue; // under a child beyond its parent's fan-out, or held from the caller's side
      }
      const children = (parent.children ??= []);
      if (children.length === fanOut) {
        parent.children_truncated = true;
        continue;
      }
      const view = toTreeNodeView(node);
      children.push(view);
      views.set(node.id, view);
    }
    return {
      ancestors: ancestors
        .filter((node: TreeNodeRecord) => !(node.held && !node.visible))
        .reverse()
        .map(toTreeNodeView),
      task: top,
      truncated,
      totals: toTreeTotalsView(totals),
    };
  }

  /**
   * `GET /api/v1/usage/trees` (docs/api.md §18): the largest delegation trees whose root
   * the caller may read (the rule of every ledger read), created in the usage range.
   */
  async topTrees(principal: Principal, query: TopTreesQuery): Promise<TopTreesView> {
    const { from, to } = usageRange(query);
    const trees = await this.repository.topTrees(sideOf(principal), query.identity, from, to, query.limit ?? 10);
    return { from: from.toISOString(), to: to.toISOString(), trees: trees.map(toTopTreeView) };
  }
}
