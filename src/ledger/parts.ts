import { isObject } from '../common/json-object';
import type { FieldError } from '../common/app-error';

/**
 * Message and artifact parts. The ledger stores a part in the A2A v1.0 JSON form
 * (what `@a2a-js/sdk`'s `Part.toJSON` writes): exactly one of `text`, `raw` (base64),
 * `url`, `data`, with optional `mediaType`, `filename` and `metadata`. The protocol
 * hands these to the SDK as they are; the REST API shows them in the A2A v0.3 JSON
 * form (`kind: text | file | data`), the same spelling as its lowercase task states,
 * and accepts either form in a reply.
 *
 * The SDK's own v0.3 ⇄ v1.0 translators are internal to its compat transport, so the
 * two small mappings below mirror them (including the `data_part_compat` wrapping of
 * non-object data, so that both sides round-trip the same way).
 */
export interface StoredPart {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  mediaType?: string;
  filename?: string;
  metadata?: Record<string, unknown>;
}

export type PartView =
  | { kind: 'text'; text: string; metadata?: Record<string, unknown> }
  | {
      kind: 'file';
      file: { bytes: string; mimeType?: string; name?: string } | { uri: string; mimeType?: string; name?: string };
      metadata?: Record<string, unknown>;
    }
  | { kind: 'data'; data: Record<string, unknown>; metadata?: Record<string, unknown> };

/** 1–100 parts a message, at most 10 artifacts a reply (docs/api.md §10). */
export const MAX_MESSAGE_PARTS = 100;
export const MAX_ARTIFACTS_PER_REPLY = 10;

const DATA_PART_COMPAT_FLAG = 'data_part_compat';
const CONTENT_KEYS = ['text', 'raw', 'url', 'data'] as const;
const V1_KEYS = [...CONTENT_KEYS, 'mediaType', 'filename', 'metadata'];
const V03_KEYS: Record<string, string[]> = {
  text: ['kind', 'text', 'metadata'],
  file: ['kind', 'file', 'metadata'],
  data: ['kind', 'data', 'metadata'],
};
const FILE_KEYS = ['bytes', 'uri', 'mimeType', 'name'];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isUrl(value: unknown): value is string {
  if (typeof value !== 'string') {
    return false;
  }
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** Reads one part sent to the REST API, in either A2A form. */
export function parsePart(input: unknown, field: string, errors: FieldError[]): StoredPart | null {
  const fail = (message: string) => {
    errors.push({ field, message: `${field} ${message}` });
    return null;
  };
  if (!isObject(input)) {
    return fail('must be an object');
  }
  if (input.metadata !== undefined && !isObject(input.metadata)) {
    return fail('metadata must be an object');
  }
  const metadata = input.metadata as Record<string, unknown> | undefined;

  const allowed = input.kind === undefined ? V1_KEYS : V03_KEYS[String(input.kind)];
  if (!allowed) {
    return fail('kind must be text, file or data');
  }
  const unknown = Object.keys(input).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    return fail(`has unknown fields: ${unknown.join(', ')}`);
  }

  if (input.kind === undefined) {
    // A null content is no content (the A2A v1.0 JSON mapping reads it as absent).
    const present = CONTENT_KEYS.filter((key) => input[key] !== undefined && input[key] !== null);
    if (present.length !== 1) {
      return fail('must have exactly one of kind (v0.3) or text, raw, url, data (v1.0)');
    }
    if (input.text !== undefined && typeof input.text !== 'string') {
      return fail('text must be a string');
    }
    if (input.raw !== undefined && (typeof input.raw !== 'string' || !BASE64.test(input.raw))) {
      return fail('raw must be base64');
    }
    if (input.url !== undefined && !isUrl(input.url)) {
      return fail('url must be a URL');
    }
    if (input.mediaType !== undefined && typeof input.mediaType !== 'string') {
      return fail('mediaType must be a string');
    }
    if (input.filename !== undefined && typeof input.filename !== 'string') {
      return fail('filename must be a string');
    }
    return input as StoredPart;
  }

  switch (input.kind) {
    case 'text':
      if (typeof input.text !== 'string') {
        return fail('text must be a string');
      }
      return withMetadata({ text: input.text }, metadata);
    case 'file': {
      const file = input.file;
      if (!isObject(file)) {
        return fail('file must be an object');
      }
      if (Object.keys(file).some((key) => !FILE_KEYS.includes(key))) {
        return fail(`file may only have ${FILE_KEYS.join(', ')}`);
      }
      const described = {
        ...(typeof file.mimeType === 'string' ? { mediaType: file.mimeType } : {}),
        ...(typeof file.name === 'string' ? { filename: file.name } : {}),
      };
      if (typeof file.bytes === 'string' && file.uri === undefined) {
        if (!BASE64.test(file.bytes)) {
          return fail('file.bytes must be base64');
        }
        return withMetadata({ raw: file.bytes, ...described }, metadata);
      }
      if (file.uri !== undefined && file.bytes === undefined) {
        if (!isUrl(file.uri)) {
          return fail('file.uri must be a URL');
        }
        return withMetadata({ url: file.uri, ...described }, metadata);
      }
      return fail('file must have either bytes or uri');
    }
    case 'data': {
      if (!isObject(input.data)) {
        return fail('data must be an object');
      }
      if (metadata?.[DATA_PART_COMPAT_FLAG] === true && 'value' in input.data) {
        if (input.data.value === null) {
          return fail('data.value must not be null');
        }
        const { [DATA_PART_COMPAT_FLAG]: _, ...rest } = metadata;
        return withMetadata({ data: input.data.value }, Object.keys(rest).length > 0 ? rest : undefined);
      }
      return withMetadata({ data: input.data }, metadata);
    }
    default:
      // Untrusted input: any other value (null included) is refused.
      return fail('kind must be text, file or data');
  }
}

function withMetadata(part: StoredPart, metadata: Record<string, unknown> | undefined): StoredPart {
  return metadata === undefined ? part : { ...part, metadata };
}

/** A stored part in the A2A v0.3 JSON form, for REST responses. */
export function toPartView(part: StoredPart): PartView {
  const metadata = part.metadata === undefined ? {} : { metadata: part.metadata };
  const described = {
    ...(part.mediaType ? { mimeType: part.mediaType } : {}),
    ...(part.filename ? { name: part.filename } : {}),
  };
  if (part.text !== undefined) {
    return { kind: 'text', text: part.text, ...metadata };
  }
  if (part.raw !== undefined) {
    return { kind: 'file', file: { bytes: part.raw, ...described }, ...metadata };
  }
  if (part.url !== undefined) {
    return { kind: 'file', file: { uri: part.url, ...described }, ...metadata };
  }
  if (isObject(part.data)) {
    return { kind: 'data', data: part.data, ...metadata };
  }
  return { kind: 'data', data: { value: part.data }, metadata: { ...part.metadata, [DATA_PART_COMPAT_FLAG]: true } };
}
