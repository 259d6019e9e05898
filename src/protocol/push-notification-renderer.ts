import { Injectable, OnModuleInit } from '@nestjs/common';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import {
  PushNotifications,
  type PushNotification,
  type PushNotificationRenderer,
  type PushVersion,
} from '../events/push-notifications';
import { LedgerService } from '../ledger/ledger.service';
import { toA2ATask, toStreamResponse } from './a2a-mapping';

/**
 * A2A push notifications, rendered as the SDK's own senders do for the version the
 * config was set with. v1.0: the StreamResponse of that one update (a status or an
 * artifact update), `application/a2a+json`. v0.3: the Task as it is when sent
 * (status, artifacts; its history is left out — `tasks/get` has it), `application/json`.
 * The events module delivers them (retries, SSRF checks, the attempt log); it asks
 * this renderer for the body when it sends.
 */
@Injectable()
export class A2APushNotificationRenderer implements PushNotificationRenderer, OnModuleInit {
  private readonly serializers = {
    '1.0': new V1PushNotificationSerializer(),
    '0.3': new V03PushNotificationSerializer(),
  };

  constructor(
    private readonly ledger: LedgerService,
    private readonly push: PushNotifications,
  ) {}

  onModuleInit(): void {
    this.push.use(this);
  }

  async render(taskId: string, seq: number, version: PushVersion): Promise<PushNotification> {
    const task = await this.ledger.taskById(taskId, { historyLength: 0, artifacts: true });
    if (!task) {
      throw new Error(`task ${taskId} does not exist`);
    }
    const [event] = await this.ledger.events(task, seq - 1, 1);
    const update = event?.seq === seq ? toStreamResponse(task, event) : null;
    if (!update) {
      throw new Error(`task ${taskId} has no update numbered ${seq}`);
    }
    return this.serializers[version].serialize(update, toA2ATask(task));
  }
}
