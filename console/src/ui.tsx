import {
  useEffect,
  useId,
  useRef,
  useState,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';
import { ApiError } from './api';

/** Client-side validation errors and the server's `errors[]`, by field. */
export type FieldErrors = Record<string, string | undefined>;

interface FieldProps {
  label: string;
  error?: string;
  hint?: ReactNode;
}

export function Field({ label, error, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : hint ? `${id}-hint` : undefined}
        {...input}
      />
      {hint && !error && <small id={`${id}-hint`}>{hint}</small>}
      {error && (
        <small className="field-error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

export function TextArea({ label, error, hint, ...input }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        {...input}
      />
      {hint && !error && <small>{hint}</small>}
      {error && (
        <small className="field-error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

export function Select({
  label,
  error,
  hint,
  children,
  ...input
}: FieldProps & SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : hint ? `${id}-hint` : undefined}
        {...input}
      >
        {children}
      </select>
      {hint && !error && <small id={`${id}-hint`}>{hint}</small>}
      {error && (
        <small className="field-error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

/** A checkbox with its label after it (`type="radio"` makes it a radio button). */
export function Check({ label, ...input }: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" {...input} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** What went wrong, in a person's words (problem-words.ts), announced to screen readers. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) {
    return null;
  }
  const message = error instanceof ApiError ? error.words : error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="notice error">
      {message}
    </div>
  );
}

/** A change that worked, said once and announced politely. */
export function SuccessNotice({ children }: { children: ReactNode }) {
  return (
    <p role="status" className="notice ok">
      <span aria-hidden="true">✓ </span>
      {children}
    </p>
  );
}

/** The browser tab's title for a page: "Identities · A2A Console". */
export function usePageTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · A2A Console` : 'A2A Console';
  }, [title]);
}

/**
 * A short id a person can tell apart: the end of a UUIDv7 (its random part), since ids
 * made in the same minute share their first characters (the time).
 */
export function shortId(id: string): string {
  return id.replace(/-/g, '').slice(-8);
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p role="status" className="loading">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

/** A submit button that shows progress while its form is being sent. */
export function Submit({
  pending,
  children,
  pendingLabel,
  className = 'primary',
}: {
  pending: boolean;
  children: ReactNode;
  pendingLabel?: string;
  className?: string;
}) {
  return (
    <button type="submit" className={className} disabled={pending} aria-busy={pending}>
      {pending ? (
        <>
          <span className="spinner" aria-hidden="true" /> {pendingLabel ?? 'Working…'}
        </>
      ) : (
        children
      )}
    </button>
  );
}

/**
 * A destructive act behind a modal confirmation (the native <dialog>: focus moves into it,
 * Escape cancels).
 */
export function ConfirmButton({
  label,
  title,
  body,
  confirmLabel,
  onConfirm,
  pending,
  className = 'danger',
}: {
  label: string;
  title: string;
  body: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  pending?: boolean;
  className?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const [open, setOpen] = useState(false);
  // Set once the dialog opened: only then does focus go back to the trigger (never on mount,
  // which would pull focus and scroll to the last destructive button of the page).
  const opened = useRef(false);
  const titleId = useId();
  useEffect(() => {
    if (open) {
      opened.current = true;
      dialog.current?.showModal();
    }
    // Focus goes back to the button that opened the dialog (if it is still there).
    else if (opened.current) {
      opened.current = false;
      trigger.current?.focus();
    }
  }, [open]);
  return (
    <>
      <button
        ref={trigger}
        type="button"
        className={className}
        onClick={() => setOpen(true)}
        disabled={pending}
        aria-busy={pending}
      >
        {pending ? 'Working…' : label}
      </button>
      {open && (
        <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setOpen(false)}>
          <h2 id={titleId}>{title}</h2>
          <div>{body}</div>
          <div className="actions">
            <button type="button" onClick={() => setOpen(false)} autoFocus>
              Cancel
            </button>
            <button
              type="button"
              className="danger"
              onClick={() => {
                setOpen(false);
                onConfirm();
              }}
            >
              {confirmLabel}
            </button>
          </div>
        </dialog>
      )}
    </>
  );
}

/** How the service keeps a secret it shows once: what the warning tells the person. */
const KEPT = {
  hash: 'the service keeps only a hash and cannot show it again.',
  signing:
    'the service keeps it to sign deliveries (stored as issued, since it signs with it) but never shows it again.',
};

/** A secret shown once: in memory only, with a copy button and a warning. */
export function SecretOnce({
  label,
  value,
  onDone,
  kept = 'hash',
}: {
  label: string;
  value: string;
  onDone: () => void;
  kept?: keyof typeof KEPT;
}) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const id = useId();
  const copy = () => {
    if (!navigator.clipboard) {
      return setCopied('failed');
    }
    navigator.clipboard.writeText(value).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  };
  return (
    <section className="secret">
      <h3>{label}</h3>
      <p className="warning">
        <strong>Copy it now.</strong> This is the only time it is shown; {KEPT[kept]}
      </p>
      <div className="secret-row">
        <label htmlFor={id} className="visually-hidden">
          {label}
        </label>
        <input id={id} readOnly value={value} onFocus={(e) => e.currentTarget.select()} className="mono" />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" className="muted">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Copying is not allowed here: select the text and copy it.'
            : ''}
      </p>
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
    </section>
  );
}

export function LoadMore({ hasNext, pending, onClick }: { hasNext: boolean; pending: boolean; onClick: () => void }) {
  if (!hasNext) {
    return null;
  }
  return (
    <button type="button" onClick={onClick} disabled={pending} aria-busy={pending}>
      {pending ? 'Loading…' : 'Load more'}
    </button>
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) {
    return '—';
  }
  return new Date(iso).toLocaleString();
}
