import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { paths } from '../../../client';
import { api, call } from '../api';
import { EmptyState, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import type { TrustedIssuer } from '../types';
import { ConfirmButton, ErrorNotice, Field, Loading, Submit, TextArea, usePageTitle, when } from '../ui';

type CreateBody = paths['/api/v1/trusted-issuers']['post']['requestBody']['content']['application/json'];
type UpdateBody = paths['/api/v1/trusted-issuers/{id}']['patch']['requestBody']['content']['application/json'];

const TRUSTS = ['trusted-issuers'];

/** A trust as its form holds it: text fields; the subjects one per line, the subject then the handle. */
interface Draft {
  issuer: string;
  audience: string;
  jwksUri: string;
  jwks: string;
  subjectClaim: string;
  subjects: string;
}

const EMPTY: Draft = { issuer: '', audience: '', jwksUri: '', jwks: '', subjectClaim: '', subjects: '' };

function draftOf(trust: TrustedIssuer): Draft {
  return {
    issuer: trust.issuer,
    audience: trust.audience,
    jwksUri: trust.jwks_uri ?? '',
    jwks: trust.jwks ? JSON.stringify(trust.jwks, null, 2) : '',
    subjectClaim: trust.subject_claim,
    subjects: Object.entries(trust.subjects)
      .map(([subject, handle]) => `${subject} ${handle}`)
      .join('\n'),
  };
}

/** "subject handle" lines → the mapping; null when a line is not one (a handle has no spaces, a subject may). */
function subjectsOf(text: string): Record<string, string> | null {
  const subjects: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line) {
      continue;
    }
    const at = line.search(/\s\S+$/);
    if (at <= 0) {
      return null;
    }
    subjects[line.slice(0, at).trim()] = line.slice(at).trim();
  }
  return Object.keys(subjects).length > 0 ? subjects : null;
}

function jwksOf(text: string): object | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The browser's checks of a draft (the service checks the rest: addresses, handles, keys). */
function checkDraft(draft: Draft) {
  return {
    issuer: draft.issuer.trim() ? undefined : "The issuer is required: its tokens' iss, exactly.",
    audience: draft.audience.trim() ? undefined : 'The audience is required: the aud its tokens name.',
    subjects: subjectsOf(draft.subjects) ? undefined : 'One per line: the subject, a space, then the handle.',
    jwks:
      draft.jwks.trim() && draft.jwksUri.trim()
        ? 'Give a JWKS URL or inline keys, not both.'
        : draft.jwks.trim() && !jwksOf(draft.jwks)
          ? 'A JWK Set in JSON: {"keys": [...]}.'
          : undefined,
  };
}

export function TrustedIssuersPage() {
  usePageTitle('Trusted issuers');
  const list = useQuery({
    queryKey: TRUSTS,
    queryFn: () => call(api.GET('/api/v1/trusted-issuers')),
  });
  return (
    <>
      <h1>Trusted issuers</h1>
      <p className="muted">
        A workload that already holds a token — a Kubernetes service account, a SPIFFE JWT-SVID, a CI job — calls as one
        of your identities with it, and no API key is handed out.
      </p>
      <div className="columns">
        <section aria-labelledby="trusts-title">
          <h2 id="trusts-title">Issuers</h2>
          {list.isPending ? (
            <Loading />
          ) : list.error ? (
            <ErrorNotice error={list.error} />
          ) : list.data.items.length === 0 ? (
            <EmptyState
              title="No trusted issuers yet."
              actions={<StartWith form="trust-title">Trust your first issuer</StartWith>}
            >
              Trust an issuer for an audience, and map each of its subjects to one of your identities: its tokens then
              act as that identity's agent key.
            </EmptyState>
          ) : (
            <ul className="cards" aria-label="Trusted issuers">
              {list.data.items.map((trust) => (
                <TrustRow key={trust.id} trust={trust} />
              ))}
            </ul>
          )}
        </section>
        <CreateTrust />
      </div>
    </>
  );
}

function TrustRow({ trust }: { trust: TrustedIssuer }) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const remove = useMutation({
    mutationFn: () => call(api.DELETE('/api/v1/trusted-issuers/{id}', { params: { path: { id: trust.id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: TRUSTS }),
  });
  const keys = trust.jwks
    ? `${trust.jwks.keys?.length ?? 0} inline key(s)`
    : trust.jwks_uri
      ? `keys at ${trust.jwks_uri}`
      : 'keys from its discovery document';
  return (
    <li>
      <div className="row">
        <strong>{trust.issuer}</strong> <span className="badge">{trust.audience}</span>
      </div>
      <div className="muted">
        {keys} · subject claim <code>{trust.subject_claim}</code> · trusted {when(trust.created_at)}
      </div>
      <ul aria-label={`Subjects of ${trust.issuer}`}>
        {Object.entries(trust.subjects).map(([subject, handle]) => (
          <li key={subject}>
            <code>{subject}</code> → {handle}
          </li>
        ))}
      </ul>
      {editing ? (
        <EditTrust trust={trust} onDone={() => setEditing(false)} />
      ) : (
        <div className="actions">
          <button type="button" onClick={() => setEditing(true)}>
            Edit {trust.issuer}
          </button>
          <ConfirmButton
            label={`Stop trusting ${trust.issuer}`}
            title={`Stop trusting ${trust.issuer}?`}
            body={<p>Its tokens for {trust.audience} are refused from the next request, open calls included.</p>}
            confirmLabel="Stop trusting"
            onConfirm={() => remove.mutate()}
            pending={remove.isPending}
          />
        </div>
      )}
      <ErrorNotice error={remove.error} />
    </li>
  );
}

function EditTrust({ trust, onDone }: { trust: TrustedIssuer; onDone: () => void }) {
  const client = useQueryClient();
  const [draft, setDraft] = useState(() => draftOf(trust));
  const form = useFormMutation({
    validate: () => checkDraft(draft),
    mutationFn: () => {
      const body: UpdateBody = {
        issuer: draft.issuer.trim(),
        audience: draft.audience.trim(),
        subject_claim: draft.subjectClaim.trim() || 'sub',
        subjects: subjectsOf(draft.subjects)!,
        // Cleared ones are null: neither means the issuer's discovery document.
        jwks_uri: draft.jwksUri.trim() || null,
        jwks: draft.jwks.trim() ? (jwksOf(draft.jwks) as UpdateBody['jwks']) : null,
      };
      return call(api.PATCH('/api/v1/trusted-issuers/{id}', { params: { path: { id: trust.id } }, body }));
    },
    onSuccess: () => {
      onDone();
      void client.invalidateQueries({ queryKey: TRUSTS });
    },
  });
  return (
    <TrustForm
      name={`Edit ${trust.issuer}`}
      draft={draft}
      setDraft={setDraft}
      form={form}
      submitLabel="Save"
      onCancel={onDone}
    />
  );
}

function CreateTrust() {
  const client = useQueryClient();
  const [draft, setDraft] = useState(EMPTY);
  const form = useFormMutation({
    validate: () => checkDraft(draft),
    mutationFn: () => {
      const body: CreateBody = {
        issuer: draft.issuer.trim(),
        audience: draft.audience.trim(),
        subject_claim: draft.subjectClaim.trim() || undefined,
        subjects: subjectsOf(draft.subjects)!,
        jwks_uri: draft.jwksUri.trim() || undefined,
        jwks: draft.jwks.trim() ? (jwksOf(draft.jwks) as CreateBody['jwks']) : undefined,
      };
      return call(api.POST('/api/v1/trusted-issuers', { body }));
    },
    onSuccess: () => {
      setDraft(EMPTY);
      void client.invalidateQueries({ queryKey: TRUSTS });
    },
  });
  return (
    <section aria-labelledby="trust-title">
      <h2 id="trust-title">Trust an issuer</h2>
      <TrustForm name="Trust an issuer" draft={draft} setDraft={setDraft} form={form} submitLabel="Trust issuer" />
    </section>
  );
}

/** What a trust's form needs of its useFormMutation. */
interface TrustFormState {
  submit: (event: FormEvent) => void;
  errorOf: (field: string) => string | undefined;
  notice: unknown;
  mutation: { isPending: boolean };
}

function TrustForm({
  name,
  draft,
  setDraft,
  form,
  submitLabel,
  onCancel,
}: {
  name: string;
  draft: Draft;
  setDraft: (draft: Draft) => void;
  form: TrustFormState;
  submitLabel: string;
  onCancel?: () => void;
}) {
  const set = (field: keyof Draft) => (event: { target: { value: string } }) =>
    setDraft({ ...draft, [field]: event.target.value });
  return (
    <form onSubmit={form.submit} noValidate aria-label={name}>
      <Field
        label="Issuer"
        value={draft.issuer}
        onChange={set('issuer')}
        error={form.errorOf('issuer')}
        hint="Its tokens' iss, exactly (https)."
      />
      <Field
        label="Audience"
        value={draft.audience}
        onChange={set('audience')}
        error={form.errorOf('audience')}
        hint="The aud its tokens must name."
      />
      <TextArea
        label="Subjects"
        value={draft.subjects}
        onChange={set('subjects')}
        error={form.errorOf('subjects')}
        hint="One per line: the subject, a space, then the handle of the identity it acts as."
        rows={3}
      />
      <Field
        label="JWKS URL"
        value={draft.jwksUri}
        onChange={set('jwksUri')}
        error={form.errorOf('jwks_uri')}
        hint="Optional: where its keys are (https). Empty, with no inline keys: from its discovery document."
      />
      <TextArea
        label="Inline keys"
        value={draft.jwks}
        onChange={set('jwks')}
        error={form.errorOf('jwks')}
        hint='Optional, not with a JWKS URL: its public keys as a JWK Set, {"keys": [...]}, each with its kid.'
        rows={3}
      />
      <Field
        label="Subject claim"
        value={draft.subjectClaim}
        onChange={set('subjectClaim')}
        error={form.errorOf('subject_claim')}
        placeholder="sub"
      />
      <ErrorNotice error={form.notice} />
      <div className="actions">
        <Submit pending={form.mutation.isPending}>{submitLabel}</Submit>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
