import { SetMetadata } from '@nestjs/common';
import type { QuotaName } from './rate-limit.service';

export const EXTRA_QUOTA_KEY = 'a2a:extra-quota';

/**
 * An extra quota for a route, spent per client address on top of its surface's
 * quota (e.g. `@ExtraQuota('signup')` on agent signup: 10 per hour).
 */
export const ExtraQuota = (quota: QuotaName) => SetMetadata(EXTRA_QUOTA_KEY, quota);
