import type { NextFunction, Request, Response } from 'express';
import { requestIdMiddleware } from './request-context';

/** An HTTP request as far as the middleware reads it, carrying an API key. */
function requestWithKey(key: string): Request {
  const headers: Record<string, string> = {
    'x-api-key': key,
    traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
  };
  return { headers, header: (name: string) => headers[name.toLowerCase()] } as unknown as Request;
}

describe('the HTTP request context', () => {
  const started = (key: string) => {
    const req = requestWithKey(key);
    const res = { setHeader: jest.fn() } as unknown as Response;
    requestIdMiddleware(req, res, (() => undefined) as NextFunction);
    return { req, context: req.context! };
  };

  it('holds the request for the audit log, but not as a property of its own: a copy or a print carries no header', () => {
    const { req, context } = started('a2a_agt_thekeyitself');
    expect(context.request).toBe(req);
    expect(Object.keys(context)).not.toContain('request');
    expect(JSON.stringify(context)).not.toContain('thekeyitself');
    expect(JSON.stringify({ ...context })).not.toContain('thekeyitself');
    expect(context).toMatchObject({ requestId: req.id, traceId: 'a'.repeat(32) });
  });

  it('reads the principal when asked, set after the context began, as its kind and id only', () => {
    const { req, context } = started('a2a_agt_another');
    expect(context.principal).toBeUndefined();
    req.principal = { kind: 'admin', id: 'key-1', label: 'ops', organizationId: 'org-1' };
    expect(context.principal).toEqual({ kind: 'admin', id: 'key-1' });
  });
});
