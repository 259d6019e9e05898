import { Foundation1763700000000 } from './1763700000000-foundation';
import { IdentitiesDirectory1763700100000 } from './1763700100000-identities-directory';
import { Admission1763700200000 } from './1763700200000-admission';
import { Ledger1763700300000 } from './1763700300000-ledger';
import { Events1763700400000 } from './1763700400000-events';
import { ConsoleTeams1763700600000 } from './1763700600000-console-teams';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [
  Foundation1763700000000, IdentitiesDirectory1763700100000, Admission1763700200000, Ledger1763700300000, Events1763700400000,
  ConsoleTeams1763700600000,
];
