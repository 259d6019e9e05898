import { sql, type Sql } from './sql';

/**
 * What a claiming loop holds in flight, by fair-share key (the events' ClaimLoop hands
 * it to its claim): how many items per destination and per organization, and the keys
 * already at their share.
 */
export interface HeldKeys {
  heldByDestination: ReadonlyMap<string, number>;
  heldByOrganization: ReadonlyMap<string, number>;
  fullDestinations: readonly string[];
  fullOrganizations: readonly string[];
}

/** How many due rows one claim reads beyond the destinations and organizations at their share, per slot asked for. */
const SCAN_PER_SLOT = 4;

/** A queue's due rows, as fairPick reads them. */
export interface FairQueue {
  /** The queue aliased `q` with the joins its keys need (`deliveries q LEFT JOIN webhooks cw …`). */
  from: Sql;
  /** Conditions on a due row beyond `q.status = 'pending' AND q.next_attempt_at <= now()` (sql.empty: none). */
  also: Sql;
  /** Each row's keys, and the share its destination and its organization may hold. */
  destination: Sql;
  organization: Sql;
  destinationShare: Sql;
  organizationShare: Sql;
  /** Rows picked before the others (the forwarder's cancels); omitted: oldest due first only. */
  first?: Sql;
}

/**
 * The fair pick of a queue's claim, shared by the webhook dispatcher's and the upstream
 * forwarder's (ClaimLoop): the CTEs ending in `picked (id, destination, organization)`,
 * which the claim locks and updates. The scan reads at most SCAN_PER_SLOT × `limit` due rows, oldest
 * first, skipping destinations and organizations at their share already (a backlog of
 * theirs cannot hide other work behind it); of those it picks up to `limit`, each
 * destination's and organization's oldest within the room its share still has.
 */
export function fairPick(queue: FairQueue, held: HeldKeys, limit: number): Sql {
  const destinations = [...held.heldByDestination];
  const organizations = [...held.heldByOrganization];
  const first = queue.first ? sql`${queue.first} AS goes_first, ` : sql.empty;
  return sql`WITH held_destination AS (SELECT * FROM unnest(${destinations.map(([key]) => key)}::text[], ${destinations.map(([, n]) => n)}::int[]) AS h(destination, n)),
         held_organization AS (SELECT * FROM unnest(${organizations.map(([key]) => key)}::text[], ${organizations.map(([, n]) => n)}::int[]) AS h(organization, n)),
    candidates AS (
      SELECT c.*, c.destination_share - COALESCE(hd.n, 0) AS destination_room, c.organization_share - COALESCE(ho.n, 0) AS organization_room
        FROM (SELECT q.id, q.next_attempt_at, ${first}${queue.destination} AS destination, ${queue.organization} AS organization,
                     ${queue.destinationShare} AS destination_share, ${queue.organizationShare} AS organization_share
                FROM ${queue.from}
               WHERE q.status = 'pending' AND q.next_attempt_at <= now() ${queue.also}
                 AND NOT (${queue.destination} = ANY(${[...held.fullDestinations]}::text[]))
                 AND NOT (${queue.organization} = ANY(${[...held.fullOrganizations]}::text[]))
               ORDER BY q.next_attempt_at
               LIMIT ${limit * SCAN_PER_SLOT}) c
        LEFT JOIN held_destination hd ON hd.destination = c.destination
        LEFT JOIN held_organization ho ON ho.organization = c.organization
    ), ranked AS (
      SELECT *,
             row_number() OVER (PARTITION BY destination ORDER BY next_attempt_at, id) AS nth_destination,
             row_number() OVER (PARTITION BY organization ORDER BY next_attempt_at, id) AS nth_organization
        FROM candidates
    ), picked AS (
      SELECT id, destination, organization FROM ranked
       WHERE nth_destination <= destination_room AND nth_organization <= organization_room
       ORDER BY ${queue.first ? sql`goes_first DESC, ` : sql.empty}next_attempt_at
       LIMIT ${limit}
    )`;
}
