import { isObject } from '../common/json-object';

/**
 * What the forwarder's `fetch` forgives in an upstream's answers: deviations from A2A
 * seen from software in the field, each repaired before the SDK's client reads the
 * answer (docs/api.md, "Upstream agents", lists them with the software that needs
 * them). Nothing here changes what the service sends, nor what it serves.
 *
 * - A Server-Sent Events line that starts with U+001E (the record separator), as
 *   VoltAgent's `@voltagent/server-hono` writes before every `data:` line: the
 *   character is dropped, so the line is the `data:` line it means to be.
 * - An A2A 0.3 JSON-RPC result (or stream event) without `kind` whose shape says what
 *   it is: a Task (`id` and `status`), a Message (`messageId`, `role` and `parts`), a
 *   status update (`taskId`, `status`), an artifact update (`taskId`, `artifact`).
 */
export function tolerantFetch(inner: typeof fetch): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    if (!response.body) {
      return response;
    }
    const legacy = isLegacyCall(init?.body);
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      return new Response(response.body.pipeThrough(eventLines((line) => repairedLine(line, legacy))), response);
    }
    if (!legacy || !type.includes('json')) {
      return response;
    }
    const text = await response.text();
    return new Response(repairedJson(text), response);
  }) as typeof fetch;
}

/** A v0.3 JSON-RPC call: its method names a slash (`message/send`); v1.0 methods do not. */
function isLegacyCall(body: unknown): boolean {
  if (typeof body !== 'string' || !body.startsWith('{')) {
    return false;
  }
  try {
    const method = (JSON.parse(body) as { method?: unknown }).method;
    return typeof method === 'string' && method.includes('/');
  } catch {
    return false;
  }
}

/** Each line of a text stream through `repair`, the line ends kept. */
function eventLines(repair: (line: string) => string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  return new TransformStream({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      const end = buffer.lastIndexOf('\n');
      if (end < 0) {
        return;
      }
      const lines = buffer.slice(0, end + 1);
      buffer = buffer.slice(end + 1);
      controller.enqueue(encoder.encode(lines.replace(/^.*$/gm, repair)));
    },
    flush(controller) {
      buffer += decoder.decode();
      if (buffer) {
        controller.enqueue(encoder.encode(repair(buffer)));
      }
    },
  });
}

function repairedLine(line: string, legacy: boolean): string {
  const unprefixed = line.replace(/^\u001e+/, '');
  if (!legacy || !unprefixed.startsWith('data:')) {
    return unprefixed;
  }
  const value = unprefixed.slice('data:'.length).trimStart();
  return `data: ${repairedJson(value)}`;
}

/** A JSON-RPC response whose v0.3 result lacks `kind`, with the kind its shape shows; anything else as it is. */
function repairedJson(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const result = (parsed as { result?: unknown } | null)?.result;
  if (!isObject(result) || 'kind' in result) {
    return text;
  }
  const kind = kindOf(result);
  if (!kind) {
    return text;
  }
  return JSON.stringify({ ...(parsed as object), result: { kind, ...result } });
}

function kindOf(result: Record<string, unknown>): string | null {
  const has = (key: string) => result[key] !== undefined && result[key] !== null;
  if (has('messageId') && has('role') && has('parts') && !has('status')) {
    return 'message';
  }
  if (has('id') && has('status') && !has('messageId') && !has('taskId')) {
    return 'task';
  }
  if (has('taskId') && has('status') && !has('artifact') && !has('id')) {
    return 'status-update';
  }
  if (has('taskId') && has('artifact') && !has('status') && !has('id')) {
    return 'artifact-update';
  }
  return null;
}
