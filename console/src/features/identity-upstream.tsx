import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { api, ApiError, call } from '../api';
import { useFormMutation } from '../form-mutation';
import { PROBLEM_WORDS } from '../problem-words';
import type { components } from '../../../client';
import type { Identity, OrganizationSettings } from '../types';
import { ConfirmButton, ErrorNotice, Field, Loading, Select, Submit, SuccessNotice, TextArea, when } from '../ui';

type Upstream = components['schemas']['Upstream'];
type UpstreamTest = components['schemas']['UpstreamTest'];
type CardVerification = components['schemas']['UpstreamCardVerification'];
type AuthType = components['schemas']['UpstreamAuthDto']['type'];

/**
 * The last verification of an upstream's card against its pinned keys (docs/api.md §14,
 * "Verified upstream cards"): a badge, the key that verified it, or why it failed.
 */
function VerificationState({ verification }: { verification: CardVerification | null }) {
  if (!verification) {
    return <span className="muted">Not checked yet: it is checked whenever its card is read.</span>;
  }
  if (verification.status === 'verified') {
    return (
      <>
        <span className="badge active">verified</span> by key <code>{verification.kid}</code>
      </>
    );
  }
  if (verification.status === 'unsigned') {
    return (
      <>
        <span className="badge ask">unsigned</span> its card carries no signature.
      </>
    );
  }
  return (
    <>
      <span className="badge failed">failed</span> {verification.error}
    </>
  );
}

/** What a test found (docs/api.md §14, "Testing an upstream"): nothing of it was saved. */
function TestResult({ result }: { result: UpstreamTest }) {
  const titleId = useId();
  const card = result.card;
  const refusal = result.problem ? (PROBLEM_WORDS[result.problem.code]?.words ?? result.problem.detail) : null;
  return (
    <section aria-labelledby={titleId} className="test-result">
      <h3 id={titleId}>Test result</h3>
      <p role="status">
        {result.reachable ? (
          <>
            <span className="badge active">reachable</span> Its card was read at <code>{result.card_url}</code>.
          </>
        ) : (
          <>
            <span className="badge failed">unreachable</span> Its card could not be read: {result.reason}.
          </>
        )}
      </p>
      <dl aria-label="What the test found">
        {card && (
          <>
            <dt>Card</dt>
            <dd>
              {card.name || '(no name)'} · {card.skills} {card.skills === 1 ? 'skill' : 'skills'}
              {card.streaming ? ' · streams' : ''}
            </dd>
            <dt>Interfaces</dt>
            <dd>
              {card.interfaces.length === 0 ? (
                'none'
              ) : (
                <ul aria-label="Its interfaces">
                  {card.interfaces.map((i, n) => (
                    <li key={n}>
                      {i.binding} · A2A {i.protocol_version ?? '1.0'} · <code>{i.url}</code>
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>Card signature</dt>
            <dd>
              <VerificationState verification={result.card_verification} />
            </dd>
          </>
        )}
        <dt>Saving</dt>
        <dd>
          {result.forward_to ? (
            <>
              would forward to <code>{result.forward_to.url}</code> over {result.forward_to.binding} · A2A{' '}
              {result.forward_to.protocol_version}
            </>
          ) : (
            <>would be refused: {refusal}</>
          )}
        </dd>
      </dl>
      <p className="muted">Nothing was saved{result.tested === 'saved' ? ': this is the saved upstream' : ''}.</p>
    </section>
  );
}

/**
 * The identity's upstream agent (docs/api.md §14): the agent every task sent to it is
 * forwarded to. Set (the service reads the upstream's card then, so a wrong address is
 * refused at once), test before or after saving, import its card, remove.
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
  const settings = useQuery({
    queryKey: ['organization-settings'],
    queryFn: () => call<OrganizationSettings>(api.GET('/api/v1/organization/settings')),
  });
  const importCard = useMutation({
    mutationFn: () =>
      call<Identity>(api.POST('/api/v1/identities/{handle}/upstream/import-card', { params: { path: { handle } } })),
    onSuccess: (updated) => {
      client.setQueryData(['identity', handle], updated);
      // Importing reads the card again, and verifies it again.
      void client.invalidateQueries({ queryKey: ['upstream', handle] });
      void client.invalidateQueries({ queryKey: ['served-card', handle] });
      setDone("Its description and skills were copied from the upstream's card.");
    },
  });
  const test = useMutation({
    mutationFn: () =>
      call<UpstreamTest>(
        api.POST('/api/v1/identities/{handle}/upstream/test', { params: { path: { handle } }, body: {} }),
      ),
  });
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/identities/{handle}/upstream', { params: { path: { handle } } })),
    onSuccess: () => {
      client.setQueryData(['upstream', handle], null);
      test.reset();
      setDone('Upstream removed: new tasks wait in the ledger again.');
    },
  });
  // What the last change did, said above whichever form is shown now.
  const [done, setDone] = useState<string | null>(null);
  const saved = () => setDone('Upstream saved: its card was read and new tasks go to it.');
  const data = upstream.data;
  const held = settings.data?.require_verified_upstream_cards && data?.card_verification?.status !== 'verified';
  const pinned = pinnedKeys(data?.trusted_keys);
  return (
    <section aria-labelledby="upstream-title">
      <h2 id="upstream-title">Upstream agent</h2>
      {done && <SuccessNotice>{done}</SuccessNotice>}
      {upstream.isPending ? (
        <Loading />
      ) : upstream.error ? (
        <ErrorNotice error={upstream.error} />
      ) : !data ? (
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
              <code>{data.url}</code>
            </dd>
            <dt>Speaks</dt>
            <dd>
              {data.binding} · A2A {data.protocol_version}
              {data.streaming ? ' · streams' : ''}
            </dd>
            <dt>Credential</dt>
            <dd>
              {data.auth.type === 'none'
                ? 'none'
                : `${data.auth.type}${data.auth.header ? ` (${data.auth.header})` : ''}${data.auth.value_set ? ', set' : ''}`}
            </dd>
            <dt>Pinned keys</dt>
            <dd>
              {pinned ? (
                <>
                  {pinned.length} {pinned.length === 1 ? 'key' : 'keys'}
                  {keyIds(pinned).length > 0 && <> ({keyIds(pinned).join(', ')})</>}
                </>
              ) : data.trusted_jwks_uri ? (
                <>
                  read from <code>{data.trusted_jwks_uri}</code>
                </>
              ) : (
                'none'
              )}
            </dd>
            <dt>Card signature</dt>
            <dd>
              <VerificationState verification={data.card_verification} />
              {data.card_verification && (
                <span className="muted"> · checked {when(data.card_verification.checked_at)}</span>
              )}
            </dd>
          </dl>
          {held && (
            <p className="notice">
              Your organization forwards only to upstreams whose card verified against their pinned keys: tasks sent to{' '}
              {handle} fail until its card verifies.
            </p>
          )}
          <div className="actions">
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending} aria-busy={test.isPending}>
              {test.isPending ? 'Testing…' : 'Test it'}
            </button>
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
          <ErrorNotice error={importCard.error ?? test.error ?? remove.error} />
          {test.data && <TestResult result={test.data} />}
          <details>
            <summary>Change the upstream</summary>
            <SetUpstream handle={handle} current={data} onSaved={saved} />
          </details>
        </>
      )}
    </section>
  );
}

/** The keys of a pinned JWK Set. */
function pinnedKeys(set: Record<string, unknown> | null | undefined): unknown[] | null {
  return set && Array.isArray(set.keys) ? set.keys : null;
}

/** The key ids of pinned keys (a key without one is known by its thumbprint, which the service computes). */
function keyIds(keys: unknown[]): string[] {
  return keys.map((key) => (key as { kid?: unknown }).kid).filter((kid): kid is string => typeof kid === 'string');
}

/** A JWK Set as typed in the form: undefined when empty, null when it is not a JWK Set. */
function parseKeySet(text: string): { keys: object[] } | null | undefined {
  if (!text.trim()) {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as { keys?: unknown };
    return value && typeof value === 'object' && Array.isArray(value.keys) ? (value as { keys: object[] }) : null;
  } catch {
    return null;
  }
}

function SetUpstream({ handle, current, onSaved }: { handle: string; current: Upstream | null; onSaved: () => void }) {
  const client = useQueryClient();
  const [url, setUrl] = useState(current?.url ?? '');
  const [cardUrl, setCardUrl] = useState(current?.card_url ?? '');
  const [authType, setAuthType] = useState<AuthType>(current?.auth.type ?? 'none');
  const [header, setHeader] = useState(current?.auth.header ?? 'X-API-Key');
  const [value, setValue] = useState('');
  // The pinned keys as saved: a PUT replaces them, so the form starts from what is pinned.
  const [keys, setKeys] = useState(current?.trusted_keys ? JSON.stringify(current.trusted_keys, null, 2) : '');
  const [jwksUri, setJwksUri] = useState(current?.trusted_jwks_uri ?? '');
  // Whether the last submit saved or tested: its errors are the ones shown.
  const [intent, setIntent] = useState<'save' | 'test'>('save');

  const checks = () => ({
    url: /^https?:\/\/\S+$/.test(url.trim())
      ? undefined
      : 'The agent’s A2A endpoint, such as https://agent.example.com/a2a.',
    trusted_keys: parseKeySet(keys) === null ? 'A JWK Set of public keys: {"keys": [ … ]}.' : undefined,
    trusted_jwks_uri: keys.trim() && jwksUri.trim() ? 'Pin keys or the URL of a key set, not both.' : undefined,
  });
  // What saving and testing send alike; the test reads the card, which is read without the credential.
  const target = () => ({
    url: url.trim(),
    card_url: cardUrl.trim() || undefined,
    trusted_keys: parseKeySet(keys) ?? undefined,
    trusted_jwks_uri: jwksUri.trim() || undefined,
  });
  const saver = useFormMutation({
    validate: () => ({
      ...checks(),
      'auth.value': authType !== 'none' && !value ? 'The credential the upstream expects.' : undefined,
    }),
    mutationFn: () =>
      call<Upstream>(
        api.PUT('/api/v1/identities/{handle}/upstream', {
          params: { path: { handle } },
          body: {
            ...target(),
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
  const tester = useFormMutation({
    validate: checks,
    mutationFn: () =>
      call<UpstreamTest>(
        api.POST('/api/v1/identities/{handle}/upstream/test', { params: { path: { handle } }, body: target() }),
      ),
  });
  const active = intent === 'test' ? tester : saver;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    const submitter = (event.nativeEvent as SubmitEvent).submitter;
    const next = submitter?.getAttribute('value') === 'test' ? 'test' : 'save';
    setIntent(next);
    (next === 'test' ? tester : saver).submit(event);
  };
  return (
    <form onSubmit={submit} noValidate aria-label="Set the upstream">
      <Field
        label="Upstream endpoint URL"
        type="url"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        error={active.errorOf('url')}
      />
      <Field
        label="Its card URL (optional)"
        type="url"
        value={cardUrl}
        onChange={(e) => setCardUrl(e.target.value)}
        hint="Default: the well-known card under the endpoint."
        error={active.errorOf('card_url')}
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
          error={active.errorOf('auth.header')}
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
          error={active.errorOf('auth.value')}
        />
      )}
      <TextArea
        label="Pinned public keys (optional)"
        value={keys}
        onChange={(e) => setKeys(e.target.value)}
        rows={3}
        spellCheck={false}
        hint='A JWK Set, {"keys": [ … ]}: its card must be signed by one of them.'
        error={active.errorOf('trusted_keys')}
      />
      <Field
        label="Or the URL of its key set (optional)"
        type="url"
        value={jwksUri}
        onChange={(e) => setJwksUri(e.target.value)}
        hint="Read each time its card is verified."
        error={active.errorOf('trusted_jwks_uri')}
      />
      <ErrorNotice error={active.notice} />
      <div className="actions">
        <Submit pending={saver.mutation.isPending} pendingLabel="Reading its card…">
          Save upstream
        </Submit>
        <button type="submit" value="test" disabled={tester.mutation.isPending} aria-busy={tester.mutation.isPending}>
          {tester.mutation.isPending ? 'Testing…' : 'Test upstream'}
        </button>
      </div>
      {tester.mutation.data && <TestResult result={tester.mutation.data} />}
    </form>
  );
}
