import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import type { A2AVersion, PushNotificationConfig } from './entities/push-notification-config.entity';
import { type PushConfigInput, type PushConfigRecord } from './task-records';

type PushConfigRow = Pick<
  RowOf<PushNotificationConfig>,
  'task_id' | 'config_id' | 'url' | 'token' | 'authentication' | 'protocol_version'
>;

const U = DummyValue.UUID;

/** The push_notification_configs table: a task's A2A push notification configs. */
@Injectable()
export class PushConfigsRepository {
  constructor(private readonly db: Database) {}

  /** How many configs the task has besides `configId`. */
  @GenerateSql({ params: [U, DummyValue.STRING] })
  async countOtherPushConfigs(taskId: string, configId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ others: number }>(
      sql`
      SELECT count(*)::int AS others FROM push_notification_configs WHERE task_id = ${taskId} AND config_id <> ${configId}`,
      tx,
    );
    return row!.others;
  }

  /** Creates the config, or replaces the task's config with that id. */
  @GenerateSql({
    params: [
      U,
      DummyValue.STRING,
      U,
      { id: DummyValue.STRING, url: 'https://example.com/hook', token: '', authentication: null },
      '1.0',
    ],
  })
  async putPushConfig(
    taskId: string,
    configId: string,
    ownerIdentityId: string,
    input: PushConfigInput,
    version: A2AVersion,
    tx?: Tx,
  ): Promise<PushConfigRecord> {
    const row = await this.db.one<PushConfigRow>(
      sql`
      INSERT INTO push_notification_configs (task_id, config_id, owner_identity_id, url, token, authentication, protocol_version)
      VALUES (${taskId}, ${configId}, ${ownerIdentityId}, ${input.url}, ${input.token || null},
              ${input.authentication ? JSON.stringify(input.authentication) : null}::jsonb, ${version})
      ON CONFLICT (task_id, config_id) DO UPDATE
         SET url = EXCLUDED.url, token = EXCLUDED.token, authentication = EXCLUDED.authentication,
             protocol_version = EXCLUDED.protocol_version, updated_at = now()
      RETURNING task_id, config_id, url, token, authentication, protocol_version`,
      tx,
    );
    return pushConfigRecord(row!);
  }

  /** The task's configs (the one with `configId`, when given), oldest first. */
  @GenerateSql({ name: 'all', params: [U, null] }, { name: 'one', params: [U, DummyValue.STRING] })
  async pushConfigs(taskId: string, configId: string | null): Promise<PushConfigRecord[]> {
    const one = configId === null ? sql.empty : sql`AND config_id = ${configId}`;
    const rows = await this.db.rows<PushConfigRow>(sql`
      SELECT task_id, config_id, url, token, authentication, protocol_version FROM push_notification_configs
       WHERE task_id = ${taskId} ${one} ORDER BY created_at, config_id`);
    return rows.map(pushConfigRecord);
  }

  @GenerateSql({ params: [U, DummyValue.STRING] })
  async deletePushConfig(taskId: string, configId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`DELETE FROM push_notification_configs WHERE task_id = ${taskId} AND config_id = ${configId}`,
      tx,
    );
  }
}

function pushConfigRecord(row: PushConfigRow): PushConfigRecord {
  return {
    taskId: row.task_id,
    id: row.config_id,
    url: row.url,
    token: row.token ?? '',
    authentication: row.authentication,
    protocolVersion: row.protocol_version,
  };
}
