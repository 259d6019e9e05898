import type { Tx } from '../database/database';
import type { EventsService } from '../events/events.service';
import type { IdentityView } from './identity.view';

/**
 * `identity.claimed` or `identity.updated` with the identity as every read shows it,
 * for its organization and for webhooks scoped to it, in the change's transaction.
 * An identity of no organization (unclaimed) has no subscriber: nothing is written.
 */
export async function emitIdentityEvent(
  events: EventsService,
  tx: Tx,
  type: 'identity.claimed' | 'identity.updated',
  view: IdentityView,
): Promise<IdentityView> {
  await events.emit(tx, {
    type,
    organizationId: view.organization_id,
    identityIds: [view.id],
    data: { identity: view },
  });
  return view;
}
