import { Column } from 'typeorm';

/**
 * The two identities of a task, context or approval request, as recorded when it was
 * created: ids, handles and organizations are all fixed once an identity is claimed,
 * and only claimed identities take part, so reads and visibility checks need no join.
 */
export class Participants {
  @Column({ name: 'requester_identity_id', type: 'uuid' })
  requesterIdentityId: string;

  @Column({ name: 'requester_handle', type: 'varchar' })
  requesterHandle: string;

  @Column({ name: 'requester_organization_id', type: 'uuid' })
  requesterOrganizationId: string;

  @Column({ name: 'worker_identity_id', type: 'uuid' })
  workerIdentityId: string;

  @Column({ name: 'worker_handle', type: 'varchar' })
  workerHandle: string;

  @Column({ name: 'worker_organization_id', type: 'uuid' })
  workerOrganizationId: string;
}
