import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { fairPick, type HeldKeys } from '../database/fair-pick';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { JsonRow, RowOf } from '../database/row';
import { sql } from '../database/sql';
import { hourOf } from '../database/hour-bucket';
import type { WriteBatch } from '../database/write-batch';
import type { UpstreamBinding, UpstreamVersion } from './dto/set-upstream.dto';
import type { CardVerification } from './card-verification';
import type { IdentityUpstream, UpstreamAuthType } from './identity-upstream.entity';
import type { UpstreamForward } from './upstream-forward.entity';

/** An identity's upstream, as stored (the secret included: only the forwarder reads it). */
export interface UpstreamRecord {
  identityId: string;
  url: string;
  cardUrl: string | null;
  protocolVersion: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth: { type: UpstreamAuthType; header: string | null; value: string | null };
  /** The keys pinned for its card: a JWK Set, or where one is read; at most one of them. */
  trust: { jwks: { keys: object[] } | null; jwksUri: string | null };
  /** The last verification of its card; null until its card is read. */
  card: { verification: CardVerification; checkedAt: Date } | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One hour of the forwards to one upstream of an organization (docs/api.md §13, "The overview"). */
export interface ForwardHour {
  hour: number;
  handle: string;
  succeeded: number;
  failed: number;
  retrying: number;
  lastErrorAt: Date | null;
}

/** A forward this forwarder has claimed: `attempt` is the claim's number, which every later write of it names. */
export interface ClaimedForward {
  id: string;
  taskId: string;
  kind: 'message' | 'cancel';
  messageId: string;
  attempt: number;
  accepted: boolean;
  /** The W3C `traceparent` of the send or cancel that queued it (its upstream call continues that trace); null without tracing. */
  traceparent: string | null;
  /** When it was queued: its total time (UPSTREAM_FORWARD_MAX_MS) counts from then. */
  queuedAt: Date;
}

/** A forward claimed by the queue's claim, with the keys of its fair share: its upstream (the worker's identity) and the requester's organization. */
export interface ClaimedFairForward extends ClaimedForward {
  destination: string;
  organization: string;
}

/** The fair-share keys of a cancel are its upstream's and organization's with this prefix: cancels have shares of their own. */
const CANCEL_KEY = 'cancel ';

/** A message queued in the send's transaction: its forward (claimed already, or not), and the upstream it goes to. */
export interface QueuedForward {
  forward: ClaimedForward;
  claimed: boolean;
  /** The worker's upstream, read with the queueing (null: removed meanwhile). */
  upstream: UpstreamRecord | null;
}

type UpstreamRow = RowOf<IdentityUpstream>;
type ClaimRow = Pick<
  RowOf<UpstreamForward>,
  'id' | 'task_id' | 'kind' | 'message_id' | 'attempts' | 'accepted' | 'traceparent' | 'created_at'
>;
type QueuedRow = ClaimRow & Pick<RowOf<UpstreamForward>, 'in_flight'>;

const toClaimed = (row: ClaimRow): ClaimedForward => ({
  id: row.id,
  taskId: row.task_id,
  kind: row.kind,
  messageId: row.message_id,
  attempt: row.attempts,
  accepted: row.accepted,
  traceparent: row.traceparent,
  queuedAt: row.created_at,
});

const toRecord = (row: UpstreamRow): UpstreamRecord => ({
  identityId: row.identity_id,
  url: row.url,
  cardUrl: row.card_url,
  protocolVersion: row.protocol_version,
  binding: row.binding,
  streaming: row.streaming,
  auth: { type: row.auth_type, header: row.auth_header, value: row.auth_value },
  trust: { jwks: row.trusted_jwks, jwksUri: row.trusted_jwks_uri },
  card:
    row.card_verification && row.card_checked_at
      ? {
          verification: {
            status: row.card_verification,
            kid: row.card_verified_kid,
            error: row.card_verification_error,
          },
          checkedAt: row.card_checked_at,
        }
      : null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const UPSTREAM_COLUMNS = sql.raw(
  `identity_id, url, card_url, protocol_version, binding, streaming, auth_type, auth_header, auth_value, trusted_jwks,
  trusted_jwks_uri, card_verification, card_verified_kid, card_verification_error, card_checked_at, created_at, updated_at`,
);

/** The forward's row while this claim still holds it (another claim counts another attempt). */
const holds = (forward: Pick<ClaimedForward, 'id' | 'attempt'>) =>
  sql`id = ${forward.id} AND attempts = ${forward.attempt} AND in_flight`;

const EXAMPLE_FORWARD = { id: DummyValue.UUID, attempt: 1 };

/** Upstream's tables: identity_upstreams and the forwarder's queue, upstream_forwards. */
@Injectable()
export class UpstreamRepository {
  constructor(private readonly db: Database) {}

  // identity_upstreams

  /** The upstream of an identity, with its secret; null when none is set. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async upstreamOf(identityId: string, tx?: Tx): Promise<UpstreamRecord | null> {
    const row = await this.db.one<UpstreamRow>(
      sql`SELECT ${UPSTREAM_COLUMNS} FROM identity_upstreams WHERE identity_id = ${identityId}`,
      tx,
    );
    return row ? toRecord(row) : null;
  }

  /** Sets an identity's upstream (a new one, or replacing the one it has). */
  @GenerateSql({
    params: [
      {
        identityId: DummyValue.UUID,
        url: 'https://agent.example/a2a',
        cardUrl: null,
        protocolVersion: '1.0',
        binding: 'JSONRPC',
        streaming: false,
        auth: { type: 'none', header: null, value: null },
        trust: { jwks: null, jwksUri: 'https://agent.example/jwks.json' },
        card: null,
      },
    ],
  })
  async setUpstream(
    upstream: Omit<UpstreamRecord, 'createdAt' | 'updatedAt' | 'card'> & { card: CardVerification | null },
    tx?: Tx,
  ): Promise<UpstreamRecord> {
    const u = upstream;
    const v = u.card;
    const row = await this.db.one<UpstreamRow>(
      sql`INSERT INTO identity_upstreams AS u (identity_id, url, card_url, protocol_version, binding, streaming, auth_type, auth_header, auth_value,
                                              trusted_jwks, trusted_jwks_uri, card_verification, card_verified_kid, card_verification_error, card_checked_at)
          VALUES (${u.identityId}, ${u.url}, ${u.cardUrl}, ${u.protocolVersion}, ${u.binding}, ${u.streaming},
                  ${u.auth.type}, ${u.auth.header}, ${u.auth.value}, ${u.trust.jwks ? JSON.stringify(u.trust.jwks) : null}::jsonb,
                  ${u.trust.jwksUri}, ${v?.status ?? null}, ${v?.kid ?? null}, ${v?.error ?? null},
                  CASE WHEN ${v?.status ?? null}::text IS NULL THEN NULL ELSE now() END)
          ON CONFLICT (identity_id) DO UPDATE SET url = EXCLUDED.url, card_url = EXCLUDED.card_url, protocol_version = EXCLUDED.protocol_version,
            binding = EXCLUDED.binding, streaming = EXCLUDED.streaming, auth_type = EXCLUDED.auth_type, auth_header = EXCLUDED.auth_header,
            auth_value = EXCLUDED.auth_value, trusted_jwks = EXCLUDED.trusted_jwks, trusted_jwks_uri = EXCLUDED.trusted_jwks_uri,
            card_verification = EXCLUDED.card_verification, card_verified_kid = EXCLUDED.card_verified_kid,
            card_verification_error = EXCLUDED.card_verification_error, card_checked_at = EXCLUDED.card_checked_at, updated_at = now()
          RETURNING ${UPSTREAM_COLUMNS}`,
      tx,
    );
    return toRecord(row!);
  }

  /** Records a verification of the upstream's card (its import, docs/api.md §14); null when it has no upstream. */
  @GenerateSql({ params: [DummyValue.UUID, { status: 'verified', kid: 'key-1', error: null }] })
  async recordCardVerification(
    identityId: string,
    verification: CardVerification,
    tx?: Tx,
  ): Promise<UpstreamRecord | null> {
    const row = await this.db.one<UpstreamRow>(
      sql`UPDATE identity_upstreams
             SET card_verification = ${verification.status}, card_verified_kid = ${verification.kid},
                 card_verification_error = ${verification.error}, card_checked_at = now()
           WHERE identity_id = ${identityId}
          RETURNING ${UPSTREAM_COLUMNS}`,
      tx,
    );
    return row ? toRecord(row) : null;
  }

  /**
   * Read model: whether the organization of the identity requires a verified upstream card
   * before forwarding (docs/api.md §14) — the forwarder asks once per message it sends, one
   * primary-key join, rather than asking the console module for the identity's organization.
   */
  @GenerateSql({ params: [DummyValue.UUID] })
  async requiresVerifiedCard(identityId: string): Promise<boolean> {
    const row = await this.db.one<{ required: boolean }>(
      sql`SELECT o.require_verified_upstream_cards AS required
            FROM identities i JOIN organizations o ON o.id = i.organization_id
           WHERE i.id = ${identityId}`,
    );
    return row?.required ?? false;
  }

  /** Removes an identity's upstream; false when it had none. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async removeUpstream(identityId: string, tx?: Tx): Promise<UpstreamRecord | null> {
    const row = await this.db.one<UpstreamRow>(
      sql`DELETE FROM identity_upstreams WHERE identity_id = ${identityId} RETURNING ${UPSTREAM_COLUMNS}`,
      tx,
    );
    return row ? toRecord(row) : null;
  }

  // upstream_forwards

  /**
   * In the send's unit of work (its transaction, or its write batch): when the worker
   * has an upstream, queue the requester's message for it (once per message id);
   * `queued` gets the forward with that upstream after the commit, when something was
   * queued. With `claimLeaseMs`, the forward is queued claimed already — its first
   * attempt counted, leased for `claimLeaseMs` from the send's start — unless an
   * earlier message of the task is still pending (a follow-up waits for its turn, as
   * in `claim`): the send's commit is then the claim. One INSERT … SELECT (the
   * upstream read by a subquery of its RETURNING), so it can be a member of a batch.
   */
  @GenerateSql({
    params: [DummyValue.UUID, DummyValue.UUID_2, DummyValue.STRING, null, 30_000, undefined, () => undefined],
  })
  async queueMessage(
    taskId: string,
    workerIdentityId: string,
    messageId: string,
    traceparent: string | null,
    claimLeaseMs: number | null,
    unit: Tx | WriteBatch | undefined,
    queued: (forward: QueuedForward) => void,
  ): Promise<void> {
    await this.db.write(
      [
        sql`INSERT INTO upstream_forwards (task_id, kind, message_id, traceparent, attempts, in_flight, next_attempt_at)
            SELECT ${taskId}, 'message', ${messageId}, ${traceparent}, CASE WHEN c.claimed THEN 1 ELSE 0 END, c.claimed,
                   CASE WHEN c.claimed THEN now() + make_interval(secs => ${claimLeaseMs}::float8 / 1000) ELSE now() END
              FROM identity_upstreams u,
                   LATERAL (SELECT ${claimLeaseMs}::float8 IS NOT NULL AND NOT EXISTS (
                              SELECT 1 FROM upstream_forwards e WHERE e.task_id = ${taskId} AND e.status = 'pending' AND e.kind = 'message'
                            ) AS claimed) c
             WHERE u.identity_id = ${workerIdentityId}
            ON CONFLICT (task_id, kind, message_id) DO NOTHING
            RETURNING id, task_id, kind, message_id, attempts, accepted, traceparent, created_at, in_flight,
                      (SELECT to_jsonb(u) FROM (SELECT ${UPSTREAM_COLUMNS} FROM identity_upstreams WHERE identity_id = ${workerIdentityId}) u) AS upstream`,
      ],
      unit,
      ([rows]) => {
        const row = rows[0] as (QueuedRow & { upstream: JsonRow<UpstreamRow> | null }) | undefined;
        if (!row) {
          return;
        }
        const upstream = row.upstream
          ? toRecord({
              ...row.upstream,
              created_at: new Date(row.upstream.created_at),
              updated_at: new Date(row.upstream.updated_at),
            })
          : null;
        queued({
          forward: toClaimed({ ...row, created_at: new Date(row.created_at) }),
          claimed: row.in_flight,
          upstream,
        });
      },
    );
  }

  /** In the cancel's transaction: queue the cancel when the worker has an upstream. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2, null] })
  async queueCancel(taskId: string, workerIdentityId: string, traceparent: string | null, tx?: Tx): Promise<boolean> {
    const rows = await this.db.rows(
      sql`INSERT INTO upstream_forwards (task_id, kind, message_id, traceparent)
          SELECT ${taskId}, 'cancel', '', ${traceparent} FROM identity_upstreams WHERE identity_id = ${workerIdentityId}
          ON CONFLICT (task_id, kind, message_id) DO NOTHING RETURNING id`,
      tx,
    );
    return rows.length > 0;
  }

  /**
   * Read model: the claim reads each forward's task (the ledger's `tasks`) for the keys
   * of its fair share — its upstream (the worker's identity) and the requester's
   * organization — in the same statement, as the delivery claim reads its targets.
   *
   * Claims due forwards: the oldest of each task's pending messages only (a follow-up
   * waits for the turn before it), and cancels whenever due, each within the room its
   * upstream and organization have left of their share of this forwarder's slots
   * (fairPick, the delivery claim's too). Cancels have shares of their own (keys
   * prefixed CANCEL_KEY, `cancelShare`) and come first: a cancel never waits behind the
   * messages it ends, and cancels cannot take every slot either. Rows another forwarder
   * holds are skipped; the claim counts the attempt and leases the row for `leaseMs`,
   * so a forwarder that dies leaves its claim to fall due again.
   */
  @GenerateSql({
    params: [
      20,
      30_000,
      { heldByDestination: new Map(), heldByOrganization: new Map(), fullDestinations: [], fullOrganizations: [] },
      { share: 10, cancelShare: 2 },
    ],
  })
  async claim(
    limit: number,
    leaseMs: number,
    held: HeldKeys,
    shares: { share: number; cancelShare: number },
  ): Promise<ClaimedFairForward[]> {
    const keyOf = (column: string) =>
      sql`CASE WHEN q.kind = 'cancel' THEN ${CANCEL_KEY} || ${sql.raw(column)}::text ELSE ${sql.raw(column)}::text END`;
    const share = sql`CASE WHEN q.kind = 'cancel' THEN ${shares.cancelShare}::int ELSE ${shares.share}::int END`;
    const rows = await this.db.rows<ClaimRow & { destination: string; organization: string }>(
      sql`UPDATE upstream_forwards f
             SET attempts = f.attempts + 1, in_flight = true, next_attempt_at = now() + make_interval(secs => ${leaseMs}::float / 1000),
                 updated_at = now()
            FROM (
              ${fairPick(
                {
                  from: sql`upstream_forwards q JOIN tasks t ON t.id = q.task_id`,
                  also: sql`AND (q.kind = 'cancel' OR NOT EXISTS (
                              SELECT 1 FROM upstream_forwards e
                               WHERE e.task_id = q.task_id AND e.status = 'pending' AND e.kind = 'message' AND e.seq < q.seq))`,
                  destination: keyOf('t.worker_identity_id'),
                  organization: keyOf('t.requester_organization_id'),
                  destinationShare: share,
                  organizationShare: share,
                  first: sql`q.kind = 'cancel'`,
                },
                held,
                limit,
              )}
              SELECT q.id, p.destination, p.organization
                FROM upstream_forwards q JOIN picked p ON p.id = q.id
               WHERE q.status = 'pending' AND q.next_attempt_at <= now()
                 FOR UPDATE OF q SKIP LOCKED) due
           WHERE f.id = due.id
       RETURNING f.id, f.task_id, f.kind, f.message_id, f.attempts, f.accepted, f.traceparent, f.created_at, due.destination, due.organization`,
    );
    return rows.map((row) => ({ ...toClaimed(row), destination: row.destination, organization: row.organization }));
  }

  /** Extends the lease of a forward this claim still holds; false when it holds it no more (ended elsewhere: a cancel). */
  @GenerateSql({ params: [EXAMPLE_FORWARD, 30_000] })
  async renewLease(forward: Pick<ClaimedForward, 'id' | 'attempt'>, leaseMs: number): Promise<boolean> {
    const renewed = await this.db.execute(
      sql`UPDATE upstream_forwards SET next_attempt_at = now() + make_interval(secs => ${leaseMs}::float / 1000) WHERE ${holds(forward)}`,
    );
    return renewed > 0;
  }

  /**
   * A canceled task's messages take no more forwarding (the cancel has been forwarded):
   * each pending one ends, held or not; a forwarder holding one learns it at its next
   * lease renewal. Returns how many ended.
   */
  @GenerateSql({ params: [DummyValue.UUID] })
  async endMessages(taskId: string): Promise<number> {
    return this.db.execute(
      sql`UPDATE upstream_forwards SET status = 'succeeded', in_flight = false, next_attempt_at = NULL, updated_at = now()
           WHERE task_id = ${taskId} AND kind = 'message' AND status = 'pending'`,
    );
  }

  /** A forward claimed (by its send, or a claim) that this forwarder has no room for after all: unclaimed, due now, its attempt not counted. */
  @GenerateSql({ params: [EXAMPLE_FORWARD] })
  async release(forward: Pick<ClaimedForward, 'id' | 'attempt'>): Promise<void> {
    await this.db.execute(
      sql`UPDATE upstream_forwards SET attempts = attempts - 1, in_flight = false, next_attempt_at = now(), updated_at = now()
           WHERE ${holds(forward)}`,
    );
  }

  /** The upstream has answered the message: a retry follows its task instead of sending it again (in the answer's transaction, or on its own). */
  @GenerateSql({ params: [EXAMPLE_FORWARD] })
  async markAccepted(forward: Pick<ClaimedForward, 'id' | 'attempt'>, unit?: Tx | WriteBatch): Promise<void> {
    await this.db.write([sql`UPDATE upstream_forwards SET accepted = true WHERE ${holds(forward)}`], unit);
  }

  /** Ends a forward for good. */
  @GenerateSql({ params: [EXAMPLE_FORWARD, 'failed', DummyValue.STRING] })
  async finish(
    forward: Pick<ClaimedForward, 'id' | 'attempt'>,
    status: 'succeeded' | 'failed',
    error: string | null,
  ): Promise<void> {
    await this.db.execute(
      sql`UPDATE upstream_forwards SET status = ${status}, in_flight = false, next_attempt_at = NULL, last_error = ${error}, updated_at = now()
           WHERE ${holds(forward)}`,
    );
  }

  /**
   * An attempt's outcome for the directory's availability (docs/api.md §4): a failure
   * counts one more in a row, a success starts again from none (and writes nothing when
   * there were none).
   */
  @GenerateSql(
    { name: 'failed', params: [DummyValue.UUID, false] },
    { name: 'succeeded', params: [DummyValue.UUID, true] },
  )
  async recordAttempt(identityId: string, succeeded: boolean): Promise<void> {
    await this.db.execute(
      succeeded
        ? sql`UPDATE identity_upstreams SET failed_forwards = 0 WHERE identity_id = ${identityId} AND failed_forwards > 0`
        : sql`UPDATE identity_upstreams SET failed_forwards = failed_forwards + 1 WHERE identity_id = ${identityId}`,
    );
  }

  /** A failed attempt: the forward falls due again after `delayMs`. */
  @GenerateSql({ params: [EXAMPLE_FORWARD, 1000, DummyValue.STRING] })
  async retryLater(forward: Pick<ClaimedForward, 'id' | 'attempt'>, delayMs: number, error: string): Promise<void> {
    await this.db.execute(
      sql`UPDATE upstream_forwards
             SET in_flight = false, next_attempt_at = now() + make_interval(secs => ${delayMs}::float / 1000), last_error = ${error}, updated_at = now()
           WHERE ${holds(forward)}`,
    );
  }

  /** Whether a message of the task is pending after the upstream accepted it (its task id may yet come). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async hasAcceptedPendingMessage(taskId: string): Promise<boolean> {
    const rows = await this.db.rows(
      sql`SELECT 1 FROM upstream_forwards WHERE task_id = ${taskId} AND kind = 'message' AND status = 'pending' AND accepted`,
    );
    return rows.length > 0;
  }

  /**
   * Read model: forwards have no organization of their own; the organization's tasks
   * (the ledger's `tasks`, by `ix_tasks_worker_organization` over the window) lead to
   * their forwards (by `uq_upstream_forwards_message`) in one statement.
   *
   * The forwards of the organization's tasks created since `since`, per hour of the
   * forward (hours since the Unix epoch, UTC) and upstream (the worker's handle):
   * succeeded, failed for good, retrying (pending after an error).
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.DATE] })
  async forwardsPerHour(organizationId: string, since: Date): Promise<ForwardHour[]> {
    return this.db.rows<ForwardHour>(sql`
      SELECT ${hourOf('f.created_at')} AS hour, t.worker_handle AS handle,
             count(*) FILTER (WHERE f.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE f.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE f.status = 'pending' AND f.last_error IS NOT NULL)::int AS retrying,
             max(f.updated_at) FILTER (WHERE f.last_error IS NOT NULL) AS "lastErrorAt"
        FROM tasks t JOIN upstream_forwards f ON f.task_id = t.id
       WHERE t.worker_organization_id = ${organizationId} AND t.created_at >= ${since} AND f.created_at >= ${since}
       GROUP BY 1, 2`);
  }
}
