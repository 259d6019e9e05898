import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { KeyMetadataSchema, type KeyMetadata } from '../keys/key-metadata';

/** Tasks created in an hour, by their state now; `open` is every state that is not final. */
export interface TaskCounts {
  completed: number;
  failed: number;
  canceled: number;
  rejected: number;
  open: number;
}

/** Milliseconds from creation to a final state; null when no task of the hour reached one. */
export interface Percentiles {
  p50: number | null;
  p95: number | null;
}

/** Deliveries (webhooks) or forwards (upstreams) by outcome. */
export interface DeliveryCounts {
  succeeded: number;
  failed: number;
  retrying: number;
}

/** One hour of the overview (docs/api.md §13, "The overview"). */
export interface OverviewHourView {
  hour: string;
  tasks: TaskCounts;
  time_to_complete_ms: Percentiles;
  denials: { inbound: number; outbound: number };
  webhook_deliveries: DeliveryCounts;
  upstream_forwards: DeliveryCounts;
}

export interface FailingWebhookView {
  id: string;
  url: string;
  status: 'active' | 'disabled';
  failing_since: string;
}

export interface FailingUpstreamView {
  identity: string;
  failed: number;
  retrying: number;
  last_error_at: string | null;
}

export interface OverviewView {
  since: string;
  hours: number;
  series: OverviewHourView[];
  totals: {
    tasks: TaskCounts;
    time_to_complete_ms: Percentiles;
    denials: { inbound: number; outbound: number };
    webhook_deliveries: DeliveryCounts;
    upstream_forwards: DeliveryCounts;
  };
  approvals_pending: number;
  attention: {
    failing_webhooks: FailingWebhookView[];
    expiring_keys: KeyMetadata[];
    failing_upstreams: FailingUpstreamView[];
  };
}

@ApiSchema({ name: 'OverviewTaskCounts' })
class TaskCountsSchema implements TaskCounts {
  @ApiProperty() completed: number;
  @ApiProperty() failed: number;
  @ApiProperty() canceled: number;
  @ApiProperty() rejected: number;
  @ApiProperty({ description: 'Not in a final state yet (submitted, working, input-required, auth-required).' })
  open: number;
}

@ApiSchema({ name: 'OverviewPercentiles' })
class PercentilesSchema implements Percentiles {
  @ApiProperty({ type: Number, nullable: true }) p50: number | null;
  @ApiProperty({ type: Number, nullable: true }) p95: number | null;
}

@ApiSchema({ name: 'OverviewDenials' })
class DenialsSchema {
  @ApiProperty({ description: 'Calls to your identities that admission refused.' }) inbound: number;
  @ApiProperty({ description: 'Calls by your identities that admission refused.' }) outbound: number;
}

@ApiSchema({ name: 'OverviewDeliveryCounts' })
class DeliveryCountsSchema implements DeliveryCounts {
  @ApiProperty() succeeded: number;
  @ApiProperty({ description: 'Given up after the last attempt.' }) failed: number;
  @ApiProperty({ description: 'Pending after a failed attempt.' }) retrying: number;
}

@ApiSchema({ name: 'OverviewHour' })
class OverviewHourSchema implements OverviewHourView {
  @ApiProperty({ format: 'date-time', description: 'The start of the hour (UTC).' }) hour: string;
  @ApiProperty({ type: TaskCountsSchema }) tasks: TaskCountsSchema;
  @ApiProperty({ type: PercentilesSchema }) time_to_complete_ms: PercentilesSchema;
  @ApiProperty({ type: DenialsSchema }) denials: DenialsSchema;
  @ApiProperty({ type: DeliveryCountsSchema }) webhook_deliveries: DeliveryCountsSchema;
  @ApiProperty({ type: DeliveryCountsSchema }) upstream_forwards: DeliveryCountsSchema;
}

@ApiSchema({ name: 'OverviewTotals' })
class OverviewTotalsSchema {
  @ApiProperty({ type: TaskCountsSchema }) tasks: TaskCountsSchema;
  @ApiProperty({ type: PercentilesSchema }) time_to_complete_ms: PercentilesSchema;
  @ApiProperty({ type: DenialsSchema }) denials: DenialsSchema;
  @ApiProperty({ type: DeliveryCountsSchema }) webhook_deliveries: DeliveryCountsSchema;
  @ApiProperty({ type: DeliveryCountsSchema }) upstream_forwards: DeliveryCountsSchema;
}

@ApiSchema({ name: 'FailingWebhook' })
class FailingWebhookSchema implements FailingWebhookView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() url: string;
  @ApiProperty({ enum: ['active', 'disabled'] }) status: 'active' | 'disabled';
  @ApiProperty({ format: 'date-time' }) failing_since: string;
}

@ApiSchema({ name: 'FailingUpstream' })
class FailingUpstreamSchema implements FailingUpstreamView {
  @ApiProperty({ description: "The identity's handle whose upstream fails." }) identity: string;
  @ApiProperty() failed: number;
  @ApiProperty() retrying: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_error_at: string | null;
}

@ApiSchema({ name: 'OverviewAttention' })
class AttentionSchema {
  @ApiProperty({ type: [FailingWebhookSchema] }) failing_webhooks: FailingWebhookSchema[];
  @ApiProperty({ type: [KeyMetadataSchema], description: 'Active keys that expire within 7 days, soonest first.' })
  expiring_keys: KeyMetadataSchema[];
  @ApiProperty({ type: [FailingUpstreamSchema] }) failing_upstreams: FailingUpstreamSchema[];
}

/** The OpenAPI schema of `GET /api/v1/overview` (docs/api.md §13, "The overview"). */
@ApiSchema({ name: 'Overview' })
export class OverviewSchema implements OverviewView {
  @ApiProperty({ format: 'date-time', description: 'The start of the first hour.' }) since: string;
  @ApiProperty() hours: number;
  @ApiProperty({ type: [OverviewHourSchema], description: 'One entry per hour, oldest first.' })
  series: OverviewHourSchema[];
  @ApiProperty({ type: OverviewTotalsSchema }) totals: OverviewTotalsSchema;
  @ApiProperty({ description: 'Approval requests waiting for a decision.' }) approvals_pending: number;
  @ApiProperty({ type: AttentionSchema }) attention: AttentionSchema;
}
