import type { ReactNode } from 'react';
import { Link } from './router';

/**
 * What an empty list says. With a `title`: what the thing is, and the first thing to do
 * about it (`actions`). Without: only that nothing is there (a filtered list that matches
 * nothing, a task without artifacts).
 */
export function EmptyState({ title, children, actions }: { title?: string; children: ReactNode; actions?: ReactNode }) {
  if (!title) {
    return <p className="muted">{children}</p>;
  }
  return (
    <div className="empty-state">
      <p className="empty-title">{title}</p>
      <p>{children}</p>
      {actions && <div className="actions">{actions}</div>}
    </div>
  );
}

/** The first action when its form is on the same page: moves focus to the form's first field. */
export function StartWith({ form, children }: { form: string; children: ReactNode }) {
  const start = () => {
    const field = document
      .getElementById(form)
      ?.closest('section')
      ?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea');
    field?.focus();
  };
  return (
    <button type="button" className="primary" onClick={start}>
      {children}
    </button>
  );
}

/** The first action on another page. */
export function StartAt({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Link to={to} className="button">
      {children}
    </Link>
  );
}
