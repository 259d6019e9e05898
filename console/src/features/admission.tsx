import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../api';
import { EmptyState, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged } from '../paging';
import { useDraft, useUrlFilters } from '../url-filters';
import type { AdmissionCheck, ContactRule, Decision } from '../types';
import {
  ConfirmButton,
  ErrorNotice,
  Field,
  Loading,
  LoadMore,
  Select,
  Submit,
  SuccessNotice,
  usePageTitle,
  when,
  type FieldErrors,
} from '../ui';
import { validateHandle } from './identities';

/** What each `reason` of the admission check means, in words. */
export const REASONS: Record<string, string> = {
  same_organization:
    'Both identities belong to the same organization, so they may always work together (unless a rule blocks it).',
  public_egress: 'The worker is publicly discoverable and the requester allows public egress.',
  mutual_permit: 'Both sides permit the call: each has an allow rule or the blacklist filter mode.',
  blocked_by_requester: "A block rule of the requester's side forbids the call.",
  blocked_by_worker: "A block rule of the worker's side forbids the call.",
  not_permitted_by_requester: 'The requester is in whitelist mode and has no allow rule for this worker.',
  not_permitted_by_worker: 'The worker is in whitelist mode and has no allow rule for this requester.',
  requester_disabled: 'The requester is disabled: only enabled identities may call.',
  requester_unclaimed: 'The requester is unclaimed: only claimed identities may call.',
  worker_unavailable: 'The worker is not a claimed, enabled identity.',
  approval_required_by_requester:
    "The requester's side asks: a person of its organization must approve a new task before the worker sees it.",
  approval_required_by_worker:
    "The worker's side asks: a person of its organization must approve a new task before the worker sees it.",
  denied_by_peer: "The other organization's side denied it (its rules are not shown to you).",
};

type RuleAction = ContactRule['action'];

/** Each action as the rule form names it, with one line on what it does. */
export const ACTIONS: Record<RuleAction, { label: string; hint: string }> = {
  allow: { label: 'allow', hint: 'The peer may work with the owner (the other side must permit it too).' },
  block: { label: 'block', hint: 'The peer is refused, whatever else the rules say.' },
  ask: {
    label: 'Ask a person',
    hint: 'A new task from or to the peer waits in Approvals until a person of your organization decides.',
  },
};

function describePeer(rule: ContactRule): string {
  return rule.peer.type === 'identity' ? `identity ${rule.peer.handle}` : `organization ${rule.peer.organization_id}`;
}

export function AdmissionPage() {
  usePageTitle('Admission');
  const [filters, setFilters] = useUrlFilters({ identity: '' });
  const identity = filters.identity;
  const setIdentity = (value: string) => setFilters({ identity: value });
  return (
    <>
      <h1>Admission</h1>
      <div className="columns">
        <div>
          <Rules identity={identity} setIdentity={setIdentity} />
          <Decisions identity={identity} />
        </div>
        <div>
          <CheckAdmission />
          <CreateRule identity={identity} />
        </div>
      </div>
    </>
  );
}

function Rules({ identity, setIdentity }: { identity: string; setIdentity: (value: string) => void }) {
  const [draft, setDraft] = useDraft(identity);
  const list = usePaged<ContactRule>(['rules', identity], async (cursor) =>
    pageOf(
      await call(api.GET('/api/v1/contact-rules', { params: { query: { identity: identity || undefined, cursor } } })),
      'rules',
    ),
  );
  return (
    <section aria-labelledby="rules-title">
      <h2 id="rules-title">Contact rules</h2>
      <form
        className="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setIdentity(draft.trim());
        }}
      >
        <Field
          label="Rules of identity"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder="every identity"
        />
        <button type="submit">Show</button>
      </form>
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : list.items.length === 0 ? (
        <EmptyState title="No contact rules." actions={<StartWith form="new-rule">Write your first rule</StartWith>}>
          A contact rule says who may send work to your identities (inbound) and whom they may call (outbound): allow,
          block, or ask a person. Without one, identities of your organization reach each other, and each
          identity&apos;s filter mode decides for the rest.
        </EmptyState>
      ) : (
        <ul className="cards">
          {list.items.map((rule) => (
            <RuleRow key={rule.id} rule={rule} />
          ))}
        </ul>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </section>
  );
}

function RuleRow({ rule }: { rule: ContactRule }) {
  const client = useQueryClient();
  const change = useMutation({
    mutationFn: (body: { action?: RuleAction; direction?: ContactRule['direction'] }) =>
      call<ContactRule>(api.PATCH('/api/v1/contact-rules/{id}', { params: { path: { id: rule.id } }, body })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['rules'] }),
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/contact-rules/{id}', { params: { path: { id: rule.id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['rules'] }),
  });
  const name = `${rule.identity} ${rule.direction} ${describePeer(rule)}`;
  return (
    <li>
      <div className="row">
        <span className={`badge ${rule.action}`}>{rule.action}</span> <strong>{rule.identity}</strong> {rule.direction}{' '}
        {describePeer(rule)}
      </div>
      {rule.note && <p className="muted">{rule.note}</p>}
      <div className="actions">
        {(Object.keys(ACTIONS) as RuleAction[])
          .filter((action) => action !== rule.action)
          .map((action) => (
            <button key={action} type="button" onClick={() => change.mutate({ action })} disabled={change.isPending}>
              Change to {action}
            </button>
          ))}
        <ConfirmButton
          label="Delete rule"
          title="Delete this contact rule?"
          body={<p>{name}</p>}
          confirmLabel="Delete rule"
          onConfirm={() => remove.mutate()}
          pending={remove.isPending}
        />
      </div>
      <ErrorNotice error={change.error ?? remove.error} />
    </li>
  );
}

function CreateRule({ identity }: { identity: string }) {
  const client = useQueryClient();
  const [owner, setOwner] = useState(identity);
  const [direction, setDirection] = useState<ContactRule['direction']>('both');
  const [action, setAction] = useState<RuleAction>('allow');
  const [peerType, setPeerType] = useState<'identity' | 'organization'>('identity');
  const [peer, setPeer] = useState('');
  const [note, setNote] = useState('');
  const {
    mutation: create,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => {
      const errors: FieldErrors = { identity: validateHandle(owner) };
      if (peerType === 'identity') {
        errors['peer.handle'] = validateHandle(peer.trim());
      } else if (!/^[0-9a-f-]{36}$/i.test(peer.trim())) {
        errors['peer.organization_id'] = 'An organization id (a UUID).';
      }
      return errors;
    },
    mutationFn: () =>
      call<ContactRule>(
        api.POST('/api/v1/contact-rules', {
          body: {
            identity: owner,
            direction,
            action,
            peer:
              peerType === 'identity'
                ? { type: 'identity', handle: peer.trim() }
                : { type: 'organization', organization_id: peer.trim() },
            note: note || undefined,
          },
        }),
      ),
    onSuccess: () => {
      setPeer('');
      setNote('');
      void client.invalidateQueries({ queryKey: ['rules'] });
    },
  });
  const peerField = peerType === 'identity' ? 'peer.handle' : 'peer.organization_id';
  return (
    <section aria-labelledby="new-rule">
      <h2 id="new-rule">New contact rule</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Owner identity"
          value={owner}
          onChange={(e) => setOwner(e.target.value)}
          error={errorOf('identity')}
        />
        <Select
          label="Direction"
          value={direction}
          onChange={(e) => setDirection(e.target.value as ContactRule['direction'])}
        >
          <option value="both">both</option>
          <option value="inbound">inbound (calls to the owner)</option>
          <option value="outbound">outbound (calls by the owner)</option>
        </Select>
        <Select
          label="Action"
          value={action}
          onChange={(e) => setAction(e.target.value as RuleAction)}
          hint={ACTIONS[action].hint}
          error={errorOf('action')}
        >
          {(Object.keys(ACTIONS) as RuleAction[]).map((value) => (
            <option key={value} value={value}>
              {ACTIONS[value].label}
            </option>
          ))}
        </Select>
        <Select
          label="Peer type"
          value={peerType}
          onChange={(e) => setPeerType(e.target.value as 'identity' | 'organization')}
        >
          <option value="identity">an identity</option>
          <option value="organization">an organization</option>
        </Select>
        <Field
          label={peerType === 'identity' ? 'Peer handle' : 'Peer organization id'}
          value={peer}
          onChange={(e) => setPeer(e.target.value)}
          error={errorOf(peerField) ?? errorOf('peer')}
        />
        <Field label="Note" value={note} onChange={(e) => setNote(e.target.value)} error={errorOf('note')} />
        <ErrorNotice error={notice} />
        {create.isSuccess && <SuccessNotice>Rule created.</SuccessNotice>}
        <Submit pending={create.isPending} pendingLabel="Saving…">
          Create rule
        </Submit>
      </form>
    </section>
  );
}

function CheckAdmission() {
  const [requester, setRequester] = useState('');
  const [worker, setWorker] = useState('');
  const {
    mutation: check,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({ requester: validateHandle(requester.trim()), worker: validateHandle(worker.trim()) }),
    mutationFn: () =>
      call<AdmissionCheck>(
        api.POST('/api/v1/admission/check', { body: { requester: requester.trim(), worker: worker.trim() } }),
      ),
  });
  return (
    <section aria-labelledby="check-title">
      <h2 id="check-title">Would A be admitted by B?</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Requester (A)"
          value={requester}
          onChange={(e) => setRequester(e.target.value)}
          error={errorOf('requester')}
        />
        <Field
          label="Worker (B)"
          value={worker}
          onChange={(e) => setWorker(e.target.value)}
          error={errorOf('worker')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={check.isPending} pendingLabel="Checking…">
          Check admission
        </Submit>
      </form>
      {check.data && <CheckResult result={check.data} requester={requester.trim()} worker={worker.trim()} />}
    </section>
  );
}

type Stance = NonNullable<AdmissionCheck['own_stance']['requester']>;

/** What one of your sides says to the pair, in words (its rule, else its filter mode). */
function stanceWords(stance: Stance, rule: ContactRule | undefined, denied: boolean): string {
  switch (stance) {
    case 'blocks':
      return 'blocks it with a block rule';
    case 'permits':
      return rule ? 'permits it with an allow rule' : 'permits it (blacklist filter mode)';
    case 'asks':
      return rule ? 'asks a person to approve (an ask rule)' : 'asks a person to approve (approval filter mode)';
    case 'refuses':
      return `${denied ? 'refuses it too' : 'refuses it'}: whitelist filter mode, and no allow rule for this peer`;
  }
}

function ruleLine(rule: ContactRule): string {
  return `${rule.action} · ${rule.identity} ${rule.direction} ${describePeer(rule)}${rule.note ? ` — ${rule.note}` : ''}`;
}

/**
 * Allowed, denied, or allowed once a person approves (`allowed` is false while a side asks).
 * A denial names the rule that decided it (a block rule of yours), never a rule that did
 * not; when the other organization decided, it says what your own side says too.
 */
function CheckResult({ result, requester, worker }: { result: AdmissionCheck; requester: string; worker: string }) {
  const asks = result.approval_required_by;
  const denied = !result.allowed && asks.length === 0;
  const outcome = result.allowed ? 'Allowed' : asks.length > 0 ? 'Needs approval' : 'Denied';
  const sideOf = (rule: ContactRule) => (rule.identity === requester ? 'requester' : 'worker');
  const decidedBy =
    result.reason === 'blocked_by_requester' ? 'requester' : result.reason === 'blocked_by_worker' ? 'worker' : null;
  const deciding = denied
    ? result.rules.filter((rule) => rule.action === 'block' && sideOf(rule) === decidedBy)
    : result.rules;
  const sides = (['requester', 'worker'] as const).filter((side) => result.own_stance[side]);
  return (
    <div
      role="status"
      className={`notice ${result.allowed ? 'ok' : asks.length > 0 ? '' : 'error'}`}
      aria-label="Admission result"
    >
      <p>
        <strong>{outcome}</strong> — <code>{result.reason}</code>
      </p>
      <p>{REASONS[result.reason] ?? result.reason}</p>
      {asks.length > 0 && <p>A new task waits for the approval of the {asks.join(' and the ')} side.</p>}
      {deciding.length > 0 && (
        <>
          <p>{denied ? 'The rule that decided:' : 'Rules that decided:'}</p>
          <ul>
            {deciding.map((rule) => (
              <li key={rule.id}>{ruleLine(rule)}</li>
            ))}
          </ul>
        </>
      )}
      {result.reason === 'denied_by_peer' && sides.length > 0 && (
        <ul aria-label="Your side">
          {sides.map((side) => (
            <li key={side}>
              Your side ({side} {side === 'requester' ? requester : worker}){' '}
              {stanceWords(
                result.own_stance[side]!,
                result.rules.find((rule) => sideOf(rule) === side),
                true,
              )}
              .
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Decisions({ identity }: { identity: string }) {
  const list = usePaged<Decision>(['decisions', identity], async (cursor) =>
    pageOf(
      await call(
        api.GET('/api/v1/admission/decisions', { params: { query: { identity: identity || undefined, cursor } } }),
      ),
      'decisions',
    ),
  );
  return (
    <section aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decisions log (denials)</h2>
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : list.items.length === 0 ? (
        <EmptyState>No denied calls recorded.</EmptyState>
      ) : (
        <table aria-labelledby="decisions-title">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Requester → worker</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((d) => (
              <tr key={d.id}>
                <td>{when(d.created_at)}</td>
                <td>
                  {d.requester.handle} → {d.worker.handle}
                </td>
                <td title={REASONS[d.reason]}>{d.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </section>
  );
}
