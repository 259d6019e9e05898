import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, StrictMode, Suspense, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api';
import { AdmissionPage } from './features/admission';
import { sendToSignIn, SignInPage, SignUpPage, useMe, useSignOut } from './features/auth';
import { IdentitiesPage, IdentityPage } from './features/identities';
import { ApprovalsPage, usePendingApprovals } from './features/approvals';
import { AuditPage } from './features/audit';
import { EventsPage } from './features/events';
import { KeysPage } from './features/keys';
import { AcceptPage, MembersPage } from './features/members';
import { TaskPage, TasksPage } from './features/tasks';
import { TrustedIssuersPage } from './features/trusted-issuers';
import { WebhookPage, WebhooksPage } from './features/webhooks';
import { Link, navigate, useRoute } from './router';
import { ErrorNotice, Loading } from './ui';
import './styles.css';

// The pages with charts and their chart library (uPlot) load on their own, when first shown: the other pages never wait for them.
const OverviewPage = lazy(() => import('./features/overview').then((module) => ({ default: module.OverviewPage })));
const UsagePage = lazy(() => import('./features/usage').then((module) => ({ default: module.UsagePage })));

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: sendToSignIn }),
  mutationCache: new MutationCache({ onError: sendToSignIn }),
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; a network failure might.
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

const NAV: [string, string][] = [
  ['/overview', 'Overview'],
  ['/identities', 'Identities'],
  ['/keys', 'API keys'],
  ['/trusted-issuers', 'Trusted issuers'],
  ['/admission', 'Admission'],
  ['/approvals', 'Approvals'],
  ['/tasks', 'Tasks'],
  ['/usage', 'Usage'],
  ['/webhooks', 'Webhooks'],
  ['/events', 'Events'],
  ['/members', 'Members'],
  ['/audit', 'Audit'],
];

function Shell() {
  const { path } = useRoute();
  const me = useMe();
  const signOut = useSignOut();
  const pending = usePendingApprovals(me.isSuccess);
  // On a phone the navigation folds behind a menu button; following a link folds it again.
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [path]);
  useEffect(() => {
    if (path === '/') {
      navigate('/overview', { replace: true });
    }
  }, [path]);
  // After a client-side navigation, focus moves to the new page's content (as a page load would).
  useEffect(() => {
    const main = document.getElementById('main');
    if (main && document.activeElement?.closest('nav, header')) {
      main.focus({ preventScroll: true });
    }
  }, [path]);
  if (path === '/signin') {
    return <SignInPage />;
  }
  if (path === '/signup') {
    return <SignUpPage />;
  }
  if (path === '/accept') {
    return <AcceptPage />;
  }
  if (me.isPending) {
    return <Loading label="Opening the Console…" />;
  }
  if (me.error) {
    if (me.error instanceof ApiError && me.error.status === 401) {
      return <Loading label="Redirecting to sign-in…" />;
    }
    return <ErrorNotice error={me.error} />;
  }
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <>
      <header className={menu ? 'top menu-open' : 'top'}>
        <a className="skip" href="#main">
          Skip to content
        </a>
        <span className="brand">A2A Console</span>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menu}
          aria-controls="main-nav"
          onClick={() => setMenu(!menu)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main">
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} aria-current={section === to ? 'page' : undefined}>
              {label}
              {to === '/approvals' && !!pending.data && (
                <>
                  {' '}
                  <span className="badge pending">
                    {pending.data}
                    <span className="visually-hidden"> pending</span>
                  </span>
                </>
              )}
            </Link>
          ))}
        </nav>
        <span className="who">
          <span className="muted">{me.data.organization.name}</span> · {me.data.user.email}
        </span>
        <button type="button" className="sign-out" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}

function Page({ path }: { path: string }) {
  const [, section, id] = path.split('/');
  const param = id ? decodeURIComponent(id) : undefined;
  switch (section) {
    case 'overview':
      return (
        <Suspense fallback={<Loading />}>
          <OverviewPage />
        </Suspense>
      );
    case 'identities':
      return param ? <IdentityPage handle={param} /> : <IdentitiesPage />;
    case 'keys':
      return <KeysPage />;
    case 'trusted-issuers':
      return <TrustedIssuersPage />;
    case 'admission':
      return <AdmissionPage />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'tasks':
      return param ? <TaskPage id={param} /> : <TasksPage />;
    case 'usage':
      return (
        <Suspense fallback={<Loading />}>
          <UsagePage />
        </Suspense>
      );
    case 'webhooks':
      return param ? <WebhookPage id={param} /> : <WebhooksPage />;
    case 'members':
      return <MembersPage />;
    case 'audit':
      return <AuditPage />;
    case 'events':
      return <EventsPage />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no such page. <Link to="/identities">Go to identities</Link>.
          </p>
        </>
      );
  }
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <Shell />
    </QueryClientProvider>
  </StrictMode>,
);
