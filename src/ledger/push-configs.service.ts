import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, notFound } from '../common/app-error';
import type { Tx } from '../database/database';
import { checkDestinationUrl } from '../events/address-policy';
import type { A2AVersion } from './entities/push-notification-config.entity';
import { PushConfigsRepository } from './push-configs.repository';
import { LedgerService } from './ledger.service';
import type { PushConfigInput, PushConfigRecord, TaskHead, TaskPair } from './task-records';

/** At most this many push notification configs per task; one more is refused with `push_config_limit` (docs/api.md §9). */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;

/**
 * A2A push notification configs: owned by the task's requester, so every operation
 * goes through the (requester, worker) pair like the rest of the protocol. Stored
 * here; the events module delivers them.
 */
@Injectable()
export class PushConfigService {
  constructor(
    private readonly repository: PushConfigsRepository,
    private readonly ledger: LedgerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  set(pair: TaskPair, taskId: string, input: PushConfigInput, version: A2AVersion): Promise<PushConfigRecord> {
    return this.ledger.write(async (tx) => {
      const journal = await this.ledger.lockPairTask(tx, pair, taskId);
      return this.save(tx, journal.task, input, version);
    });
  }

  /** Inside a transaction that holds the task's row lock (set, or a send that carries a config). */
  async save(tx: Tx, task: TaskHead, input: PushConfigInput, version: A2AVersion): Promise<PushConfigRecord> {
    // The webhook address rules (docs/api.md §8, `invalid_push_url` in §9); addresses are checked again when sending.
    checkDestinationUrl(input.url, this.config.webhooksAllowPrivateNetworks, 'invalid_push_url');
    if (input.id.length > 200) {
      throw badRequest('invalid_push_config', 'A push notification config id has at most 200 characters.');
    }
    if (input.token.length > 1000) {
      throw badRequest('invalid_push_config', 'A push notification token has at most 1000 characters.');
    }
    const id = input.id || randomUUID();
    const others = await this.repository.countOtherPushConfigs(task.id, id, tx);
    if (others >= MAX_PUSH_CONFIGS_PER_TASK) {
      throw badRequest(
        'push_config_limit',
        `A task can have at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs.`,
      );
    }
    return this.repository.putPushConfig(task.id, id, task.requester.id, input, version, tx);
  }

  async get(pair: TaskPair, taskId: string, id: string): Promise<PushConfigRecord> {
    const [record] = await this.configs(pair, taskId, id);
    if (!record) {
      throw notFound('push_config_not_found', 'No push notification config with that id on this task.');
    }
    return record;
  }

  async list(pair: TaskPair, taskId: string): Promise<PushConfigRecord[]> {
    return this.configs(pair, taskId, null);
  }

  /** Deleting a config that does not exist is not an error (the task must exist). */
  async delete(pair: TaskPair, taskId: string, id: string): Promise<void> {
    await this.ledger.write(async (tx) => {
      const journal = await this.ledger.lockPairTask(tx, pair, taskId);
      await this.repository.deletePushConfig(journal.task.id, id, tx);
    });
  }

  private async configs(pair: TaskPair, taskId: string, id: string | null): Promise<PushConfigRecord[]> {
    const task = await this.ledger.find(pair, taskId, { historyLength: 0, artifacts: false });
    if (!task) {
      throw notFound('task_not_found', 'No such task between this requester and this worker.');
    }
    return this.repository.pushConfigs(task.id, id);
  }
}
