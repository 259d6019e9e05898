import { type FormEvent } from 'react';
import { api, call } from '../api';
import { EmptyState, StartAt } from '../empty-state';
import { pageOf, usePaged } from '../paging';
import type { AuditEvent } from '../types';
import { ErrorNotice, Field, Loading, LoadMore, Submit, usePageTitle, when } from '../ui';
import { useDraft, useUrlFilters } from '../url-filters';

const NONE = { action: '', actor: '', target: '' };

/** The organization's audit log (docs/api.md §15), newest first, with the API's filters (kept in the URL). */
export function AuditPage() {
  usePageTitle('Audit log');
  const [filters, setFilters] = useUrlFilters(NONE);
  const [draft, setDraft] = useDraft(filters);
  const list = usePaged<AuditEvent>(['audit', filters], async (cursor) =>
    pageOf(
      await call(
        api.GET('/api/v1/audit-events', {
          params: {
            query: {
              action: filters.action || undefined,
              actor: filters.actor || undefined,
              target: filters.target || undefined,
              cursor,
            },
          },
        }),
      ),
      'audit_events',
    ),
  );
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ action: draft.action.trim(), actor: draft.actor.trim(), target: draft.target.trim() });
  };
  return (
    <>
      <h1>Audit log</h1>
      <section aria-labelledby="audit-title">
        <h2 id="audit-title">Changes</h2>
        <form className="filters" onSubmit={apply} aria-label="Audit filters">
          <Field
            label="Action"
            placeholder="api_key.*"
            value={draft.action}
            onChange={(e) => setDraft({ ...draft, action: e.target.value })}
          />
          <Field
            label="Actor"
            placeholder="email or key label"
            value={draft.actor}
            onChange={(e) => setDraft({ ...draft, actor: e.target.value })}
          />
          <Field
            label="Target"
            placeholder="id or handle"
            value={draft.target}
            onChange={(e) => setDraft({ ...draft, target: e.target.value })}
          />
          <Submit pending={false}>Apply filters</Submit>
        </form>
        {list.isPending ? (
          <Loading />
        ) : list.error ? (
          <ErrorNotice error={list.error} />
        ) : list.items.length === 0 ? (
          filters.action || filters.actor || filters.target ? (
            <EmptyState>No entries match.</EmptyState>
          ) : (
            <EmptyState title="No entries yet." actions={<StartAt to="/keys">Mint a key</StartAt>}>
              The audit log records every change a person or key makes (keys minted and revoked, identities, contact
              rules, webhooks, members, sign-ins) with who made it, when and from where; never a secret.
            </EmptyState>
          )
        ) : (
          <ul className="cards" aria-label="Audit entries">
            {list.items.map((entry) => (
              <AuditRow key={entry.id} entry={entry} />
            ))}
          </ul>
        )}
        <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
      </section>
    </>
  );
}

function AuditRow({ entry }: { entry: AuditEvent }) {
  const actor =
    entry.actor.type === 'signup'
      ? 'agent signup'
      : entry.actor.type === 'api_key'
        ? `key “${entry.actor.name ?? entry.actor.label ?? 'unknown'}”`
        : (entry.actor.name ?? 'a removed member');
  const changes = Object.entries(entry.changes as Record<string, { before: unknown; after: unknown }>);
  return (
    <li>
      <div className="row">
        <strong>{entry.action}</strong> <span className="badge">{entry.target.type}</span>{' '}
        {entry.target.label ?? entry.target.id ?? ''}
      </div>
      <div className="muted">
        {when(entry.created_at)} · by {actor}
        {entry.client_address ? ` · from ${entry.client_address}` : ''}
      </div>
      {changes.length > 0 && (
        <ul aria-label={`Changes of ${entry.action}`}>
          {changes.map(([field, change]) => (
            <li key={field}>
              <code>{field}</code>: {JSON.stringify(change.before)} → {JSON.stringify(change.after)}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}
