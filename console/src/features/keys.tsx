import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../api';
import { EmptyState, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged } from '../paging';
import { useUrlFilters } from '../url-filters';
import type { paths } from '../../../client';
import type { ApiKey, Identity, MintedApiKey } from '../types';

type KeyQuery = NonNullable<paths['/api/v1/api-keys']['get']['parameters']['query']>;
import {
  ConfirmButton,
  ErrorNotice,
  Field,
  Loading,
  LoadMore,
  SecretOnce,
  Select,
  Submit,
  usePageTitle,
  when,
} from '../ui';

function useIdentities() {
  return usePaged<Identity>(['identities', 'all'], async (cursor) =>
    pageOf(
      await call(api.GET('/api/v1/identities/a2a/directory', { params: { query: { cursor, limit: 200 } } })),
      'identities',
    ),
  );
}

const KEY_FILTERS = { scope: '', status: 'active', identity: '' };

export function KeysPage() {
  usePageTitle('API keys');
  const [filters, setFilters] = useUrlFilters(KEY_FILTERS);
  const scope = filters.scope as KeyQuery['scope'] | '';
  const status = filters.status as KeyQuery['status'] | '';
  const identity = filters.identity;
  const setScope = (value: string) => setFilters({ scope: value });
  const setStatus = (value: string) => setFilters({ status: value });
  const setIdentity = (value: string) => setFilters({ identity: value });
  const identities = useIdentities();
  const list = usePaged<ApiKey>(['keys', scope, status, identity], async (cursor) =>
    pageOf(
      await call(
        api.GET('/api/v1/api-keys', {
          params: {
            query: { scope: scope || undefined, status: status || undefined, identity: identity || undefined, cursor },
          },
        }),
      ),
      'api_keys',
    ),
  );
  const handleOf = (id: string | null) => identities.items.find((i) => i.id === id)?.agent_handle ?? id ?? '—';
  return (
    <>
      <h1>API keys</h1>
      <div className="columns">
        <section aria-labelledby="keys-title">
          <h2 id="keys-title">Keys</h2>
          <div className="filters">
            <Select label="Scope" value={scope} onChange={(e) => setScope(e.target.value)}>
              <option value="">any</option>
              <option value="admin">admin</option>
              <option value="agent">agent</option>
            </Select>
            <Select label="Status" value={status} onChange={(e) => setStatus(e.target.value)}>
              <option value="">any</option>
              <option value="active">active</option>
              <option value="revoked">revoked</option>
            </Select>
            <Select label="Identity" value={identity} onChange={(e) => setIdentity(e.target.value)}>
              <option value="">any</option>
              {identities.items.map((i) => (
                <option key={i.id} value={i.id}>
                  {i.agent_handle}
                </option>
              ))}
            </Select>
          </div>
          {list.isPending ? (
            <Loading />
          ) : list.error ? (
            <ErrorNotice error={list.error} />
          ) : list.items.length === 0 ? (
            scope || identity || status === 'revoked' ? (
              <EmptyState>No keys match.</EmptyState>
            ) : (
              <EmptyState
                title="No API keys yet."
                actions={<StartWith form="mint-title">Mint your first key</StartWith>}
              >
                An API key lets a program act for you: an agent key is bound to one identity and sends and answers its
                tasks through the protocol; an admin key manages the organization through the API. Its secret is shown
                once, when it is minted.
              </EmptyState>
            )
          ) : (
            <ul className="cards" aria-label="API keys">
              {list.items.map((key) => (
                <KeyRow key={key.id} apiKey={key} identity={handleOf(key.scoped_identity_id)} />
              ))}
            </ul>
          )}
          <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
        </section>
        <MintKey identities={identities.items} />
      </div>
    </>
  );
}

function KeyRow({ apiKey, identity }: { apiKey: ApiKey; identity: string }) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [label, setLabel] = useState(apiKey.label);
  const [description, setDescription] = useState(apiKey.description);
  const {
    mutation: save,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    mutationFn: () =>
      call<ApiKey>(
        api.PATCH('/api/v1/api-keys/{id}', { params: { path: { id: apiKey.id } }, body: { label, description } }),
      ),
    onSuccess: () => {
      setEditing(false);
      void client.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: () => call<ApiKey>(api.POST('/api/v1/api-keys/{id}/revoke', { params: { path: { id: apiKey.id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['keys'] }),
  });
  const name = apiKey.label || apiKey.prefix;
  return (
    <li>
      <div className="row">
        <strong>{apiKey.label || '(no label)'}</strong> <code>{apiKey.prefix}…</code>{' '}
        <span className={`badge ${apiKey.status}`}>{apiKey.status}</span> <span className="badge">{apiKey.scope}</span>
      </div>
      <div className="muted">
        {apiKey.scope === 'agent' ? `for ${identity} · ` : ''}created {when(apiKey.created_at)} · last used{' '}
        {when(apiKey.last_used_at)}
        {apiKey.revoked_at ? ` · revoked ${when(apiKey.revoked_at)}` : ''}
      </div>
      {apiKey.description && <p>{apiKey.description}</p>}
      {editing ? (
        <form onSubmit={submit}>
          <Field
            label={`Label of ${name}`}
            value={label}
            onChange={(e) => setLabel(e.target.value)}
            error={errorOf('label')}
          />
          <Field
            label={`Description of ${name}`}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            error={errorOf('description')}
          />
          <ErrorNotice error={notice} />
          <div className="actions">
            <Submit pending={save.isPending}>Save</Submit>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div className="actions">
          <button type="button" onClick={() => setEditing(true)}>
            Edit {name}
          </button>
          {apiKey.status === 'active' && (
            <ConfirmButton
              label={`Revoke ${name}`}
              title={`Revoke ${name}?`}
              body={
                <p>Every request with this key is refused from now on, on every instance. This cannot be undone.</p>
              }
              confirmLabel="Revoke key"
              onConfirm={() => revoke.mutate()}
              pending={revoke.isPending}
            />
          )}
        </div>
      )}
      <ErrorNotice error={revoke.error} />
    </li>
  );
}

function MintKey({ identities }: { identities: Identity[] }) {
  const client = useQueryClient();
  const [scope, setScope] = useState<'agent' | 'admin'>('agent');
  const [identity, setIdentity] = useState('');
  const [label, setLabel] = useState('');
  const [description, setDescription] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const {
    mutation: mint,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      scoped_identity_id: scope === 'agent' && !identity ? 'Choose the identity the key acts as.' : undefined,
    }),
    mutationFn: () =>
      call<MintedApiKey>(
        api.POST('/api/v1/api-keys', {
          body: {
            scope,
            scoped_identity_id: scope === 'agent' ? identity : undefined,
            label: label || undefined,
            description: description || undefined,
          },
        }),
      ),
    onSuccess: (key) => {
      void client.invalidateQueries({ queryKey: ['keys'] });
      setSecret(key.key ?? null);
      setLabel('');
      setDescription('');
    },
  });
  if (secret) {
    return <SecretOnce label="Your new API key" value={secret} onDone={() => setSecret(null)} />;
  }
  return (
    <section aria-labelledby="mint-title">
      <h2 id="mint-title">Mint a key</h2>
      <form onSubmit={submit} noValidate>
        <Select label="Key scope" value={scope} onChange={(e) => setScope(e.target.value as 'agent' | 'admin')}>
          <option value="agent">agent — acts as one identity</option>
          <option value="admin">admin — manages the organization</option>
        </Select>
        {scope === 'agent' && (
          <Select
            label="Acts as identity"
            value={identity}
            onChange={(e) => setIdentity(e.target.value)}
            error={errorOf('scoped_identity_id')}
          >
            <option value="">Choose…</option>
            {identities.map((i) => (
              <option key={i.id} value={i.id}>
                {i.agent_handle}
              </option>
            ))}
          </Select>
        )}
        <Field label="Label" value={label} onChange={(e) => setLabel(e.target.value)} error={errorOf('label')} />
        <Field
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={errorOf('description')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={mint.isPending} pendingLabel="Minting…">
          Mint key
        </Submit>
      </form>
    </section>
  );
}
