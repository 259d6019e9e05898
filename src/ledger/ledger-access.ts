import type { Principal } from '../auth/principal';
import { isUuid } from '../common/parse-id.pipe';
import { sql, type Sql } from '../database/sql';
import type { ParticipantRow } from './task-records';

/**
 * Who may see which ledger rows (CONTRACT §7), in one place. A claimed agent key
 * stands on its identity's side of a task; an admin key or a Console user on the
 * side of every identity of its organization. A task or context is visible when the
 * caller stands on its requester's or its worker's side; anything else is "not
 * found". Tasks and contexts share the participant columns, so one builder serves
 * both (`alias` is the table's alias in the query).
 */
export type LedgerSide = { kind: 'identity'; identityId: string } | { kind: 'organization'; organizationId: string };
export type Role = 'requester' | 'worker';

export function sideOf(principal: Principal): LedgerSide {
  return principal.kind === 'agent'
    ? { kind: 'identity', identityId: principal.identity.id }
    : { kind: 'organization', organizationId: principal.organizationId };
}

/** Whether the caller stands on this role's side of a row. */
export function standsOn(side: LedgerSide, row: ParticipantRow, role: Role): boolean {
  return side.kind === 'identity'
    ? row[`${role}_identity_id`] === side.identityId
    : row[`${role}_organization_id`] === side.organizationId;
}

export interface SideFilter {
  /** Only rows where the caller is the requester, or the worker. */
  role?: Role;
  /** Narrows the caller's side to one identity (handle or id). */
  identity?: string;
  /** The other side: one identity (handle or id). */
  peer?: string;
}

/** The SQL condition for "visible to `side`, and matching `filter`", over the table aliased `alias`. */
export function visibleWhere(alias: string, side: LedgerSide, filter: SideFilter): Sql {
  const own = side.kind === 'identity' ? side.identityId : side.organizationId;
  const identity = filter.identity === undefined ? null : identityMatch(filter.identity);
  const peer = filter.peer === undefined ? null : identityMatch(filter.peer);
  const mine = (role: Role) => {
    const column = sql.raw(side.kind === 'identity' ? `${alias}.${role}_identity_id` : `${alias}.${role}_organization_id`);
    return [sql`${column} = ${own}`, ...(identity ? [identity(alias, role)] : [])];
  };
  const theirs = (role: Role) => (peer ? [peer(alias, role)] : []);
  const asRole = (role: Role) => sql`(${sql.join([...mine(role), ...theirs(role === 'requester' ? 'worker' : 'requester')], ' AND ')})`;
  return filter.role ? asRole(filter.role) : sql`(${asRole('requester')} OR ${asRole('worker')})`;
}

function identityMatch(value: string): (alias: string, role: Role) => Sql {
  return isUuid(value)
    ? (alias, role) => sql`${sql.raw(`${alias}.${role}_identity_id`)} = ${value.toLowerCase()}::uuid`
    : (alias, role) => sql`${sql.raw(`${alias}.${role}_handle`)} = ${value}`;
}
