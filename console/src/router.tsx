import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** The Console lives under /console/; client routes are paths below it (the server answers them with index.html). */
export const BASE = '/console';

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

export function navigate(to: string, options: { replace?: boolean; keepScroll?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (options.replace) {
    window.history.replaceState(null, '', url);
  } else {
    window.history.pushState(null, '', url);
  }
  if (!options.keepScroll) {
    window.scrollTo(0, 0);
  }
  listeners.forEach((listener) => listener());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The current client route, without the /console prefix ("/identities/acme?x=1"). */
export function useRoute(): { path: string; search: URLSearchParams; full: string } {
  const full = useSyncExternalStore(subscribe, () => window.location.pathname + window.location.search);
  const url = new URL(full, window.location.origin);
  const path = url.pathname.slice(BASE.length).replace(/\/+$/, '') || '/';
  return { path, search: url.searchParams, full: path + url.search };
}

export function Link({ to, onClick, ...props }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const href = `${BASE}${to}`;
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    ) {
      return;
    }
    event.preventDefault();
    navigate(to);
  };
  return <a href={href} onClick={follow} {...props} />;
}
