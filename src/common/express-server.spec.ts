import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import express from 'express';
import { ExpressAdapter } from '@nestjs/platform-express';
import { loadConfig } from '../config/config';
import { ExpressServerAdapter } from './express-server';

describe('ExpressServerAdapter', () => {
  it("makes each request and response with Express's prototypes, before Express sees them", async () => {
    const app = express();
    app.get('/echo', (req, res) => res.json({ path: req.path, accepts: req.accepts('json') }));
    const adapter = new ExpressServerAdapter(app);
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    const seen: boolean[] = [];
    // Ahead of Express's own listener, which would set the prototypes itself.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/echo`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ path: '/echo', accepts: 'json' });
      expect(seen).toEqual([true, true]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("leaves HTTPS, and tracking connections to close them, to Nest's own server", () => {
    const https = new ExpressServerAdapter(express());
    https.initHttpServer({ httpsOptions: {} });
    expect((https.getHttpServer() as { addContext?: unknown }).addContext).toBeDefined(); // a TLS server
    const plain = new ExpressServerAdapter(express());
    plain.initHttpServer({});
    const tracked = new ExpressServerAdapter(express());
    tracked.initHttpServer({ forceCloseConnections: true });
    // Nest's tracking of open connections: a 'connection' listener beside the server's own.
    const listeners = (adapter: ExpressServerAdapter) =>
      (adapter.getHttpServer() as Server).listenerCount('connection');
    expect(listeners(tracked)).toBe(listeners(plain) + 1);
  });

  it("EXPRESS_SERVER_ADAPTER=off: Nest's own Express adapter, whose requests Express swaps the prototype of itself", async () => {
    expect(loadConfig({}).expressServerAdapter).toBe(true);
    expect(ExpressServerAdapter.choose(loadConfig({}).expressServerAdapter)).toBeInstanceOf(ExpressServerAdapter);
    const off = ExpressServerAdapter.choose(loadConfig({ EXPRESS_SERVER_ADAPTER: 'off' }).expressServerAdapter);
    expect(off).toBeInstanceOf(ExpressAdapter);
    expect(off).not.toBeInstanceOf(ExpressServerAdapter);
    expect(() => loadConfig({ EXPRESS_SERVER_ADAPTER: 'no' })).toThrow('EXPRESS_SERVER_ADAPTER must be one of on, off');

    const app = express();
    app.get('/echo', (req, res) => res.json({ path: req.path }));
    const adapter = new ExpressAdapter(app);
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    const seen: boolean[] = [];
    server.prependListener('request', (req: IncomingMessage) => seen.push(Object.getPrototypeOf(req) === app.request));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(await (await fetch(`http://127.0.0.1:${port}/echo`)).json()).toEqual({ path: '/echo' });
      expect(seen).toEqual([false]); // Node's own IncomingMessage, swapped by Express later
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
