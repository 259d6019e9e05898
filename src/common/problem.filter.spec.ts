import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { HttpException } from '@nestjs/common';
import type { Request } from 'express';
import { AppError } from './app-error';
import { checkErrorInfo, restBindingErrorBody, restBindingVersion, toAppError } from './problem.filter';

/** An error with the status, and the `type` if any, that the body parser (through http-errors) gives it. */
const createError = (status: number, error: Error | string, extra: { type?: string } = {}) =>
  Object.assign(
    typeof error === 'string' ? new Error(error) : error,
    { status, statusCode: status, expose: true },
    extra,
  );

/** zlib's own error for `data`, as the body parser passes it on: a status, no `type`. */
const zlibError = async (data: Buffer) => {
  const error = await promisify(gunzip)(data).then(
    () => new Error('decompressed'),
    (e: Error) => e,
  );
  return createError(400, error);
};

describe('toAppError: errors of the body parser, mapped in this one place', () => {
  const mapped = (error: unknown) => {
    const { status, code } = toAppError(error);
    return { status, code };
  };

  it('a compressed body that does not decompress is a 400 invalid_content_encoding', async () => {
    expect(mapped(await zlibError(Buffer.from('not gzip at all')))).toEqual({
      status: 400,
      code: 'invalid_content_encoding',
    });
  });

  it('its own errors by their type', () => {
    expect(mapped(createError(400, 'x', { type: 'entity.parse.failed' }))).toEqual({
      status: 400,
      code: 'malformed_json',
    });
    expect(mapped(createError(413, 'x', { type: 'entity.too.large' }))).toEqual({
      status: 413,
      code: 'payload_too_large',
    });
    expect(mapped(createError(415, 'x', { type: 'encoding.unsupported' }))).toEqual({
      status: 415,
      code: 'unsupported_media_type',
    });
    expect(mapped(createError(400, 'x', { type: 'request.aborted' }))).toEqual({ status: 400, code: 'bad_request' });
  });

  it('leaves other errors to their own mapping: a socket’s error, an HttpException, anything else', () => {
    const socket = Object.assign(new Error('read ECONNRESET'), { errno: -104, code: 'ECONNRESET', syscall: 'read' });
    expect(mapped(createError(400, socket)).code).not.toBe('invalid_content_encoding');
    expect(mapped(new HttpException('gone', 410))).toEqual({ status: 410, code: 'bad_request' });
    expect(mapped(Object.assign(new Error('boom'), { errno: 1, code: 'X' }))).toEqual({
      status: 500,
      code: 'internal_error',
    });
  });
});

describe('restBindingVersion: the generation of an HTTP+JSON binding call', () => {
  const versionOf = (path: string, header?: string) =>
    restBindingVersion({ path, header: (name: string) => (name === 'a2a-version' ? header : undefined) } as Request);

  it('a /v1/… route is v0.3 unless A2A-Version names 1.0; the other routes are v1.0 (a patch number ignored)', () => {
    expect(versionOf('/a2a/acme/rest/v1/tasks/1')).toBe('0.3');
    expect(versionOf('/a2a/acme/rest/v1/tasks/1', ' 0.3.1 ')).toBe('0.3');
    expect(versionOf('/a2a/acme/rest/v1/tasks/1', '1.0.2')).toBe('1.0');
    expect(versionOf('/a2a/acme/rest/tasks/1')).toBe('1.0');
    expect(versionOf('/a2a/acme/rest/tasks/1', '0.3')).toBe('1.0');
  });

  it('any other version is not spoken, on every route', () => {
    for (const header of ['2.0', '1', '', 'x']) {
      expect([
        header,
        versionOf('/a2a/acme/rest/v1/tasks/1', header),
        versionOf('/a2a/acme/rest/tasks', header),
      ]).toEqual([header, null, null]);
    }
  });
});

describe('a protocol check’s error on the HTTP+JSON (v1.0) and gRPC bindings', () => {
  it('carries the check’s reason (every 401 is unauthenticated) as an ErrorInfo in the service’s domain', () => {
    const error = new AppError(401, 'invalid_api_key', 'The API key was revoked.');
    const info = {
      reason: 'UNAUTHENTICATED',
      domain: 'a2a-service',
      metadata: { reason: 'unauthenticated', request_id: 'req-1' },
    };
    expect(checkErrorInfo(error, 'req-1')).toEqual(info);
    expect(restBindingErrorBody({ id: 'req-1' } as Request, error)).toEqual({
      type: 'about:blank',
      title: error.title,
      status: 401,
      detail: 'The API key was revoked.',
      code: 'unauthenticated',
      request_id: 'req-1',
      error: {
        code: 401,
        status: 'UNAUTHENTICATED',
        message: 'The API key was revoked.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', ...info }],
      },
    });
    expect(checkErrorInfo(new AppError(403, 'admission_denied', 'x'), 'r').metadata.reason).toBe('admission_denied');
  });
});
