import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/principal';
import { identityParty, requireAccess, requireGrant } from '../auth/access';
import { ConsoleService } from '../console/console.service';
import { IdentitiesService } from '../identities/identities.service';
import type { UsageQuery } from './dto/usage.query';
import { usageRange } from './usage-range';
import { UsageRepository, type UsageScope } from './usage.repository';
import { toUsageGroups, type UsageView } from './usage.view';

/** The most groups one answer holds (docs/api.md §18). */
export const MAX_USAGE_GROUPS = 5_000;

/**
 * `GET /api/v1/usage` (docs/api.md §18): the hourly rollups of the caller's scope — its
 * organization's identities (admin key, Console), or one identity (`identity=`, or an
 * agent key's own) — over a range of the tasks' creation hours, grouped.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly repository: UsageRepository,
    private readonly identities: IdentitiesService,
    private readonly organizations: ConsoleService,
  ) {}

  async summarize(principal: Principal, query: UsageQuery): Promise<UsageView> {
    requireGrant(principal, 'usage.read');
    const group = query.group_by ?? 'day';
    const { from, to } = usageRange(query);
    const scope = await this.scopeOf(principal, query.identity);
    const rows = await this.repository.usage(scope, group, from, to, MAX_USAGE_GROUPS + 1);
    const truncated = rows.length > MAX_USAGE_GROUPS;
    const kept = truncated ? rows.slice(0, MAX_USAGE_GROUPS) : rows;
    return {
      group_by: group,
      from: from.toISOString(),
      to: to.toISOString(),
      groups: toUsageGroups(
        kept,
        await this.labels(
          group,
          kept.map((row) => row.key),
        ),
      ),
      truncated,
    };
  }

  private async scopeOf(principal: Principal, handle: string | undefined): Promise<UsageScope> {
    if (handle === undefined) {
      return principal.kind === 'agent'
        ? { kind: 'identity', identityId: principal.identity.id }
        : { kind: 'organization', organizationId: principal.organizationId };
    }
    const identity = await this.identities.findByHandle(handle.toLowerCase());
    requireAccess(principal, 'usage.read', identityParty(identity), handle);
    return { kind: 'identity', identityId: identity!.id };
  }

  /** Handles of identity keys, names of organization keys. */
  private async labels(group: string, keys: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(keys)];
    if (group === 'identity' || group === 'peer') {
      const found = await this.identities.findByIds(ids);
      return new Map(found.map((identity) => [identity.id, identity.agentHandle]));
    }
    if (group === 'organization') {
      return this.organizations.organizationNames(ids);
    }
    return new Map();
  }
}
