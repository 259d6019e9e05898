import { decodingError } from './body-parsers';

describe('decodingError', () => {
  const zlibError = Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR', status: 400 });
  it('is a 400 for an error without a body-parser type under a Content-Encoding', () => {
    expect(decodingError({ headers: { 'content-encoding': 'gzip' } }, zlibError)).toMatchObject({
      status: 400,
      code: 'invalid_content_encoding',
    });
  });
  it('leaves the body parser’s own errors and unencoded bodies alone', () => {
    expect(decodingError({ headers: {} }, zlibError)).toBeNull();
    expect(decodingError({ headers: { 'content-encoding': 'identity' } }, zlibError)).toBeNull();
    expect(
      decodingError({ headers: { 'content-encoding': 'gzip' } }, { type: 'entity.too.large', status: 413 }),
    ).toBeNull();
  });
});
