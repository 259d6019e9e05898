import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { AgentCard } from '@a2a-js/sdk';
import type { AppError } from '../common/app-error';
import { CARD_LIMITS } from '../identities/dto/card-fields.dto';
import {
  UPSTREAM_BINDINGS,
  UPSTREAM_VERSIONS,
  type UpstreamBinding,
  type UpstreamVersion,
} from './dto/set-upstream.dto';
import type { CardVerification } from './card-verification';
import { clip, listOf } from './card-shape';
import { CardVerificationSchema, type CardVerificationView } from './upstream.view';

/** What `POST …/upstream/test` found (docs/api.md §14, "Testing an upstream"): nothing of it is stored. */
export interface UpstreamTestView {
  tested: 'saved' | 'request';
  url: string;
  card_url: string | null;
  reachable: boolean;
  reason: string | null;
  card: TestedCardView | null;
  card_verification: CardVerificationView | null;
  forward_to: { url: string; protocol_version: UpstreamVersion; binding: UpstreamBinding; streaming: boolean } | null;
  problem: { code: string; detail: string } | null;
}

interface TestedCardView {
  name: string;
  description: string;
  version: string;
  skills: number;
  streaming: boolean;
  interfaces: Array<{ url: string; binding: string; protocol_version: string | null }>;
}

/** What the test gathered, before it is shown. */
export interface UpstreamTestResult {
  saved: boolean;
  url: string;
  /** Where the card was read (null: it could not be). */
  readFrom: string | null;
  card: AgentCard | null;
  /** Why the card could not be read, in a status message's words. */
  unreachable: string | null;
  verification: CardVerification | null;
  forward: { url: string; protocolVersion: UpstreamVersion; binding: UpstreamBinding; streaming: boolean } | null;
  /** What a PUT of the same body would be refused with. */
  problem: AppError | null;
  testedAt: Date;
}

const MAX_INTERFACES = 20;

export const toUpstreamTestView = (result: UpstreamTestResult): UpstreamTestView => ({
  tested: result.saved ? 'saved' : 'request',
  url: result.url,
  card_url: result.readFrom,
  reachable: result.card !== null,
  reason: result.unreachable,
  card: result.card
    ? {
        name: clip(result.card.name, CARD_LIMITS.displayName),
        description: clip(result.card.description, CARD_LIMITS.description),
        version: clip(result.card.version, 100),
        skills: listOf(result.card.skills).length,
        streaming: result.card.capabilities?.streaming === true,
        interfaces: listOf(result.card.supportedInterfaces)
          .slice(0, MAX_INTERFACES)
          .map((i) => ({
            url: clip(i?.url, 2048),
            binding: clip(i?.protocolBinding, 100),
            protocol_version: typeof i?.protocolVersion === 'string' ? clip(i.protocolVersion, 20) : null,
          })),
      }
    : null,
  card_verification: result.verification ? { ...result.verification, checked_at: result.testedAt.toISOString() } : null,
  forward_to: result.forward
    ? {
        url: result.forward.url,
        protocol_version: result.forward.protocolVersion,
        binding: result.forward.binding,
        streaming: result.forward.streaming,
      }
    : null,
  problem: result.problem ? { code: result.problem.code, detail: result.problem.detail } : null,
});

// --- OpenAPI schemas of UpstreamTestView; each must list every field its view has ---

@ApiSchema({ name: 'UpstreamTestInterface' })
class TestedInterfaceSchema {
  @ApiProperty() url: string;
  @ApiProperty({ description: 'As the card names it: `JSONRPC`, `HTTP+JSON`, `GRPC`, …' }) binding: string;
  @ApiProperty({ type: String, nullable: true, description: 'As the card names it (none: A2A 1.0).' })
  protocol_version: string | null;
}

@ApiSchema({ name: 'UpstreamTestCard' })
class TestedCardSchema implements TestedCardView {
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty() version: string;
  @ApiProperty({ description: 'How many skills the card lists.' }) skills: number;
  @ApiProperty({ description: 'Whether the card says it streams.' }) streaming: boolean;
  @ApiProperty({ type: [TestedInterfaceSchema], description: "The card's interfaces, in its order of preference." })
  interfaces: TestedCardView['interfaces'];
}

@ApiSchema({ name: 'UpstreamForwardTarget' })
class ForwardTargetSchema {
  @ApiProperty({ format: 'uri', description: 'The endpoint the forwarder would call.' }) url: string;
  @ApiProperty({ enum: UPSTREAM_VERSIONS }) protocol_version: UpstreamVersion;
  @ApiProperty({ enum: UPSTREAM_BINDINGS }) binding: UpstreamBinding;
  @ApiProperty() streaming: boolean;
}

@ApiSchema({ name: 'UpstreamTestProblem' })
class TestProblemSchema {
  @ApiProperty({
    description:
      'The code a PUT of the same body answers with: `upstream_card_unreachable`, `upstream_binding_unsupported`, `invalid_upstream_url`.',
  })
  code: string;
  @ApiProperty() detail: string;
}

@ApiSchema({ name: 'UpstreamTest' })
export class UpstreamTestSchema implements UpstreamTestView {
  @ApiProperty({
    enum: ['saved', 'request'],
    description: 'The saved upstream (empty body) or the one the body names.',
  })
  tested: 'saved' | 'request';
  @ApiProperty({ format: 'uri', description: 'The endpoint tested.' }) url: string;
  @ApiProperty({
    type: String,
    format: 'uri',
    nullable: true,
    description: 'Where its card was read; null when it could not be.',
  })
  card_url: string | null;
  @ApiProperty({ description: 'Whether its Agent Card could be read.' }) reachable: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Why its card could not be read.' }) reason: string | null;
  @ApiProperty({
    type: TestedCardSchema,
    nullable: true,
    description: 'What its card says; null when it could not be read.',
  })
  card: TestedCardView | null;
  @ApiProperty({
    type: CardVerificationSchema,
    nullable: true,
    description: "Its card's verification against the keys the body pins (or the saved upstream's); not recorded.",
  })
  card_verification: CardVerificationView | null;
  @ApiProperty({
    type: ForwardTargetSchema,
    nullable: true,
    description:
      'What saving would store: where and how the forwarder would call it; null when saving would be refused.',
  })
  forward_to: UpstreamTestView['forward_to'];
  @ApiProperty({
    type: TestProblemSchema,
    nullable: true,
    description: 'Why saving would be refused (422 or 400), or null.',
  })
  problem: UpstreamTestView['problem'];
}
