import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { PublicJwk } from './card-signer';

// --- OpenAPI schemas of the JWK Set CardSigner.jwks serves ---

@ApiSchema({ name: 'Jwk' })
export class JwkSchema implements PublicJwk {
  [key: string]: unknown;
  @ApiProperty({ description: "The key id, as in the `kid` of a card signature's protected header." }) kid: string;
  @ApiProperty({ enum: ['ES256', 'EdDSA'] }) alg: PublicJwk['alg'];
  @ApiProperty({ enum: ['sig'] }) use: 'sig';
  @ApiProperty({ enum: ['EC', 'OKP'] }) kty?: string;
  @ApiProperty({ enum: ['P-256', 'Ed25519'] }) crv?: string;
  @ApiProperty({ description: "The public key's x coordinate (base64url)." }) x?: string;
  @ApiPropertyOptional({ description: 'The y coordinate (base64url), for EC keys.' }) y?: string;
}

@ApiSchema({ name: 'JwkSet' })
export class JwkSetSchema {
  @ApiProperty({
    type: [JwkSchema],
    description: 'The current signing key, then the previous one (when there is one).',
  })
  keys: PublicJwk[];
}
