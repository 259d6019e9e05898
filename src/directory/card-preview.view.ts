import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { AgentCardSchema, type AgentCardJson, type CardGeneration } from './agent-card';

/**
 * `GET /api/v1/identities/{handle}/card-preview` (docs/api.md §4, "Card preview"): the
 * card an identity serves — or would serve once enabled — in both generations, unsigned:
 * a preview for its organization, never a card to hand to a caller.
 */
export interface CardPreviewView {
  agent_handle: string;
  served: boolean;
  card_url: string;
  cards: Record<CardGeneration, AgentCardJson>;
}

@ApiSchema({ name: 'CardPreviewCards' })
class CardPreviewCardsSchema {
  @ApiProperty({ type: AgentCardSchema, description: 'The A2A 1.0 card (`A2A-Version: 1.0`).' })
  '1.0': AgentCardJson;
  @ApiProperty({ type: AgentCardSchema, description: 'The A2A 0.3 hybrid card (no or a 0.3 `A2A-Version`).' })
  '0.3': AgentCardJson;
}

@ApiSchema({ name: 'CardPreview' })
export class CardPreviewSchema implements CardPreviewView {
  @ApiProperty() agent_handle: string;
  @ApiProperty({
    description:
      'Whether the card is served now (the identity is claimed, enabled and not deleted); false: a preview of what enabling it would publish.',
  })
  served: boolean;
  @ApiProperty({ format: 'uri', description: 'Where the card is (or would be) served.' }) card_url: string;
  @ApiProperty({
    type: CardPreviewCardsSchema,
    description:
      'The card in each generation, public skills only, without `signatures`: the service signs a card when it serves it.',
  })
  cards: Record<CardGeneration, AgentCardJson>;
}
