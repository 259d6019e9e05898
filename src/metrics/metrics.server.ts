import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Metrics } from './metrics';

/**
 * The separate metrics listener (docs/operations.md, "Metrics"): `GET /metrics` (Prometheus text) on
 * METRICS_PORT, bound to METRICS_HOST — never on the API's port. Started with the
 * application, in the server and in `npm run worker` alike; off with METRICS_PORT=off.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | null = null;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The port it listens on (METRICS_PORT, or the one chosen for `0`); null when off. */
  get port(): number | null {
    return this.server ? (this.server.address() as AddressInfo).port : null;
  }

  /** The address it listens on (METRICS_HOST); null when off. */
  get address(): string | null {
    return this.server ? (this.server.address() as AddressInfo).address : null;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === null) {
      return;
    }
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at GET /metrics\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) =>
          res
            .writeHead(200, { 'content-type': this.metrics.registry.contentType })
            .end(req.method === 'HEAD' ? undefined : text),
        (error: unknown) => {
          this.logger.error({ err: error }, 'could not collect metrics');
          res.writeHead(500, { 'content-type': 'text/plain' }).end('could not collect metrics\n');
        },
      );
    });
    const { metricsPort: port, metricsHost: host } = this.config;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new Error(
            `metrics cannot listen on ${host}:${port} (METRICS_PORT, METRICS_HOST; METRICS_PORT=off disables it): ${error.message}`,
          ),
        ),
      );
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.logger.info({ metrics_port: this.port, metrics_host: host }, 'metrics listening');
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) {
      return;
    }
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
