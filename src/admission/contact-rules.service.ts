import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AdmissionParty } from './admission.decision';
import type { ContactRule } from './contact-rule.entity';

/** Rule rows under the entity's property names, so raw queries yield ContactRule-shaped objects. */
const SELECT_RULE = `
  SELECT id, identity_id AS "identityId", organization_id AS "organizationId", direction, action,
         peer_type AS "peerType", peer_identity_id AS "peerIdentityId", peer_organization_id AS "peerOrganizationId",
         note, created_at AS "createdAt", updated_at AS "updatedAt"
    FROM contact_rules`;

/**
 * Every rule that can take part in admitting requester $1 to worker $2 (organizations
 * $3 and $4): the requester's outbound-or-both rules naming the worker or its
 * organization, and the worker's inbound-or-both rules naming the requester or its
 * organization. Four probes of the partial unique indexes, each reading at most two
 * rows, whatever the number of rules either identity has.
 */
const RULES_BETWEEN = `
  ${SELECT_RULE} WHERE identity_id = $1 AND peer_type = 'identity' AND peer_identity_id = $2 AND direction IN ('outbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $1 AND peer_type = 'organization' AND peer_organization_id = $4 AND direction IN ('outbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $2 AND peer_type = 'identity' AND peer_identity_id = $1 AND direction IN ('inbound', 'both')
  UNION ALL
  ${SELECT_RULE} WHERE identity_id = $2 AND peer_type = 'organization' AND peer_organization_id = $3 AND direction IN ('inbound', 'both')`;

@Injectable()
export class ContactRulesService {
  constructor(private readonly dataSource: DataSource) {}

  /** The rules the decision needs for this pair, in one indexed round trip. */
  async between(requester: AdmissionParty, worker: AdmissionParty): Promise<ContactRule[]> {
    return (await this.dataSource.query(RULES_BETWEEN, [
      requester.id, worker.id, requester.organizationId, worker.organizationId,
    ])) as ContactRule[];
  }
}
