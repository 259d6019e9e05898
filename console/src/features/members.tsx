import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api';
import type { Me } from '../types';
import { ErrorNotice, Loading } from '../ui';

export function MembersPage() {
  const me = useQuery({ queryKey: ['me'], queryFn: () => call<Me>(api.GET('/api/v1/console/me')) });
  if (me.isPending) return <Loading />;
  if (me.error) return <ErrorNotice error={me.error} />;
  return (
    <>
      <h1>Organization</h1>
      <p>
        {me.data.organization.name} · you are {me.data.user.email}
      </p>
    </>
  );
}

export function AcceptPage() {
  return (
    <main className="narrow">
      <h1>Accept an invitation</h1>
    </main>
  );
}
