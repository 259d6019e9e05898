import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../api';
import { EmptyState, StartAt, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import type { components } from '../../../client';
import { pageOf, usePaged } from '../paging';
import { Link, navigate } from '../router';
import type { Delivery, Webhook, WebhookWithSecret } from '../types';
import {
  Check,
  ConfirmButton,
  ErrorNotice,
  Field,
  Loading,
  LoadMore,
  SecretOnce,
  Submit,
  SuccessNotice,
  usePageTitle,
  when,
} from '../ui';

type EventName = components['schemas']['CreateWebhookDto']['events'][number];
/** Every event a webhook may name beside `*` (the compiler refuses one of the API missing here). */
const EVENTS = Object.keys({
  'task.created': true,
  'task.message': true,
  'task.status': true,
  'task.artifact': true,
  'api_key.created': true,
  'api_key.revoked': true,
  'api_key.expiring': true,
  'identity.claimed': true,
  'identity.updated': true,
  'contact_rule.created': true,
  'contact_rule.updated': true,
  'contact_rule.deleted': true,
  'console.member_added': true,
  'console.member_removed': true,
  'approval.requested': true,
  'approval.decided': true,
  'usage.threshold': true,
  ping: true,
} satisfies Record<Exclude<EventName, '*'>, true>) as EventName[];

export function WebhooksPage() {
  usePageTitle('Webhooks');
  const list = usePaged<Webhook>(['webhooks'], async (cursor) =>
    pageOf(await call(api.GET('/api/v1/webhooks', { params: { query: { cursor } } })), 'webhooks'),
  );
  return (
    <>
      <h1>Webhooks</h1>
      <div className="columns">
        <section aria-labelledby="hooks-title">
          <h2 id="hooks-title">Endpoints</h2>
          {list.isPending ? (
            <Loading />
          ) : list.error ? (
            <ErrorNotice error={list.error} />
          ) : list.items.length === 0 ? (
            <EmptyState
              title="No webhooks yet."
              actions={
                <>
                  <StartWith form="new-hook">Create your first webhook</StartWith>
                  <StartAt to="/events">Watch the live events</StartAt>
                </>
              }
            >
              A webhook is an HTTPS endpoint of yours that the service calls, signed, when something happens: a task
              created or answered, a key revoked, a contact rule changed. No public URL? Follow the same events as a
              stream.
            </EmptyState>
          ) : (
            <ul className="cards">
              {list.items.map((hook) => (
                <li key={hook.id}>
                  <Link to={`/webhooks/${hook.id}`}>{hook.url}</Link> <HookBadge hook={hook} />
                  {hook.description && <div>{hook.description}</div>}
                  <div className="muted">
                    {hook.identity ? `for ${hook.identity}` : 'organization-wide'} · {hook.events.join(', ')}
                  </div>
                </li>
              ))}
            </ul>
          )}
          <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
        </section>
        <CreateWebhook />
      </div>
    </>
  );
}

/** Active, disabled, or failing: active but its recent deliveries fail (`failing_since`). */
function HookBadge({ hook }: { hook: Webhook }) {
  const failing = hook.status === 'active' && hook.failing_since !== null;
  const state = failing ? 'failing' : hook.status;
  return (
    <span className={`badge ${state}`} title={failing ? `failing since ${when(hook.failing_since)}` : undefined}>
      {state}
    </span>
  );
}

/** A JSON text indented for reading (as it is when it is not JSON). */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function validUrl(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'An https URL.';
  } catch {
    return 'An https URL, such as https://example.com/hooks/a2a.';
  }
}

/** A webhook's fields as the forms send them (`events: ['*']` for every event). */
interface HookFields {
  url: string;
  events: (EventName | '*')[];
  description: string;
  identity: string;
}

/**
 * The webhook form creating and editing share: URL, description, events (and, when
 * creating, the identity it is only for), checked in the browser before `send`.
 */
function WebhookForm<T>({
  title,
  titleId,
  hook,
  withIdentity = false,
  send,
  onSent,
  submitLabel,
  pendingLabel,
  onCancel,
}: {
  title: string;
  titleId: string;
  hook?: Webhook;
  withIdentity?: boolean;
  send: (fields: HookFields) => Promise<T>;
  onSent: (result: T) => void;
  submitLabel: string;
  pendingLabel: string;
  onCancel?: () => void;
}) {
  const [url, setUrl] = useState(hook?.url ?? '');
  const [identity, setIdentity] = useState('');
  const [description, setDescription] = useState(hook?.description ?? '');
  const [all, setAll] = useState(hook ? hook.events.includes('*') : true);
  const [events, setEvents] = useState<EventName[]>(
    (hook?.events.filter((e) => e !== '*') as EventName[] | undefined) ?? [],
  );
  const { mutation, submit, errorOf, notice } = useFormMutation({
    validate: () => ({
      url: validUrl(url.trim()),
      events: !all && events.length === 0 ? 'Choose at least one event type, or every event.' : undefined,
    }),
    mutationFn: () => send({ url: url.trim(), events: all ? ['*'] : events, description, identity: identity.trim() }),
    onSuccess: onSent,
  });
  const button = (
    <Submit pending={mutation.isPending} pendingLabel={pendingLabel}>
      {submitLabel}
    </Submit>
  );
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Endpoint URL"
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={errorOf('url')}
        />
        {withIdentity && (
          <Field
            label="Only for identity (optional)"
            value={identity}
            onChange={(e) => setIdentity(e.target.value)}
            error={errorOf('identity')}
          />
        )}
        <Field
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={errorOf('description')}
        />
        <fieldset>
          <legend>Events</legend>
          <Check label="Every event" checked={all} onChange={(e) => setAll(e.target.checked)} />
          {!all &&
            EVENTS.map((name) => (
              <Check
                key={name}
                label={name}
                checked={events.includes(name)}
                onChange={(e) => setEvents(e.target.checked ? [...events, name] : events.filter((x) => x !== name))}
              />
            ))}
          {errorOf('events') && <small className="field-error">{errorOf('events')}</small>}
        </fieldset>
        <ErrorNotice error={notice} />
        {onCancel ? (
          <div className="actions">
            {button}
            <button type="button" onClick={onCancel}>
              Cancel
            </button>
          </div>
        ) : (
          button
        )}
      </form>
    </section>
  );
}

function CreateWebhook() {
  const client = useQueryClient();
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  if (created?.secret) {
    return (
      <SecretOnce
        label="The webhook's signing secret"
        kept="signing"
        value={created.secret}
        onDone={() => {
          setCreated(null);
          navigate(`/webhooks/${created.id}`);
        }}
      />
    );
  }
  return (
    <WebhookForm
      // A new form (its fields empty) after each webhook created.
      key={created?.id}
      title="New webhook"
      titleId="new-hook"
      withIdentity
      send={({ url, events, description, identity }) =>
        call<WebhookWithSecret>(
          api.POST('/api/v1/webhooks', {
            body: { url, events, identity: identity || undefined, description: description || undefined },
          }),
        )
      }
      onSent={(hook) => {
        void client.invalidateQueries({ queryKey: ['webhooks'] });
        setCreated(hook);
      }}
      submitLabel="Create webhook"
      pendingLabel="Creating…"
    />
  );
}

/** The webhook's URL, events and description, changed in place (PATCH, docs/api.md §8). */
function EditWebhook({ hook, onSaved }: { hook: Webhook; onSaved: () => void }) {
  const [open, setOpen] = useState(false);
  const [saved, setSaved] = useState(false);
  if (!open) {
    return (
      <div className="actions">
        <button type="button" onClick={() => setOpen(true)}>
          Edit webhook
        </button>
        {saved && <SuccessNotice>Webhook saved.</SuccessNotice>}
      </div>
    );
  }
  return (
    <WebhookForm
      title="Edit webhook"
      titleId="edit-hook"
      hook={hook}
      send={({ url, events, description }) =>
        call<Webhook>(
          api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url, events, description } }),
        )
      }
      onSent={() => {
        setOpen(false);
        setSaved(true);
        onSaved();
      }}
      submitLabel="Save webhook"
      pendingLabel="Saving…"
      onCancel={() => setOpen(false)}
    />
  );
}

export function WebhookPage({ id }: { id: string }) {
  usePageTitle('Webhook');
  const client = useQueryClient();
  const hook = useQuery({
    queryKey: ['webhook', id],
    queryFn: () => call<Webhook>(api.GET('/api/v1/webhooks/{id}', { params: { path: { id } } })),
    // Read again as its deliveries are, so the badge turns "failing" (and back) while someone watches.
    refetchInterval: 3000,
  });
  const [secret, setSecret] = useState<string | null>(null);
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['webhook', id] });
    void client.invalidateQueries({ queryKey: ['webhooks'] });
    void client.invalidateQueries({ queryKey: ['deliveries', id] });
  };
  const test = useMutation({
    mutationFn: () => call(api.POST('/api/v1/webhooks/{id}/test', { params: { path: { id } } })),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () =>
      call<WebhookWithSecret>(api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } } })),
    onSuccess: (rotated) => {
      setSecret(rotated.secret ?? null);
      refresh();
    },
  });
  const toggle = useMutation({
    mutationFn: (status: 'active' | 'disabled') =>
      call<Webhook>(api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id } }, body: { status } })),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['webhooks'] });
      navigate('/webhooks');
    },
  });
  if (hook.isPending) {
    return <Loading />;
  }
  if (hook.error) {
    return <ErrorNotice error={hook.error} />;
  }
  const data = hook.data;
  return (
    <>
      <p>
        <Link to="/webhooks">← Webhooks</Link>
      </p>
      <h1>Webhook</h1>
      <p>
        <code>{data.url}</code> <HookBadge hook={data} />
      </p>
      {data.description && <p>{data.description}</p>}
      <p className="muted">
        {data.identity ? `For ${data.identity}` : 'Organization-wide'} · events: {data.events.join(', ')}
        {data.failing_since ? ` · failing since ${when(data.failing_since)}` : ''}
        {data.previous_secret_expires_at
          ? ` · the previous secret signs until ${when(data.previous_secret_expires_at)}`
          : ''}
      </p>
      {secret && (
        <SecretOnce label="The new signing secret" kept="signing" value={secret} onDone={() => setSecret(null)} />
      )}
      <div className="actions">
        <button type="button" onClick={() => test.mutate()} disabled={test.isPending} aria-busy={test.isPending}>
          {test.isPending ? 'Sending…' : 'Send a test event'}
        </button>
        <button
          type="button"
          onClick={() => toggle.mutate(data.status === 'active' ? 'disabled' : 'active')}
          disabled={toggle.isPending}
        >
          {data.status === 'active' ? 'Disable' : 'Enable'}
        </button>
        <ConfirmButton
          label="Rotate secret"
          className=""
          title="Rotate the signing secret?"
          body={
            <p>A new secret is shown once. The old one keeps signing for 24 hours, so receivers can switch over.</p>
          }
          confirmLabel="Rotate secret"
          onConfirm={() => rotate.mutate()}
          pending={rotate.isPending}
        />
        <ConfirmButton
          label="Delete webhook"
          title="Delete this webhook?"
          body={<p>No more events are sent to {data.url}.</p>}
          confirmLabel="Delete webhook"
          onConfirm={() => remove.mutate()}
          pending={remove.isPending}
        />
      </div>
      <ErrorNotice error={test.error ?? rotate.error ?? toggle.error ?? remove.error} />
      <EditWebhook hook={data} onSaved={refresh} />
      {test.isSuccess && <SuccessNotice>Test event queued.</SuccessNotice>}
      <Deliveries id={id} />
    </>
  );
}

function Deliveries({ id }: { id: string }) {
  const client = useQueryClient();
  const list = usePaged<Delivery>(
    ['deliveries', id],
    async (cursor) =>
      pageOf(
        await call(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { cursor } } })),
        'deliveries',
      ),
    3000,
  );
  const retry = useMutation({
    mutationFn: (deliveryId: string) =>
      call(
        api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', {
          params: { path: { id, delivery_id: deliveryId } },
        }),
      ),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['deliveries', id] }),
  });
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <ErrorNotice error={retry.error} />
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : list.items.length === 0 ? (
        <EmptyState>No deliveries yet.</EmptyState>
      ) : (
        <ul className="cards" aria-label="Deliveries">
          {list.items.map((d) => (
            <li key={d.id}>
              <div className="row">
                <strong>{d.event_type}</strong> <span className={`badge ${d.status}`}>{d.status}</span>{' '}
                <span className="muted">{when(d.created_at)}</span>
              </div>
              <div className="muted">
                {d.attempt_count} attempt{d.attempt_count === 1 ? '' : 's'}
                {d.next_attempt_at ? ` · next ${when(d.next_attempt_at)}` : ''}
                {d.last_error ? ` · ${d.last_error}` : ''}
              </div>
              <details>
                <summary>Request and responses</summary>
                <h3>Request body</h3>
                {d.request_body === null ? (
                  <p className="muted">Its event is over 8 KiB: read it in the event log.</p>
                ) : (
                  <pre className="part" aria-label={`Request body of ${d.event_type}`} tabIndex={0}>
                    {prettyJson(d.request_body)}
                  </pre>
                )}
                {d.attempts.length > 0 && (
                  <ol aria-label={`Attempts of ${d.event_type}`}>
                    {d.attempts.map((a) => (
                      <li key={a.attempt}>
                        #{a.attempt} {a.succeeded ? 'succeeded' : 'failed'} · {a.status_code ?? 'no response'} ·{' '}
                        {a.duration_ms ?? '—'} ms · {when(a.created_at)}
                        {a.error ? ` · ${a.error}` : ''}
                        {a.response && (
                          <pre className="part" aria-label={`Response to attempt ${a.attempt}`} tabIndex={0}>
                            {Object.entries(a.response.headers)
                              .map(([name, value]) => `${name}: ${value}`)
                              .join('\n')}
                            {'\n\n'}
                            {a.response.body || '(empty body)'}
                          </pre>
                        )}
                      </li>
                    ))}
                  </ol>
                )}
              </details>
              {/* Any delivery, a pending one too (its next scheduled attempt may be hours away). */}
              <button type="button" onClick={() => retry.mutate(d.id)} disabled={retry.isPending}>
                Retry now
              </button>
            </li>
          ))}
        </ul>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </section>
  );
}
