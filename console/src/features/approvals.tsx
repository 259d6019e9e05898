import { useMutation, useQuery, useQueryClient, type InfiniteData, type QueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { api, ApiError, call } from '../api';
import { EmptyState, StartAt } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged, type PageResult } from '../paging';
import { Link } from '../router';
import type { Approval, Message } from '../types';
import { Check, ErrorNotice, Field, Loading, LoadMore, Select, Submit, TextArea, usePageTitle, when } from '../ui';
import { useDraft, useUrlFilters } from '../url-filters';

type ApprovalState = Approval['state'];
type Remember = NonNullable<Approval['remember']>;

/** Every approvals query; the lists under ['approvals', 'list', …], the navigation's count beside them. */
const APPROVALS = ['approvals'] as const;
const LISTS = [...APPROVALS, 'list'] as const;
const PENDING = [...APPROVALS, 'pending'] as const;
/** How often the navigation asks again how many requests wait, while the Console is open. */
const COUNT_MS = 30_000;
/** How much of the first message an inbox item shows. */
const PREVIEW_CHARS = 280;
/** Longest reason the deny form sends. */
const REASON_CHARS = 500;

const STATE_TITLES: Record<ApprovalState, string> = {
  pending: 'Waiting for a decision',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
};

/**
 * How many requests of the organization wait for a person: the list's `pending`, read with
 * the smallest page, and again whenever a list of approvals is read or a decision is made.
 */
export function usePendingApprovals(enabled: boolean) {
  return useQuery({
    queryKey: PENDING,
    enabled,
    queryFn: async () =>
      (await call(api.GET('/api/v1/approvals', { params: { query: { state: 'pending', limit: 1 } } }))).pending,
    refetchInterval: COUNT_MS,
  });
}

/** The inbox (docs/api.md §16): requests to approve a first contact, pending ones first (the default filter). */
export function ApprovalsPage() {
  usePageTitle('Approvals');
  const client = useQueryClient();
  const [applied, setFilters] = useUrlFilters({ state: 'pending', identity: '' });
  const state = stateParam(applied.state);
  const identity = applied.identity.trim();
  const [draft, setDraft] = useDraft(identity);
  const filters = { state: state || undefined, identity: identity || undefined };
  const list = usePaged<Approval>([...LISTS, filters], async (cursor) => {
    const body = await call(api.GET('/api/v1/approvals', { params: { query: { ...filters, cursor } } }));
    client.setQueryData(PENDING, body.pending);
    return pageOf(body, 'approvals');
  });
  const title = state ? STATE_TITLES[state] : 'All requests';
  return (
    <>
      <h1>Approvals</h1>
      <p className="muted">
        A first task between one of your identities and another organization's waits here when a contact rule asks a
        person or the identity's filter mode is approval. Nothing reaches the worker until someone decides. “Always”
        also writes a contact rule, so later tasks of the pair are not asked about again.
      </p>
      <form
        className="filters"
        aria-label="Approval filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters({ identity: draft.trim() });
        }}
      >
        <Select label="State" value={state} onChange={(e) => setFilters({ state: e.target.value })}>
          {(Object.keys(STATE_TITLES) as ApprovalState[]).map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
          <option value="">any</option>
        </Select>
        <Field label="Identity" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder="every identity" />
        <button type="submit">Apply filters</button>
      </form>
      <section aria-labelledby="requests-title">
        <h2 id="requests-title">{title}</h2>
        {list.isPending ? (
          <Loading />
        ) : list.error ? (
          <ErrorNotice error={list.error} />
        ) : list.items.length === 0 ? (
          state === 'pending' && !identity ? (
            <EmptyState
              title="Nothing waits for a decision."
              actions={<StartAt to="/admission">Write a rule that asks</StartAt>}
            >
              An approval request is a first task from a peer that a contact rule (or an identity&apos;s approval filter
              mode) says a person must allow: it waits here, held from the worker, until someone of your organization
              approves or denies it.
            </EmptyState>
          ) : (
            <EmptyState>No requests match.</EmptyState>
          )
        ) : (
          <ul className="cards" aria-label="Approval requests">
            {list.items.map((approval) => (
              <ApprovalItem key={approval.id} approval={approval} />
            ))}
          </ul>
        )}
        <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
      </section>
    </>
  );
}

/** The state filter of the URL: `state=` (or `state=any`) for any state, pending when it names none. */
function stateParam(value: string): ApprovalState | '' {
  if (value === '' || value === 'any') {
    return '';
  }
  return Object.hasOwn(STATE_TITLES, value) ? (value as ApprovalState) : 'pending';
}

/** Who asks whom, from our side: our identity calls out, or a peer calls in. */
function headline(approval: Approval): string {
  return approval.side === 'requester'
    ? `${approval.identity.handle} asks to send work to ${approval.peer.handle}`
    : `${approval.peer.handle} asks to send work to ${approval.identity.handle}`;
}

/** A held task is its requester's side's to read; the worker's side sees it once approved. */
function taskVisible(approval: Approval): boolean {
  return approval.side === 'requester' || approval.state === 'approved';
}

function ApprovalItem({ approval }: { approval: Approval }) {
  const titleId = useId();
  const text = preview(approval.first_message);
  const waiting = approval.tasks === 1 ? '1 task waits' : `${approval.tasks} tasks wait`;
  return (
    <li>
      <article aria-labelledby={titleId}>
        <h3 id={titleId}>{headline(approval)}</h3>
        <p>
          <span className={`badge ${approval.state}`}>{approval.state}</span> Peer{' '}
          <strong>{approval.peer.handle}</strong> of organization <code>{approval.peer.organization_id}</code> · our
          identity <Link to={`/identities/${approval.identity.handle}`}>{approval.identity.handle}</Link>
          {approval.state === 'pending' && ` · ${waiting}`}
        </p>
        <figure className="first-message">
          <figcaption className="muted">
            First message
            {taskVisible(approval) && (
              <>
                {' '}
                ·{' '}
                <Link to={`/tasks/${approval.first_task_id}`} aria-label={`Task ${approval.first_task_id}`}>
                  task {approval.first_task_id.slice(0, 8)}
                </Link>
              </>
            )}
          </figcaption>
          {text ? (
            <blockquote className="part">{text}</blockquote>
          ) : (
            <EmptyState>The first message has no text.</EmptyState>
          )}
        </figure>
        <p className="muted">
          Asked {when(approval.created_at)}
          {approval.state === 'pending' && (
            <>
              {' '}
              · {new Date(approval.expires_at).getTime() > Date.now() ? 'expires' : 'expired'}{' '}
              {fromNow(approval.expires_at)} (<time dateTime={approval.expires_at}>{when(approval.expires_at)}</time>)
            </>
          )}
        </p>
        {approval.state === 'pending' ? <Decide approval={approval} /> : <Outcome approval={approval} />}
      </article>
    </li>
  );
}

/** The text parts of the first message, joined and cut to PREVIEW_CHARS; null when it has none. */
function preview(message: Message | null): string | null {
  const text = (message?.parts ?? [])
    .flatMap((part) => (typeof part.text === 'string' ? [part.text] : []))
    .join('\n')
    .trim();
  if (!text) {
    return null;
  }
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS).trimEnd()}…` : text;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "in 3 days", "in 5 hours", "2 minutes ago". */
function fromNow(iso: string): string {
  const ms = new Date(iso).getTime() - Date.now();
  const [unit, size] = UNITS.find(([, size]) => Math.abs(ms) >= size) ?? UNITS[UNITS.length - 1];
  return new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }).format(Math.round(ms / size), unit);
}

function Outcome({ approval }: { approval: Approval }) {
  if (approval.state === 'expired') {
    return <p role="status">Expired {when(approval.expires_at)} without a decision: its tasks were rejected.</p>;
  }
  const by = approval.decided_by;
  const who = !by ? 'someone' : by.type === 'user' ? (by.email ?? `user ${by.id}`) : `key ${by.label || by.id}`;
  const verb = approval.state === 'approved' ? 'Approved' : 'Denied';
  const rule =
    approval.remember === 'always'
      ? approval.state === 'approved'
        ? ' Always: an allow rule now admits the pair.'
        : ' Always: a block rule now refuses the pair.'
      : '';
  return (
    <div role="status" className={`notice ${approval.state === 'approved' ? 'ok' : 'error'}`}>
      <p>
        <strong>
          {verb} {approval.remember ?? ''}
        </strong>{' '}
        by {who}, {when(approval.decided_at)}.{rule}
      </p>
      {approval.reason && <p>Reason: {approval.reason}</p>}
    </div>
  );
}

/** The problem of a decision, in the words a person needs next to the button. */
function decisionProblem(error: unknown, approval: Approval): string {
  if (error instanceof ApiError) {
    // 409 `approval_decided`: decided by someone else, or expired meanwhile.
    if (error.status === 409) {
      return new Date(approval.expires_at).getTime() <= Date.now()
        ? 'This request expired before anyone decided it.'
        : 'Someone already decided this request.';
    }
    if (error.status === 404) {
      return 'This request is not there any more: it may belong to another organization.';
    }
    if (error.status === 403) {
      return 'You may not decide the requests of this organization.';
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/** Puts a decided request in place of the pending one in every list read so far (it stays in view, decided). */
function showDecided(client: QueryClient, decided: Approval): void {
  client.setQueriesData<InfiniteData<PageResult<Approval>>>({ queryKey: LISTS }, (data) =>
    data
      ? {
          ...data,
          pages: data.pages.map((page) => ({
            ...page,
            items: page.items.map((item) => (item.id === decided.id ? decided : item)),
          })),
        }
      : data,
  );
}

function useDecided() {
  const client = useQueryClient();
  return {
    onSuccess: (decided: Approval) => {
      showDecided(client, decided);
      void client.invalidateQueries({ queryKey: PENDING });
    },
    // Decided elsewhere or gone: the count is stale too.
    onError: () => void client.invalidateQueries({ queryKey: PENDING }),
  };
}

function Decide({ approval }: { approval: Approval }) {
  const decided = useDecided();
  const [denying, setDenying] = useState(false);
  const denyButton = useRef<HTMLButtonElement>(null);
  const approve = useMutation({
    mutationFn: (remember: Remember) =>
      call<Approval>(
        api.POST('/api/v1/approvals/{id}/approve', { params: { path: { id: approval.id } }, body: { remember } }),
      ),
    ...decided,
  });
  const refused = approve.error instanceof ApiError && approve.error.status === 409;
  return (
    <>
      <div className="actions" role="group" aria-label={`Decide: ${headline(approval)}`}>
        {(['once', 'always'] as const).map((remember) => (
          <button
            key={remember}
            type="button"
            className={remember === 'once' ? 'primary' : undefined}
            onClick={() => approve.mutate(remember)}
            disabled={approve.isPending || refused}
            aria-busy={approve.isPending && approve.variables === remember}
          >
            Approve {remember}
          </button>
        ))}
        <button
          ref={denyButton}
          type="button"
          className="danger"
          aria-expanded={denying}
          onClick={() => setDenying(!denying)}
          disabled={approve.isPending || refused}
        >
          Deny…
        </button>
      </div>
      {approve.error && (
        <p role="alert" className="field-error">
          {decisionProblem(approve.error, approval)}
        </p>
      )}
      {denying && (
        <DenyForm
          approval={approval}
          onCancel={() => {
            setDenying(false);
            denyButton.current?.focus();
          }}
        />
      )}
    </>
  );
}

const DENY_REMEMBER: Record<Remember, string> = {
  once: 'Once: reject these tasks; the next task of the pair asks again',
  always: 'Always: also write a block rule, so the pair is refused without asking',
};

function DenyForm({ approval, onCancel }: { approval: Approval; onCancel: () => void }) {
  const decided = useDecided();
  const [remember, setRemember] = useState<Remember>('once');
  const [reason, setReason] = useState('');
  const {
    mutation: deny,
    submit,
    errorOf,
  } = useFormMutation({
    validate: () => ({
      reason: reason.trim().length > REASON_CHARS ? `At most ${REASON_CHARS} characters.` : undefined,
    }),
    mutationFn: () =>
      call<Approval>(
        api.POST('/api/v1/approvals/{id}/deny', {
          params: { path: { id: approval.id } },
          body: { remember, reason: reason.trim() || undefined },
        }),
      ),
    ...decided,
  });
  return (
    <form onSubmit={submit} noValidate aria-label={`Deny: ${headline(approval)}`}>
      <TextArea
        label="Reason (optional)"
        autoFocus
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        error={errorOf('reason')}
        hint="The requester is shown it, in the task's status message."
      />
      <fieldset>
        <legend>Remember</legend>
        {(Object.keys(DENY_REMEMBER) as Remember[]).map((value) => (
          <Check
            type="radio"
            key={value}
            name={`remember-${approval.id}`}
            label={DENY_REMEMBER[value]}
            checked={remember === value}
            onChange={() => setRemember(value)}
          />
        ))}
      </fieldset>
      {deny.error && !errorOf('reason') && (
        <p role="alert" className="field-error">
          {decisionProblem(deny.error, approval)}
        </p>
      )}
      <div className="actions">
        <Submit pending={deny.isPending} pendingLabel="Denying…" className="danger">
          Deny {remember}
        </Submit>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
