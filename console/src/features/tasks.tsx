import { TaskTreeSection } from './task-tree';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, call } from '../api';
import { EmptyState, StartAt } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged } from '../paging';
import { Link } from '../router';
import { useDraft, useUrlFilters } from '../url-filters';
import type { paths } from '../../../client';
import type { Artifact, Part, Task } from '../types';

type TaskQuery = NonNullable<paths['/api/v1/tasks']['get']['parameters']['query']>;
import { ErrorNotice, Field, Loading, LoadMore, Select, shortId, Submit, TextArea, usePageTitle, when } from '../ui';

const STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
];
const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);
/** How often an open task and the task list are read again while someone watches them. */
const LIVE_MS = 1500;

/** Task states as the REST ledger spells them (v1.0 wire names are folded). */
function stateOf(task: Pick<Task, 'status'>): string {
  return task.status.state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

/** Held before it reaches the worker, until a person approves the first contact of the pair (docs/api.md §16). */
function waitsForApproval(task: Task): boolean {
  return task.awaiting_approval === true;
}

/** The first words of a task's latest message (the list carries one message per task). */
function preview(task: Task): string {
  const last = (task.history ?? [])[(task.history ?? []).length - 1];
  const text = last?.parts.find((part) => typeof part.text === 'string')?.text ?? '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}
const PREVIEW_CHARS = 90;

const TASK_FILTERS = { role: '', state: '', identity: '', peer: '', context: '' };

export function TasksPage() {
  usePageTitle('Tasks');
  const [applied, setFilters] = useUrlFilters(TASK_FILTERS);
  const role = applied.role as TaskQuery['role'] | '';
  const state = applied.state as TaskQuery['state'] | '';
  const setRole = (value: string) => setFilters({ role: value });
  const setState = (value: string) => setFilters({ state: value });
  // Text filters apply on submit (not on every keystroke).
  const [draft, setDraft] = useDraft({ identity: applied.identity, peer: applied.peer, context: applied.context });
  const text = { identity: applied.identity, peer: applied.peer, context: applied.context };
  const setText = (value: typeof draft) =>
    setFilters({ identity: value.identity.trim(), peer: value.peer.trim(), context: value.context.trim() });
  const filters = {
    role: role || undefined,
    state: state || undefined,
    peer: text.peer.trim() || undefined,
    context_id: text.context.trim() || undefined,
    identity: text.identity.trim() || undefined,
  };
  const list = usePaged<Task>(
    ['tasks', filters],
    async (cursor) =>
      pageOf(await call(api.GET('/api/v1/tasks', { params: { query: { ...filters, cursor } } })), 'tasks'),
    LIVE_MS * 4,
  );
  return (
    <>
      <h1>Tasks</h1>
      <form
        className="filters"
        aria-label="Task filters"
        onSubmit={(e) => {
          e.preventDefault();
          setText(draft);
        }}
      >
        <Select label="Role" value={role} onChange={(e) => setRole(e.target.value)}>
          <option value="">any</option>
          <option value="requester">requester</option>
          <option value="worker">worker</option>
        </Select>
        <Select label="State" value={state} onChange={(e) => setState(e.target.value)}>
          <option value="">any</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </Select>
        <Field
          label="Identity"
          value={draft.identity}
          onChange={(e) => setDraft({ ...draft, identity: e.target.value })}
        />
        <Field label="Peer" value={draft.peer} onChange={(e) => setDraft({ ...draft, peer: e.target.value })} />
        <Field
          label="Context id"
          value={draft.context}
          onChange={(e) => setDraft({ ...draft, context: e.target.value })}
        />
        <button type="submit">Apply filters</button>
      </form>
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : list.items.length === 0 ? (
        Object.values(filters).some(Boolean) ? (
          <EmptyState>No tasks match.</EmptyState>
        ) : (
          <EmptyState
            title="No tasks yet."
            actions={
              <>
                <StartAt to="/identities">Create an identity</StartAt>
                <StartAt to="/keys">Mint an agent key</StartAt>
              </>
            }
          >
            A task is one piece of work an agent sends another through the protocol (
            <code>POST /a2a/&lt;handle&gt;</code> with its agent key). Both sides see it here, live, from submitted to
            completed. Create an identity, mint its agent key, and send your first message.
          </EmptyState>
        )
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Requester → worker</th>
              <th scope="col">State</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((task) => (
              <tr key={task.id}>
                <td>
                  {/* Its name holds what it shows (axe: label-content-name-mismatch); the whole id on hover. */}
                  <Link
                    to={`/tasks/${task.id}`}
                    aria-label={`Task ${shortId(task.id)}`}
                    title={task.id}
                    className="mono"
                  >
                    {shortId(task.id)}
                  </Link>
                  {preview(task) && <div className="preview">{preview(task)}</div>}
                </td>
                <td>
                  {task.requester.agent_handle} → {task.worker.agent_handle}
                </td>
                <td>
                  <span className={`badge ${stateOf(task)}`}>{stateOf(task)}</span>
                  {waitsForApproval(task) && (
                    <>
                      {' '}
                      <span className="badge ask">waiting for approval</span>
                    </>
                  )}
                </td>
                <td>{when(task.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </>
  );
}

function PartView({ part }: { part: Part }) {
  if (typeof part.text === 'string') {
    return <p className="part">{part.text}</p>;
  }
  if (part.data !== undefined) {
    return <pre className="part">{JSON.stringify(part.data, null, 2)}</pre>;
  }
  return <pre className="part">{JSON.stringify(part.file ?? part, null, 2)}</pre>;
}

interface Step {
  state: string;
  at: string;
}

/** One task, read again every LIVE_MS until it is terminal: conversation, artifacts, the states it went through. */
export function TaskPage({ id }: { id: string }) {
  usePageTitle(`Task ${shortId(id)}`);
  const task = useQuery({
    queryKey: ['task', id],
    queryFn: () => call<Task>(api.GET('/api/v1/tasks/{id}', { params: { path: { id } } })),
    refetchInterval: (query) => (query.state.data && TERMINAL.has(stateOf(query.state.data)) ? false : LIVE_MS),
  });
  const [timeline, setTimeline] = useState<Step[]>([]);
  const data = task.data;
  useEffect(() => {
    if (!data) {
      return;
    }
    const state = stateOf(data);
    setTimeline((steps) => {
      if (steps.length === 0) {
        // What the ledger tells at first sight: created as submitted, and the state it has now.
        const first: Step[] = [{ state: 'submitted', at: data.created_at }];
        return state === 'submitted' ? first : [...first, { state, at: data.status.timestamp }];
      }
      const last = steps[steps.length - 1];
      return last.state === state && last.at === data.status.timestamp
        ? steps
        : [...steps, { state, at: data.status.timestamp }];
    });
  }, [data]);
  if (task.isPending) {
    return <Loading />;
  }
  if (task.error || !data) {
    return <ErrorNotice error={task.error} />;
  }
  const state = stateOf(data);
  const live = !TERMINAL.has(state);
  const held = waitsForApproval(data);
  return (
    <>
      <p>
        <Link to="/tasks">← Tasks</Link>
      </p>
      <h1>
        Task <code>{shortId(data.id)}</code>
      </h1>
      <p>
        {data.requester.agent_handle} → {data.worker.agent_handle} · context <code>{shortId(data.contextId)}</code>
      </p>
      <p role="status" aria-live="polite" aria-label="Task state">
        State: <span className={`badge ${state}`}>{state}</span>{' '}
        {held ? (
          <strong>Waiting for approval</strong>
        ) : live ? (
          <span className="muted">(live — updates as the worker answers)</span>
        ) : null}
      </p>
      {held && (
        <p className="notice">
          Nothing reaches {data.worker.agent_handle} until a person approves this first contact. When your
          organization's rules ask, decide in <Link to="/approvals">Approvals</Link>; otherwise the worker's
          organization decides.
        </p>
      )}
      <div className="columns">
        <section aria-labelledby="history-title">
          <h2 id="history-title">Conversation</h2>
          {(data.history ?? []).length === 0 ? (
            <EmptyState>No messages.</EmptyState>
          ) : (
            <ol className="history" aria-label="Messages">
              {(data.history ?? []).map((message) => (
                <li key={message.messageId} className={message.role}>
                  <div className="muted">
                    {message.role === 'user' ? data.requester.agent_handle : data.worker.agent_handle} ·{' '}
                    {when(message.created_at)}
                  </div>
                  {message.parts.map((part, i) => (
                    <PartView key={i} part={part} />
                  ))}
                </li>
              ))}
            </ol>
          )}
          {data.status.message && !(data.history ?? []).some((m) => m.messageId === data.status.message?.messageId) && (
            <div className="notice">
              <strong>Status message:</strong>
              {data.status.message.parts.map((part, i) => (
                <PartView key={i} part={part} />
              ))}
            </div>
          )}
        </section>
        <div>
          <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">Status timeline</h2>
            <ol aria-label="Status timeline">
              {timeline.map((step, i) => (
                <li key={i}>
                  <span className={`badge ${step.state}`}>{step.state}</span> {when(step.at)}
                </li>
              ))}
            </ol>
          </section>
          {live && !held && <Reply id={data.id} />}
          <TaskTreeSection id={data.id} />
          <section aria-labelledby="artifacts-title">
            <h2 id="artifacts-title">Artifacts</h2>
            {(data.artifacts ?? []).length === 0 ? (
              <EmptyState>No artifacts.</EmptyState>
            ) : (
              (data.artifacts ?? []).map((a: Artifact) => <ArtifactView key={a.artifactId} artifact={a} />)
            )}
          </section>
        </div>
      </div>
    </>
  );
}

function ArtifactView({ artifact }: { artifact: Artifact }) {
  return (
    <article className="artifact" aria-label={`Artifact ${artifact.name ?? artifact.artifactId}`}>
      <h3>{artifact.name ?? artifact.artifactId}</h3>
      {artifact.description && <p className="muted">{artifact.description}</p>}
      {artifact.parts.map((part, i) => (
        <PartView key={i} part={part} />
      ))}
    </article>
  );
}

type ReplyState = NonNullable<
  paths['/api/v1/tasks/{id}/reply']['post']['requestBody']
>['content']['application/json']['state'];

/** The worker side's answer from the Console (allowed to the worker's organization; the requester's gets the problem's detail). */
function Reply({ id }: { id: string }) {
  const client = useQueryClient();
  const [state, setState] = useState<ReplyState | ''>('');
  const [text, setText] = useState('');
  const {
    mutation: reply,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      message: !state && !text.trim() ? 'Write a message or choose a new state.' : undefined,
    }),
    mutationFn: () =>
      call(
        api.POST('/api/v1/tasks/{id}/reply', {
          params: { path: { id } },
          body: {
            state: state || undefined,
            // Parts are A2A objects; the document types them loosely.
            message: text.trim() ? { parts: [{ kind: 'text', text: text.trim() }] as never } : undefined,
          },
        }),
      ),
    onSuccess: () => {
      setText('');
      void client.invalidateQueries({ queryKey: ['task', id] });
    },
  });
  return (
    <section aria-labelledby="reply-title">
      <h2 id="reply-title">Reply as the worker</h2>
      <form onSubmit={submit} noValidate>
        <Select label="New state" value={state} onChange={(e) => setState(e.target.value as ReplyState | '')}>
          <option value="">unchanged</option>
          {['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'].map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </Select>
        <TextArea label="Message" value={text} onChange={(e) => setText(e.target.value)} error={errorOf('message')} />
        <ErrorNotice error={notice} />
        <Submit pending={reply.isPending} pendingLabel="Sending…">
          Send reply
        </Submit>
      </form>
    </section>
  );
}
