import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../empty-state';
import { api, ApiError, call } from '../api';
import { useFormMutation } from '../form-mutation';
import { Link } from '../router';
import type { components } from '../../../client';
import type { ApiKey, Identity, Task } from '../types';
import { ConfirmButton, ErrorNotice, Field, Loading, Select, shortId, Submit, SuccessNotice, when } from '../ui';

type Upstream = components['schemas']['Upstream'];
type AuthType = components['schemas']['UpstreamAuthDto']['type'];

const GENERATIONS = ['1.0', '0.3'] as const;

interface ServedCard {
  body: Record<string, unknown>;
  /** The JWS protected header of its first signature, when signed. */
  signature: { alg?: string; kid?: string } | null;
}

/** The protected header of a flattened JWS (base64url JSON). */
function protectedHeader(jws: unknown): { alg?: string; kid?: string } | null {
  const encoded = (jws as { protected?: string } | undefined)?.protected;
  if (!encoded) {
    return null;
  }
  try {
    return JSON.parse(atob(encoded.replace(/-/g, '+').replace(/_/g, '/'))) as { alg?: string; kid?: string };
  } catch {
    return null;
  }
}

/**
 * The card the identity serves, as a caller reads it (docs/api.md §4), in each A2A
 * generation, with its signature's key checked against the service's JWKS. A disabled
 * identity serves none: the page says so instead of linking to a 404.
 */
export function CardPreview({ identity }: { identity: Identity }) {
  const [generation, setGeneration] = useState<(typeof GENERATIONS)[number]>('1.0');
  const served = identity.enabled && identity.claimed && identity.status !== 'deleted';
  const card = useQuery({
    queryKey: ['served-card', identity.agent_handle, generation, identity.updated_at],
    enabled: served,
    queryFn: async (): Promise<ServedCard> => {
      const res = await fetch(identity.card_url, { headers: { 'A2A-Version': generation }, cache: 'no-cache' });
      if (!res.ok) {
        throw new ApiError({ status: res.status, detail: 'The card could not be read.' });
      }
      const body = (await res.json()) as Record<string, unknown>;
      const signatures = body.signatures as unknown[] | undefined;
      return { body, signature: signatures?.length ? protectedHeader(signatures[0]) : null };
    },
  });
  const jwks = useQuery({
    queryKey: ['jwks'],
    enabled: served,
    queryFn: async () =>
      ((await (await fetch('/.well-known/jwks.json')).json()) as { keys: { kid?: string }[] }).keys.map((k) => k.kid),
  });
  const kid = card.data?.signature?.kid;
  return (
    <section aria-labelledby="served-title">
      <h2 id="served-title">The card it serves</h2>
      {!served ? (
        <p className="notice">
          No card is served while the identity is {identity.claimed ? 'disabled' : 'unclaimed'}: callers get 404. Enable
          it in Settings to publish its card at <code>{identity.card_url}</code>.
        </p>
      ) : (
        <>
          <p className="muted">
            At <a href={identity.card_url}>{identity.card_url}</a>, chosen by the caller's <code>A2A-Version</code>.
          </p>
          <div className="actions" role="group" aria-label="Card generation">
            {GENERATIONS.map((g) => (
              <button key={g} type="button" aria-pressed={generation === g} onClick={() => setGeneration(g)}>
                A2A {g}
              </button>
            ))}
          </div>
          {card.isPending ? (
            <Loading />
          ) : card.error ? (
            <ErrorNotice error={card.error} />
          ) : (
            <>
              <p role="status" aria-label="Signature">
                {card.data.signature ? (
                  <>
                    <span className="badge active">signed</span> {card.data.signature.alg} · key{' '}
                    <code>{kid?.slice(0, 12)}…</code>{' '}
                    {jwks.data?.includes(kid)
                      ? '(listed in the service’s JWKS)'
                      : jwks.data
                        ? '(not in the JWKS!)'
                        : ''}
                  </>
                ) : (
                  <span className="badge failed">unsigned</span>
                )}
              </p>
              <pre className="part card-json" aria-label={`Card, A2A ${generation}`} tabIndex={0}>
                {JSON.stringify({ ...card.data.body, signatures: undefined }, null, 2)}
              </pre>
            </>
          )}
        </>
      )}
    </section>
  );
}

/** The identity's last few tasks and its keys, with links to the full lists. */
export function RecentWork({ identity }: { identity: Identity }) {
  const tasks = useQuery({
    queryKey: ['tasks', 'recent', identity.agent_handle],
    queryFn: async () =>
      (await call(api.GET('/api/v1/tasks', { params: { query: { identity: identity.agent_handle, limit: 5 } } })))
        .tasks as Task[],
  });
  const keys = useQuery({
    queryKey: ['keys', 'recent', identity.id],
    queryFn: async () =>
      (await call(api.GET('/api/v1/api-keys', { params: { query: { identity: identity.id, limit: 5 } } })))
        .api_keys as ApiKey[],
  });
  return (
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">Recent tasks and keys</h2>
      <h3>Tasks</h3>
      {tasks.isPending ? (
        <Loading />
      ) : tasks.error ? (
        <ErrorNotice error={tasks.error} />
      ) : tasks.data.length === 0 ? (
        <EmptyState>No tasks yet.</EmptyState>
      ) : (
        <ul aria-label="Recent tasks">
          {tasks.data.map((task) => (
            <li key={task.id}>
              <Link to={`/tasks/${task.id}`} className="mono">
                {shortId(task.id)}
              </Link>{' '}
              {task.requester.agent_handle} → {task.worker.agent_handle} ·{' '}
              <span className="muted">{when(task.updated_at)}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link to={`/tasks?identity=${identity.agent_handle}`}>All its tasks</Link>
      </p>
      <h3>Keys</h3>
      {keys.isPending ? (
        <Loading />
      ) : keys.error ? (
        <ErrorNotice error={keys.error} />
      ) : keys.data.length === 0 ? (
        <EmptyState>No active keys.</EmptyState>
      ) : (
        <ul aria-label="Its keys">
          {keys.data.map((key) => (
            <li key={key.id}>
              {key.label || '(no label)'} <code>{key.prefix}…</code>{' '}
              <span className={`badge ${key.status}`}>{key.status}</span>{' '}
              <span className="muted">last used {when(key.last_used_at)}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link to={`/keys?identity=${identity.id}`}>All its keys</Link>
      </p>
    </section>
  );
}

/**
 * The identity's upstream agent (docs/api.md §14): the agent every task sent to it is
 * forwarded to. Set (the service reads the upstream's card then, so a wrong address is
 * refused at once), import its card, remove.
 */
export function UpstreamPanel({ identity }: { identity: Identity }) {
  const client = useQueryClient();
  const handle = identity.agent_handle;
  const upstream = useQuery({
    queryKey: ['upstream', handle],
    queryFn: async (): Promise<Upstream | null> => {
      try {
        return await call<Upstream>(api.GET('/api/v1/identities/{handle}/upstream', { params: { path: { handle } } }));
      } catch (error) {
        if (error instanceof ApiError && error.problem.code === 'upstream_not_set') {
          return null;
        }
        throw error;
      }
    },
  });
  const importCard = useMutation({
    mutationFn: () =>
      call<Identity>(api.POST('/api/v1/identities/{handle}/upstream/import-card', { params: { path: { handle } } })),
    onSuccess: (updated) => {
      client.setQueryData(['identity', handle], updated);
      void client.invalidateQueries({ queryKey: ['served-card', handle] });
      setDone("Its description and skills were copied from the upstream's card.");
    },
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/identities/{handle}/upstream', { params: { path: { handle } } })),
    onSuccess: () => {
      client.setQueryData(['upstream', handle], null);
      setDone('Upstream removed: new tasks wait in the ledger again.');
    },
  });
  // What the last change did, said above whichever form is shown now.
  const [done, setDone] = useState<string | null>(null);
  const saved = () => setDone('Upstream saved: its card was read and new tasks go to it.');
  return (
    <section aria-labelledby="upstream-title">
      <h2 id="upstream-title">Upstream agent</h2>
      {done && <SuccessNotice>{done}</SuccessNotice>}
      {upstream.isPending ? (
        <Loading />
      ) : upstream.error ? (
        <ErrorNotice error={upstream.error} />
      ) : upstream.data === null ? (
        <>
          <p className="muted">
            None: tasks sent to {handle} wait in the ledger for its worker. Name an existing A2A agent to forward every
            task to it.
          </p>
          <SetUpstream handle={handle} current={null} onSaved={saved} />
        </>
      ) : (
        <>
          <dl aria-label="Its upstream">
            <dt>Endpoint</dt>
            <dd>
              <code>{upstream.data.url}</code>
            </dd>
            <dt>Speaks</dt>
            <dd>
              {upstream.data.binding} · A2A {upstream.data.protocol_version}
              {upstream.data.streaming ? ' · streams' : ''}
            </dd>
            <dt>Credential</dt>
            <dd>
              {upstream.data.auth.type === 'none'
                ? 'none'
                : `${upstream.data.auth.type}${upstream.data.auth.header ? ` (${upstream.data.auth.header})` : ''}${upstream.data.auth.value_set ? ', set' : ''}`}
            </dd>
          </dl>
          <div className="actions">
            <button
              type="button"
              onClick={() => importCard.mutate()}
              disabled={importCard.isPending}
              aria-busy={importCard.isPending}
            >
              {importCard.isPending ? 'Importing…' : 'Import its card'}
            </button>
            <ConfirmButton
              label="Remove upstream"
              title={`Remove the upstream of ${handle}?`}
              body={<p>New tasks wait in the ledger again; tasks already forwarded stay there.</p>}
              confirmLabel="Remove upstream"
              onConfirm={() => remove.mutate()}
              pending={remove.isPending}
            />
          </div>
          <ErrorNotice error={importCard.error ?? remove.error} />
          <details>
            <summary>Change the upstream</summary>
            <SetUpstream handle={handle} current={upstream.data} onSaved={saved} />
          </details>
        </>
      )}
    </section>
  );
}

function SetUpstream({ handle, current, onSaved }: { handle: string; current: Upstream | null; onSaved: () => void }) {
  const client = useQueryClient();
  const [url, setUrl] = useState(current?.url ?? '');
  const [cardUrl, setCardUrl] = useState(current?.card_url ?? '');
  const [authType, setAuthType] = useState<AuthType>(current?.auth.type ?? 'none');
  const [header, setHeader] = useState(current?.auth.header ?? 'X-API-Key');
  const [value, setValue] = useState('');
  const {
    mutation: save,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      url: /^https?:\/\/\S+$/.test(url.trim())
        ? undefined
        : 'The agent’s A2A endpoint, such as https://agent.example.com/a2a.',
      'auth.value': authType !== 'none' && !value ? 'The credential the upstream expects.' : undefined,
    }),
    mutationFn: () =>
      call<Upstream>(
        api.PUT('/api/v1/identities/{handle}/upstream', {
          params: { path: { handle } },
          body: {
            url: url.trim(),
            card_url: cardUrl.trim() || undefined,
            auth:
              authType === 'none'
                ? { type: 'none' }
                : authType === 'bearer'
                  ? { type: 'bearer', value }
                  : { type: 'api_key', header: header.trim(), value },
          },
        }),
      ),
    onSuccess: (saved) => {
      setValue('');
      client.setQueryData(['upstream', handle], saved);
      onSaved();
    },
  });
  return (
    <form onSubmit={submit} noValidate aria-label="Set the upstream">
      <Field
        label="Upstream endpoint URL"
        type="url"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        error={errorOf('url')}
      />
      <Field
        label="Its card URL (optional)"
        type="url"
        value={cardUrl}
        onChange={(e) => setCardUrl(e.target.value)}
        hint="Default: the well-known card under the endpoint."
        error={errorOf('card_url')}
      />
      <Select label="Credential it expects" value={authType} onChange={(e) => setAuthType(e.target.value as AuthType)}>
        <option value="none">none</option>
        <option value="bearer">bearer token</option>
        <option value="api_key">API key in a header</option>
      </Select>
      {authType === 'api_key' && (
        <Field
          label="Header"
          value={header}
          onChange={(e) => setHeader(e.target.value)}
          error={errorOf('auth.header')}
        />
      )}
      {authType !== 'none' && (
        <Field
          label="Credential"
          type="password"
          autoComplete="off"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          hint="Write-only: stored to call the upstream, never shown again."
          error={errorOf('auth.value')}
        />
      )}
      <ErrorNotice error={notice} />
      <Submit pending={save.isPending} pendingLabel="Reading its card…">
        Save upstream
      </Submit>
    </form>
  );
}
