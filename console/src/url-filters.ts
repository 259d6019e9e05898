import { useEffect, useState } from 'react';
import { navigate, useRoute } from './router';

/**
 * A list's filters, kept in the page's URL (`/keys?identity=…&status=revoked`): a filtered
 * list can be bookmarked and shared, back and forward step through filters, and a
 * navigation link (which has no query) shows the list unfiltered. A filter at its default
 * is left out of the URL; one set to "any" when its default is not is kept as `name=`.
 */
export function useUrlFilters<K extends string>(
  defaults: Record<K, string>,
): [Record<K, string>, (next: Partial<Record<K, string>>) => void] {
  const { path, search } = useRoute();
  const values = {} as Record<K, string>;
  for (const key of Object.keys(defaults) as K[]) {
    values[key] = search.has(key) ? (search.get(key) ?? '') : defaults[key];
  }
  const set = (next: Partial<Record<K, string>>) => {
    const query = new URLSearchParams(search);
    for (const [key, value] of Object.entries(next) as [K, string][]) {
      if (value === defaults[key]) {
        query.delete(key);
      } else {
        query.set(key, value);
      }
    }
    const text = query.toString();
    navigate(`${path}${text ? `?${text}` : ''}`, { keepScroll: true });
  };
  return [values, set];
}

/** A text filter's draft (applied on submit), set back whenever the URL's value changes. */
export function useDraft<T>(applied: T): [T, (value: T) => void] {
  const [draft, setDraft] = useState(applied);
  const key = JSON.stringify(applied);
  useEffect(() => {
    setDraft(JSON.parse(key) as T);
  }, [key]);
  return [draft, setDraft];
}
