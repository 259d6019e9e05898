import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api';
import { Link } from '../router';
import type { TaskTree, TreeNode } from '../types';
import { ErrorNotice, Loading } from '../ui';

/** Tokens, cost and time of a node, in a few words. */
function usageLine(node: TreeNode): string {
  const { usage } = node;
  const cost = usage.cost ? ` · ${usage.cost.amount} ${usage.cost.currency}` : '';
  return `${usage.input_tokens + usage.output_tokens} tokens${cost} · ${usage.messages} messages · ${Math.round(usage.duration_ms / 1000)} s`;
}

/** One node and its children: who asked whom, its state, time and cost; another organization's nodes opaque. */
function NodeItem({ node, current }: { node: TreeNode; current?: string }) {
  return (
    <li>
      {node.opaque ? (
        <span className="muted">Another organization's task</span>
      ) : node.id === current ? (
        <strong>
          {node.requester?.agent_handle} → {node.worker?.agent_handle} (this task)
        </strong>
      ) : (
        <Link to={`/tasks/${node.id}`}>
          {node.requester?.agent_handle} → {node.worker?.agent_handle}
        </Link>
      )}{' '}
      <span className={`badge ${node.state}`}>{node.state}</span> <span className="muted">{usageLine(node)}</span>
      {(node.children?.length ?? 0) > 0 && (
        <ul>
          {node.children!.map((child, i) => (
            <NodeItem key={child.id ?? `opaque-${i}`} node={child} current={current} />
          ))}
          {node.children_truncated && <li className="muted">More tasks not shown.</li>}
        </ul>
      )}
    </li>
  );
}

/**
 * A task's delegation tree (docs/api.md §18): its ancestors down to it, its descendants
 * under it, and the whole tree's totals. Nodes of other organizations show only their
 * state and usage.
 */
export function TaskTreeSection({ id }: { id: string }) {
  const tree = useQuery({
    queryKey: ['task-tree', id],
    queryFn: () => call<TaskTree>(api.GET('/api/v1/tasks/{id}/tree', { params: { path: { id } } })),
  });
  let body;
  if (tree.isPending) {
    body = <Loading />;
  } else if (tree.error || !tree.data) {
    body = <ErrorNotice error={tree.error} />;
  } else {
    const { ancestors, task, totals } = tree.data;
    // The path from the root: each ancestor holds the next, the task the last.
    let nested: TreeNode = task;
    for (const ancestor of [...ancestors].reverse()) {
      nested = { ...ancestor, children: [nested] };
    }
    const costs = totals.cost.map((c) => `${c.amount} ${c.currency}`).join(', ') || 'none reported';
    body = (
      <>
        <ul className="tree" aria-label="Delegation tree">
          <NodeItem node={nested} current={task.id} />
        </ul>
        <p aria-label="Tree totals">
          {totals.tasks} tasks in the tree · {totals.input_tokens + totals.output_tokens} tokens · cost {costs}
        </p>
        {tree.data.truncated && <p className="muted">The tree is larger than shown.</p>}
      </>
    );
  }
  return (
    <section aria-labelledby="tree-title">
      <h2 id="tree-title">Delegation tree</h2>
      {body}
    </section>
  );
}
