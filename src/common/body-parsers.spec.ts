import type { NextFunction, Request, Response } from 'express';
import { acceptsEncoding, jsonBodyParser } from './body-parsers';

const withEncoding = (encoding?: string) => ({
  headers: { 'content-type': 'application/json', 'content-length': '10', 'content-encoding': encoding },
});

describe('acceptsEncoding', () => {
  it.each([[undefined], [''], ['identity'], ['gzip'], ['deflate'], ['br'], ['GZIP'], ['Br']])(
    '%s: read',
    (encoding) => {
      expect(acceptsEncoding(withEncoding(encoding))).toBe(true);
    },
  );

  it.each([['zstd'], ['compress'], ['x-gzip'], ['gzip, br'], ['gzip, gzip']])('%j: refused', (encoding) => {
    expect(acceptsEncoding(withEncoding(encoding))).toBe(false);
  });
});

describe('jsonBodyParser', () => {
  it('answers 415 for zstd before the body parser runs, whatever the Node version supports', () => {
    const req = {
      ...withEncoding('zstd'),
      url: '/api/v1/console/signup',
      method: 'POST',
      is: () => 'application/json',
      // The body parser would read the request: it must never get that far.
      pipe: () => {
        throw new Error('the body parser ran');
      },
      on: () => {
        throw new Error('the body parser ran');
      },
    } as unknown as Request;
    const next = jest.fn();
    jsonBodyParser({ rest: 1024, protocol: 1024 })(req, {} as Response, next as NextFunction);
    expect(next).toHaveBeenCalledTimes(1);
    // Its own words: the body parser's 415 (on a Node without zstd) says something else.
    expect(next.mock.calls[0][0]).toMatchObject({
      status: 415,
      code: 'unsupported_media_type',
      detail: 'Send the request body with Content-Encoding gzip, deflate or br, or none.',
    });
  });
});
