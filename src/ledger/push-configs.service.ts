import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, notFound } from '../common/app-error';
import { checkDestinationUrl } from '../events/address-policy';
import type { A2AVersion } from './entities/push-notification-config.entity';
import { LedgerService, type TaskPair } from './ledger.service';
import type { TaskRow } from './task-records';

/** CONTRACT §5. */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;

export interface PushConfigInput {
  /** Empty: the service picks one. The same id on the same task replaces the config. */
  id: string;
  url: string;
  token: string;
  authentication: { scheme: string; credentials: string } | null;
}

export interface PushConfigRecord extends PushConfigInput {
  taskId: string;
  protocolVersion: A2AVersion;
}

interface ConfigRow {
  task_id: string;
  config_id: string;
  url: string;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  protocol_version: A2AVersion;
}

/**
 * A2A push notification configs: owned by the task's requester, so every operation
 * goes through the (requester, worker) pair like the rest of the protocol. Stored
 * here; the events module delivers them.
 */
@Injectable()
export class PushConfigService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ledger: LedgerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  set(pair: TaskPair, taskId: string, input: PushConfigInput, version: A2AVersion): Promise<PushConfigRecord> {
    return this.dataSource.transaction(async (em) => {
      const journal = await this.ledger.lockPairTask(em, pair, taskId);
      return this.save(em, journal.task, input, version);
    });
  }

  /** Inside a transaction that holds the task's row lock (set, or a send that carries a config). */
  async save(em: EntityManager, task: TaskRow, input: PushConfigInput, version: A2AVersion): Promise<PushConfigRecord> {
    // CONTRACT §5: URL rules as for webhooks; addresses are checked again when sending.
    checkDestinationUrl(input.url, this.config.webhooksAllowPrivateNetworks, 'invalid_push_url');
    if (input.id.length > 200) throw badRequest('invalid_push_config', 'A push notification config id has at most 200 characters.');
    if (input.token.length > 1000) throw badRequest('invalid_push_config', 'A push notification token has at most 1000 characters.');
    const id = input.id || randomUUID();
    const [{ others }] = (await em.query(
      `SELECT count(*)::int AS others FROM push_notification_configs WHERE task_id = $1 AND config_id <> $2`, [task.id, id],
    )) as Array<{ others: number }>;
    if (others >= MAX_PUSH_CONFIGS_PER_TASK) {
      throw badRequest('push_config_limit', `A task can have at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs.`);
    }
    const [row] = (await em.query(
      `INSERT INTO push_notification_configs (task_id, config_id, owner_identity_id, url, token, authentication, protocol_version)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
       ON CONFLICT (task_id, config_id) DO UPDATE
          SET url = EXCLUDED.url, token = EXCLUDED.token, authentication = EXCLUDED.authentication,
              protocol_version = EXCLUDED.protocol_version, updated_at = now()
       RETURNING task_id, config_id, url, token, authentication, protocol_version`,
      [task.id, id, task.requester_identity_id, input.url, input.token || null,
        input.authentication ? JSON.stringify(input.authentication) : null, version],
    )) as ConfigRow[];
    return toRecord(row);
  }

  async get(pair: TaskPair, taskId: string, id: string): Promise<PushConfigRecord> {
    const [row] = await this.rows(pair, taskId, 'AND config_id = $2', [id]);
    if (!row) throw notFound('push_config_not_found', 'No push notification config with that id on this task.');
    return toRecord(row);
  }

  async list(pair: TaskPair, taskId: string): Promise<PushConfigRecord[]> {
    return (await this.rows(pair, taskId, '', [])).map(toRecord);
  }

  /** Deleting a config that does not exist is not an error (the task must exist). */
  async delete(pair: TaskPair, taskId: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      const journal = await this.ledger.lockPairTask(em, pair, taskId);
      await em.query(`DELETE FROM push_notification_configs WHERE task_id = $1 AND config_id = $2`, [journal.task.id, id]);
    });
  }

  private async rows(pair: TaskPair, taskId: string, condition: string, params: unknown[]): Promise<ConfigRow[]> {
    const task = await this.ledger.find(pair, taskId, { historyLength: 0, artifacts: false });
    if (!task) throw notFound('task_not_found', 'No such task between this requester and this worker.');
    return (await this.dataSource.query(
      `SELECT task_id, config_id, url, token, authentication, protocol_version FROM push_notification_configs
        WHERE task_id = $1 ${condition} ORDER BY created_at, config_id`,
      [task.id, ...params],
    )) as ConfigRow[];
  }
}

function toRecord(row: ConfigRow): PushConfigRecord {
  return {
    taskId: row.task_id,
    id: row.config_id,
    url: row.url,
    token: row.token ?? '',
    authentication: row.authentication,
    protocolVersion: row.protocol_version,
  };
}
