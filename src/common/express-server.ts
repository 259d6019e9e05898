import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's Express adapter, with an HTTP server that makes its requests and responses
 * Express's own from the start.
 *
 * Express gives a request its methods (`req.get`, `res.json`, …) by swapping the
 * prototype of the objects Node made, in `app.handle`: `Object.setPrototypeOf(req,
 * app.request)`, the same for `res`. V8 pays for that far beyond the call: with the
 * prototype changed per request, the young generation's collections find most of
 * each request's objects alive and promote them — for a bare Express app answering
 * `/healthz`, 10–12 MB promoted and an 11 ms pause every ~100 ms under load, against
 * 0.25–0.4 ms and nothing promoted once the prototype is Express's from the start (~3×
 * the requests a second; BENCHMARKS.md, "Express's prototype swap"; expressjs/express#5998).
 * Node's `createServer` takes the classes to make requests and responses with: here,
 * Node's own, making objects whose prototype is already `app.request` / `app.response`.
 * Express still calls `setPrototypeOf` with the prototype the object already has, which
 * V8 answers at once. EXPRESS_SERVER_ADAPTER=off runs Nest's own adapter instead
 * (src/database/README.md says what this relies on and which tests guard it).
 */
export class ExpressServerAdapter extends ExpressAdapter {
  /** The server adapter the app runs on: this one, or with EXPRESS_SERVER_ADAPTER=off Nest's own (`enabled` false). */
  static choose(enabled: boolean): ExpressAdapter {
    return enabled ? new ExpressServerAdapter() : new ExpressAdapter();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    // HTTPS, and forceCloseConnections' connection tracking, stay Nest's own (this service uses
    // neither); so does all of it should Node's constructors ever be classes (see below).
    if (options?.httpsOptions || options?.forceCloseConnections || !callable(IncomingMessage, ServerResponse)) {
      return super.initHttpServer(options);
    }
    const app = this.getInstance<Express>();
    // Node's own constructors, run on an object of Express's prototype. (Not Reflect.construct
    // with a new.target whose prototype is that: measured, it made Express 7× slower still.)
    function Request(this: IncomingMessage, socket: Socket): void {
      (IncomingMessage as unknown as Init<[Socket]>).call(this, socket);
    }
    Request.prototype = app.request;
    function Response(this: ServerResponse, req: IncomingMessage, settings?: object): void {
      (ServerResponse as unknown as Init<[IncomingMessage, object?]>).call(this, req, settings);
    }
    Response.prototype = app.response;
    this.httpServer = createServer(
      {
        IncomingMessage: Request as unknown as typeof IncomingMessage,
        ServerResponse: Response as unknown as typeof ServerResponse,
      },
      app,
    );
  }
}

type Init<A extends unknown[]> = (this: object, ...args: A) => void;

/** Node's IncomingMessage and ServerResponse are plain functions (Node 20), which `call` can run on an object of ours. */
function callable(...constructors: Array<new (...args: never[]) => object>): boolean {
  return constructors.every((constructor) => !Function.prototype.toString.call(constructor).startsWith('class'));
}
