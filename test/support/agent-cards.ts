import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { flattenedVerify, importJWK, type JWK } from 'jose';
import v03Schema from '../fixtures/a2a-schemas/v0.3-agent-card.schema.json';
import v1Schema from '../fixtures/a2a-schemas/v1.0-agent-card.schema.json';
import v1Published from '../fixtures/a2a-schemas/v1.0-a2a.agent-card.json';

/**
 * Agent Card checks that use nothing of the service's own code: the generations'
 * published JSON schemas (test/fixtures/a2a-schemas, validated with ajv) and JWS
 * verification with `jose` over the canonical form that A2A v1.0 §8.4.1 prescribes.
 */
const validateV03 = new Ajv({ strict: false, allErrors: true }).compile(v03Schema);
const validateV1Required = new Ajv2020({ strict: false, allErrors: true }).compile(v1Schema);
const validateV1 = publishedV1Validator();

/**
 * The published v1.0 bundle (`a2a.json`) keys its definitions by title ("Agent Card")
 * while each `$ref` names the per-message file it was bundled from
 * (`lf.a2a.v1.AgentCard.jsonschema.json`, `google.protobuf.Struct.jsonschema.json`):
 * each definition is registered under that name, so the refs resolve as published.
 */
function publishedV1Validator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const definition of Object.values(v1Published.definitions) as Array<{ title: string }>) {
    const name = definition.title.replace(/ /g, '');
    const id = ['Struct', 'Timestamp', 'Value'].includes(name)
      ? `google.protobuf.${name}.jsonschema.json`
      : `lf.a2a.v1.${name}.jsonschema.json`;
    ajv.addSchema({ ...definition, $id: id });
  }
  return ajv.getSchema('lf.a2a.v1.AgentCard.jsonschema.json')!;
}

/**
 * The schema's complaints about `card` (an empty list when it is valid). v1.0: the
 * published bundle, and the transcription's `required` lists (the specification's
 * REQUIRED fields, which the bundle does not carry).
 */
export function schemaErrors(card: unknown, generation: '1.0' | '0.3'): string[] {
  const validators = generation === '1.0' ? [validateV1, validateV1Required] : [validateV03];
  return validators.flatMap((validate) =>
    validate(card)
      ? []
      : (validate.errors ?? []).map(
          (error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`,
        ),
  );
}

/**
 * The signed bytes, written here, not taken from the service: A2A v1.0 §8.4.1 as the
 * official SDKs read it (`@a2a-js/sdk`'s canonicalizeAgentCard, the Python SDK's
 * MessageToDict + clean-empty) — the card without `signatures`, every empty value
 * (empty string, list, object; null) left out — then RFC 8785 (keys sorted by UTF-16
 * code units, no whitespace; the cards hold no numbers). docs/conformance.md notes
 * where the specification's text differs (REQUIRED fields kept even when empty).
 */
export function canonicalForm(card: Record<string, unknown>): string {
  const { signatures: _ignored, ...rest } = card;
  return canonical(prune(rest) ?? {});
}

function prune(value: unknown): unknown {
  if (value === null || value === undefined || value === '') {
    return undefined;
  }
  if (Array.isArray(value)) {
    const kept = value.map(prune).filter((item) => item !== undefined);
    return kept.length ? kept : undefined;
  }
  if (typeof value === 'object') {
    const kept: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      const pruned = prune(member);
      if (pruned !== undefined) {
        kept[key] = pruned;
      }
    }
    return Object.keys(kept).length ? kept : undefined;
  }
  return value;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    return '[' + value.map(canonical).join(',') + ']';
  }
  if (typeof value === 'object' && value !== null) {
    return (
      '{' +
      Object.keys(value)
        .sort()
        .map((key) => JSON.stringify(key) + ':' + canonical((value as Record<string, unknown>)[key]))
        .join(',') +
      '}'
    );
  }
  return JSON.stringify(value);
}

export interface Jwks {
  keys: Array<JWK & { kid: string; alg: string }>;
}

/**
 * Verifies every signature on `card` with `jose` against the JWK Set; returns the
 * protected headers. Throws when a signature does not verify or names an unknown key.
 */
export async function verifyCard(card: Record<string, unknown>, jwks: Jwks): Promise<Array<Record<string, unknown>>> {
  const signatures = card.signatures as Array<{ protected: string; signature: string }> | undefined;
  if (!signatures?.length) {
    throw new Error('the card has no signatures');
  }
  const payload = Buffer.from(canonicalForm(card)).toString('base64url');
  const headers = [];
  for (const { protected: protectedHeader, signature } of signatures) {
    const header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8')) as {
      kid: string;
      alg: string;
    };
    const jwk = jwks.keys.find((key) => key.kid === header.kid);
    if (!jwk) {
      throw new Error(`no key ${header.kid} in the JWKS`);
    }
    await flattenedVerify({ payload, protected: protectedHeader, signature }, await importJWK(jwk, header.alg));
    headers.push(header);
  }
  return headers;
}
