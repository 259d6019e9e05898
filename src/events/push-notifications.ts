import { Injectable } from '@nestjs/common';

/** The A2A version a push notification config was set with: it decides the payload. */
export type PushVersion = '0.3' | '1.0';

/** A rendered A2A push notification. */
export interface PushNotification {
  body: string;
  contentType: string;
}

/**
 * Renders the notification for event `seq` of a task in the A2A shape of `version`.
 * The protocol module knows those shapes (and the events module must not import it:
 * the ledger below it emits events), so it registers the renderer at start.
 */
export interface PushNotificationRenderer {
  render(taskId: string, seq: number, version: PushVersion): Promise<PushNotification>;
}

/** Where the protocol module's renderer is registered and the dispatcher finds it. */
@Injectable()
export class PushNotifications {
  private renderer: PushNotificationRenderer | null = null;

  use(renderer: PushNotificationRenderer): void {
    this.renderer = renderer;
  }

  render(taskId: string, seq: number, version: PushVersion): Promise<PushNotification> {
    if (!this.renderer) {
      throw new Error('no push notification renderer is registered');
    }
    return this.renderer.render(taskId, seq, version);
  }
}
