import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, ApiError, call } from '../api';
import { EmptyState, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged } from '../paging';
import { EditCard } from './identity-card';
import { CardPreview, RecentWork } from './identity-overview';
import { UpstreamPanel } from './identity-upstream';
import { Link, navigate } from '../router';
import { useDraft, useUrlFilters } from '../url-filters';
import type { CreatedIdentity, Identity, Settings } from '../types';
import {
  Check,
  ConfirmButton,
  ErrorNotice,
  Field,
  Loading,
  LoadMore,
  SecretOnce,
  Select,
  Submit,
  SuccessNotice,
  TextArea,
  usePageTitle,
  when,
} from '../ui';

const HANDLE = /^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/;

export function validateHandle(handle: string): string | undefined {
  if (!HANDLE.test(handle)) {
    return '3–63 characters of a–z, 0–9 and -, starting and ending with a letter or digit.';
  }
  return undefined;
}

const IDENTITY_FILTERS = { q: '', enabled: '', claimed: '' };

export function IdentitiesPage() {
  usePageTitle('Identities');
  const [filters, setFilters] = useUrlFilters(IDENTITY_FILTERS);
  const [q, setQ] = useDraft(filters.q);
  const search = filters.q;
  const enabled = filters.enabled as '' | 'true' | 'false';
  const claimed = filters.claimed as '' | 'true' | 'false';
  const setSearch = (value: string) => setFilters({ q: value });
  const setEnabled = (value: string) => setFilters({ enabled: value });
  const setClaimed = (value: string) => setFilters({ claimed: value });
  const list = usePaged<Identity>(['identities', search, enabled, claimed], async (cursor) =>
    pageOf(
      await call(
        api.GET('/api/v1/identities/a2a/directory', {
          params: {
            query: {
              q: search || undefined,
              enabled: enabled || undefined,
              claimed: claimed || undefined,
              cursor,
              limit: 50,
            },
          },
        }),
      ),
      'identities',
    ),
  );
  return (
    <>
      <h1>Identities</h1>
      <div className="columns">
        <section aria-labelledby="list-title">
          <h2 id="list-title">Your organization's identities</h2>
          <form
            role="search"
            className="inline"
            onSubmit={(e) => {
              e.preventDefault();
              setSearch(q.trim());
            }}
          >
            <Field label="Search identities" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
            <button type="submit">Search</button>
          </form>
          <div className="filters">
            <Select label="Enabled" value={enabled} onChange={(e) => setEnabled(e.target.value)}>
              <option value="">any</option>
              <option value="true">enabled</option>
              <option value="false">disabled</option>
            </Select>
            <Select label="Claimed" value={claimed} onChange={(e) => setClaimed(e.target.value)}>
              <option value="">any</option>
              <option value="true">claimed</option>
              <option value="false">unclaimed</option>
            </Select>
          </div>
          {list.isPending ? (
            <Loading />
          ) : list.error ? (
            <ErrorNotice error={list.error} />
          ) : list.items.length === 0 ? (
            search || enabled || claimed ? (
              <EmptyState>No identities match.</EmptyState>
            ) : (
              <EmptyState
                title="No identities yet."
                actions={<StartWith form="create-identity">Create your first identity</StartWith>}
              >
                An identity is one agent of your organization: a handle other agents call at{' '}
                <code>/a2a/&lt;handle&gt;</code>, the Agent Card it serves, its API keys and its contact rules. Create
                one here, or claim an agent that signed itself up.
              </EmptyState>
            )
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Handle</th>
                  <th scope="col">Name</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {list.items.map((identity) => (
                  <tr key={identity.id}>
                    <td>
                      <Link to={`/identities/${identity.agent_handle}`}>{identity.agent_handle}</Link>
                    </td>
                    <td>{identity.display_name || '—'}</td>
                    <td>
                      <StateBadge identity={identity} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
        </section>
        <div>
          <CreateIdentity />
          <ClaimIdentity />
        </div>
      </div>
    </>
  );
}

function CreateIdentity() {
  const client = useQueryClient();
  const [handle, setHandle] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [description, setDescription] = useState('');
  const [mintKey, setMintKey] = useState(true);
  const [secret, setSecret] = useState<string | null>(null);
  const {
    mutation: create,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      agent_handle: validateHandle(handle),
      display_name: displayName.length > 100 ? 'At most 100 characters.' : undefined,
    }),
    mutationFn: () =>
      call<CreatedIdentity>(
        api.POST('/api/v1/identities', {
          body: {
            agent_handle: handle,
            display_name: displayName || undefined,
            description: description || undefined,
            mint_key: mintKey,
          },
        }),
      ),
    onSuccess: (identity) => {
      void client.invalidateQueries({ queryKey: ['identities'] });
      setHandle('');
      setDisplayName('');
      setDescription('');
      setSecret(identity.api_key?.key ?? null);
      if (!identity.api_key?.key) {
        navigate(`/identities/${identity.agent_handle}`);
      }
    },
  });
  if (secret && create.data) {
    const created = create.data;
    return (
      <section>
        <h2>Identity {created.agent_handle} created</h2>
        <SecretOnce
          label="Its first agent key"
          value={secret}
          onDone={() => {
            setSecret(null);
            navigate(`/identities/${created.agent_handle}`);
          }}
        />
      </section>
    );
  }
  return (
    <section aria-labelledby="create-identity">
      <h2 id="create-identity">New identity</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Handle"
          value={handle}
          onChange={(e) => setHandle(e.target.value)}
          hint="For example acme-billing."
          error={errorOf('agent_handle')}
        />
        <Field
          label="Display name"
          value={displayName}
          onChange={(e) => setDisplayName(e.target.value)}
          error={errorOf('display_name')}
        />
        <TextArea
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={errorOf('description')}
        />
        <Check label="Mint its first agent key" checked={mintKey} onChange={(e) => setMintKey(e.target.checked)} />
        <ErrorNotice error={notice} />
        <Submit pending={create.isPending} pendingLabel="Creating…">
          Create identity
        </Submit>
      </form>
    </section>
  );
}

function ClaimIdentity() {
  const client = useQueryClient();
  const [code, setCode] = useState('');
  const {
    mutation: claim,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({ claim_code: code.trim() ? undefined : 'Paste the claim code.' }),
    mutationFn: () => call<Identity>(api.POST('/api/v1/identities/claim', { body: { claim_code: code.trim() } })),
    onSuccess: (identity) => {
      void client.invalidateQueries({ queryKey: ['identities'] });
      navigate(`/identities/${identity.agent_handle}`);
    },
  });
  return (
    <section aria-labelledby="claim-identity">
      <h2 id="claim-identity">Claim an agent</h2>
      <p className="muted">
        An agent that signed itself up gave you a claim code: claiming it brings the identity into your organization.
      </p>
      <form onSubmit={submit} noValidate>
        <Field
          label="Claim code"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          error={errorOf('claim_code')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={claim.isPending} pendingLabel="Claiming…">
          Claim
        </Submit>
      </form>
    </section>
  );
}

/** An identity's state as the list and its page name it: deleted before anything else. */
function StateBadge({ identity }: { identity: Identity }) {
  if (identity.status === 'deleted') {
    return <span className="badge deleted">deleted</span>;
  }
  const enabled = identity.enabled ? 'enabled' : 'disabled';
  if (!identity.claimed) {
    return <span className="badge unclaimed">unclaimed · {enabled}</span>;
  }
  return <span className={`badge ${enabled}`}>{enabled}</span>;
}

export function IdentityPage({ handle }: { handle: string }) {
  const identity = useQuery({
    queryKey: ['identity', handle],
    queryFn: () => call<Identity>(api.GET('/api/v1/identities/{handle}', { params: { path: { handle } } })),
  });
  usePageTitle(identity.data ? identity.data.display_name || identity.data.agent_handle : 'Identity');
  if (identity.isPending) {
    return <Loading />;
  }
  if (identity.error) {
    const missing = identity.error instanceof ApiError && identity.error.status === 404;
    return (
      <>
        <p>
          <Link to="/identities">← Identities</Link>
        </p>
        <h1>{missing ? 'No such identity' : 'This identity could not be opened'}</h1>
        {missing ? (
          <p>
            Your organization has no identity with the handle <code>{handle}</code>. Check the address, or{' '}
            <Link to="/identities">go back to your identities</Link>.
          </p>
        ) : (
          <ErrorNotice error={identity.error} />
        )}
      </>
    );
  }
  const data = identity.data;
  const deleted = data.status === 'deleted';
  return (
    <>
      <p>
        <Link to="/identities">← Identities</Link>
      </p>
      <h1>
        {data.display_name || data.agent_handle} <StateBadge identity={data} />
      </h1>
      <p className="muted">
        <code>{data.agent_handle}</code> · {data.claimed ? `claimed ${when(data.claimed_at)}` : 'unclaimed'}
      </p>
      {deleted ? (
        <>
          <p className="notice">
            This identity was deleted: it is shown read-only. Its keys were revoked, its card and protocol endpoint are
            gone, its handle stays reserved and its tasks stay in the ledger.
          </p>
          <p>
            <Link to={`/keys?identity=${data.id}&status=`}>Its API keys</Link> ·{' '}
            <Link to={`/tasks?identity=${data.agent_handle}`}>Its tasks</Link>
          </p>
          <ReadOnlyCard identity={data} />
        </>
      ) : (
        <>
          <p>
            <Link to={`/keys?identity=${data.id}`}>Its API keys</Link> ·{' '}
            <Link to={`/admission?identity=${data.agent_handle}`}>Its contact rules</Link> ·{' '}
            <Link to={`/approvals?identity=${data.agent_handle}`}>Its approval requests</Link> ·{' '}
            <Link to={`/tasks?identity=${data.agent_handle}`}>Its tasks</Link>
          </p>
          <div className="columns">
            <div>
              <EditCard identity={data} />
              <CardPreview identity={data} />
            </div>
            <div>
              <EditSettings handle={handle} />
              <RecentWork identity={data} />
              <UpstreamPanel identity={data} />
              <DeleteIdentity handle={handle} />
            </div>
          </div>
        </>
      )}
    </>
  );
}

/** A deleted identity's card as it was: read, never edited. */
function ReadOnlyCard({ identity }: { identity: Identity }) {
  return (
    <section aria-labelledby="card-title">
      <h2 id="card-title">Agent Card (as it was)</h2>
      <dl>
        <dt>Display name</dt>
        <dd>{identity.display_name || '—'}</dd>
        <dt>Description</dt>
        <dd>{identity.description || '—'}</dd>
      </dl>
      {identity.skills.length === 0 ? (
        <EmptyState>No skills.</EmptyState>
      ) : (
        <ul aria-label="Skills on the card">
          {identity.skills.map((skill) => (
            <li key={skill.id}>
              {skill.name} <code>{skill.id}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

type FilterMode = Settings['filter_mode'];

/** What each filter mode does to a peer of another organization that no rule names. */
const FILTER_MODES: Record<FilterMode, { label: string; hint: string }> = {
  whitelist: {
    label: 'whitelist — other organizations need an allow rule',
    hint: "Another organization's identity without an allow rule is refused.",
  },
  blacklist: {
    label: 'blacklist — everyone unless blocked',
    hint: "Another organization's identity is admitted unless a block rule names it.",
  },
  approval: {
    label: 'approval — a person approves each new peer',
    hint: "A new task with another organization's identity that no rule names waits in Approvals until a person of your organization decides.",
  },
};

function EditSettings({ handle }: { handle: string }) {
  const client = useQueryClient();
  const settings = useQuery({
    queryKey: ['settings', handle],
    queryFn: () => call<Settings>(api.GET('/api/v1/identities/{handle}/settings', { params: { path: { handle } } })),
  });
  const [draft, setDraft] = useState<Settings | null>(null);
  useEffect(() => {
    if (settings.data) {
      setDraft(settings.data);
    }
  }, [settings.data]);
  const {
    mutation: save,
    submit,
    notice,
  } = useFormMutation({
    mutationFn: () =>
      call<Settings>(api.PATCH('/api/v1/identities/{handle}/settings', { params: { path: { handle } }, body: draft! })),
    onSuccess: (saved) => {
      client.setQueryData(['settings', handle], saved);
      void client.invalidateQueries({ queryKey: ['identities'] });
      void client.invalidateQueries({ queryKey: ['identity', handle] });
    },
  });
  if (settings.isPending || !draft) {
    return settings.error ? <ErrorNotice error={settings.error} /> : <Loading />;
  }
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <p className="muted">
        As a member of the organization you may change every setting. The identity's own key may change only “enabled”
        and “public egress”.
      </p>
      <form onSubmit={submit}>
        <Check
          label="Enabled (the card is served and the protocol endpoint answers)"
          checked={draft.enabled}
          onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })}
        />
        <Check
          label="Allow public egress"
          checked={draft.allow_public_egress}
          onChange={(e) => setDraft({ ...draft, allow_public_egress: e.target.checked })}
        />
        <Check
          label="Publicly discoverable"
          checked={draft.publicly_discoverable}
          onChange={(e) => setDraft({ ...draft, publicly_discoverable: e.target.checked })}
        />
        <Select
          label="Filter mode"
          value={draft.filter_mode}
          onChange={(e) => setDraft({ ...draft, filter_mode: e.target.value as FilterMode })}
          hint={FILTER_MODES[draft.filter_mode].hint}
        >
          {(Object.keys(FILTER_MODES) as FilterMode[]).map((mode) => (
            <option key={mode} value={mode}>
              {FILTER_MODES[mode].label}
            </option>
          ))}
        </Select>
        <ErrorNotice error={notice} />
        {save.isSuccess && <SuccessNotice>Settings saved.</SuccessNotice>}
        <Submit pending={save.isPending} pendingLabel="Saving…">
          Save settings
        </Submit>
      </form>
    </section>
  );
}

function DeleteIdentity({ handle }: { handle: string }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/identities/{handle}', { params: { path: { handle } } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['identities'] });
      navigate('/identities');
    },
  });
  return (
    <section aria-labelledby="delete-title">
      <h2 id="delete-title">Delete</h2>
      <p className="muted">
        Its keys are revoked, its card and protocol endpoint disappear; its handle stays reserved and its tasks stay in
        the ledger.
      </p>
      <ErrorNotice error={remove.error} />
      <ConfirmButton
        label="Delete identity"
        title={`Delete ${handle}?`}
        body={<p>This cannot be undone.</p>}
        confirmLabel={`Delete ${handle}`}
        onConfirm={() => remove.mutate()}
        pending={remove.isPending}
      />
    </section>
  );
}
