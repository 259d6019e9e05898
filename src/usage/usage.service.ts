import { Injectable } from '@nestjs/common';
import { badRequest } from '../common/app-error';
import type { Principal } from '../common/principal';
import { identityParty, requireAccess, requireGrant } from '../auth/access';
import { ConsoleService } from '../console/console.service';
import { IdentitiesService } from '../identities/identities.service';
import type { UsageQuery } from './dto/usage.query';
import { UsageRepository, type UsageScope } from './usage.repository';
import { toUsageGroups, type UsageView } from './usage.view';

const DAY_MS = 24 * 3600_000;
/** The longest range one query reads, and the most groups one answer holds (docs/api.md §18). */
export const MAX_USAGE_RANGE_DAYS = 400;
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
    const to = query.to ? new Date(query.to) : new Date();
    // Rollups are hourly: a range starts at the hour its `from` falls in.
    const from = floorHour(query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS));
    if (from.getTime() >= to.getTime()) {
      throw badRequest('validation_failed', '`from` must be before `to`.', [
        { field: 'from', message: 'from must be before to' },
      ]);
    }
    if (to.getTime() - from.getTime() > MAX_USAGE_RANGE_DAYS * DAY_MS) {
      throw badRequest('validation_failed', `A usage query covers at most ${MAX_USAGE_RANGE_DAYS} days.`, [
        { field: 'from', message: `the range is at most ${MAX_USAGE_RANGE_DAYS} days` },
      ]);
    }
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

function floorHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 3600_000) * 3600_000);
}
