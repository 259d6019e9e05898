import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../empty-state';
import { api, ApiError, call } from '../api';
import { Link } from '../router';
import type { components } from '../../../client';
import type { ApiKey, Identity, Task } from '../types';
import { ErrorNotice, Loading, shortId, when } from '../ui';

type CardPreviewBody = components['schemas']['CardPreview'];

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
 * identity serves none: the page says so instead of linking to a 404, and shows the card
 * enabling it would publish (the card preview, unsigned).
 */
export function CardPreview({ identity }: { identity: Identity }) {
  const [generation, setGeneration] = useState<(typeof GENERATIONS)[number]>('1.0');
  const handle = identity.agent_handle;
  const served = identity.enabled && identity.claimed && identity.status !== 'deleted';
  const card = useQuery({
    queryKey: ['served-card', handle, generation, identity.updated_at],
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
  const preview = useQuery({
    queryKey: ['card-preview', handle, identity.updated_at],
    enabled: !served,
    queryFn: () =>
      call<CardPreviewBody>(api.GET('/api/v1/identities/{handle}/card-preview', { params: { path: { handle } } })),
  });
  const jwks = useQuery({
    queryKey: ['jwks'],
    enabled: served,
    queryFn: async () =>
      ((await (await fetch('/.well-known/jwks.json')).json()) as { keys: { kid?: string }[] }).keys.map((k) => k.kid),
  });
  const kid = card.data?.signature?.kid;
  const generations = (
    <div className="actions" role="group" aria-label="Card generation">
      {GENERATIONS.map((g) => (
        <button key={g} type="button" aria-pressed={generation === g} onClick={() => setGeneration(g)}>
          A2A {g}
        </button>
      ))}
    </div>
  );
  return (
    <section aria-labelledby="served-title">
      <h2 id="served-title">The card it serves</h2>
      {!served ? (
        <>
          <p className="notice">
            No card is served while the identity is {identity.claimed ? 'disabled' : 'unclaimed'}: callers get 404.
            Enable it in Settings to publish its card at <code>{identity.card_url}</code>.
          </p>
          <h3>The card it would serve</h3>
          {generations}
          {preview.isPending ? (
            <Loading />
          ) : preview.error ? (
            <ErrorNotice error={preview.error} />
          ) : (
            <>
              <p role="status" aria-label="Signature">
                <span className="badge ask">preview</span> Not served, so not signed: the service signs its card when it
                serves it.
              </p>
              <pre className="part card-json" aria-label={`Card preview, A2A ${generation}`} tabIndex={0}>
                {JSON.stringify(preview.data.cards[generation], null, 2)}
              </pre>
            </>
          )}
        </>
      ) : (
        <>
          <p className="muted">
            At <a href={identity.card_url}>{identity.card_url}</a>, chosen by the caller's <code>A2A-Version</code>.
          </p>
          {generations}
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
