import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { PERMISSIONS_SNAPSHOT, renderPermissions, resolvedPermissions } from './permissions';

describe('permission declarations', () => {
  it('every route and gRPC method resolves to a known surface', () => {
    const { http, grpc } = resolvedPermissions();
    expect(Object.keys(http).length).toBeGreaterThan(50);
    expect(Object.keys(grpc).length).toBeGreaterThan(10);
  });

  it('match the checked-in snapshot (test/authz/permissions.snapshot.json)', () => {
    const actual = renderPermissions(resolvedPermissions());
    if (process.env.UPDATE_SNAPSHOT === '1') {
      writeFileSync(PERMISSIONS_SNAPSHOT, actual);
    }
    // Expected: the checked-in file; received: what the decorators say now.
    expect(actual).toEqual(
      existsSync(PERMISSIONS_SNAPSHOT)
        ? readFileSync(PERMISSIONS_SNAPSHOT, 'utf8')
        : '(no snapshot: run with UPDATE_SNAPSHOT=1)',
    );
  });
});
