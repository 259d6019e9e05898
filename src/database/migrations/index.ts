import { Foundation1763700000000 } from './1763700000000-foundation';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [Foundation1763700000000];
