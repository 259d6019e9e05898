import * as grpc from '@grpc/grpc-js';
import type { ResolvedAddress } from '../events/delivery-sender';

/**
 * A gRPC channel resolves its target's name itself, after the forwarder vetted it: a
 * name could resolve to a public address for the check and to a private one for the
 * connection. A target of the scheme registered here (`a2a-pinned:///host:port`) is
 * resolved by this resolver to the address last vetted for `host:port` (`pin`), so the
 * channel connects only where the check allowed; its authority — the `:authority`
 * header, TLS's server name and the name its certificate is checked against — stays
 * `host:port` (grpc-js derives them from the resolver's default authority).
 *
 * This uses grpc-js's `experimental` resolver API (registerResolver, statusOrFromValue);
 * src/upstream/upstream-clients.spec.ts fails if it stops pinning.
 */
const SCHEME = 'a2a-pinned';

/** `host:port` → the address last vetted for it. */
const pins = new Map<string, ResolvedAddress>();

class PinnedResolver implements grpc.experimental.Resolver {
  private reported = false;

  constructor(
    private readonly target: grpc.experimental.GrpcUri,
    private readonly listener: grpc.experimental.ResolverListener,
  ) {}

  updateResolution(): void {
    if (this.reported) {
      return;
    }
    this.reported = true;
    process.nextTick(() => {
      const hostPort = grpc.experimental.splitHostPort(this.target.path);
      const pin = pins.get(this.target.path);
      if (!pin || hostPort?.port === undefined) {
        this.listener(
          grpc.experimental.statusOrFromError({
            code: grpc.status.UNAVAILABLE,
            details: 'no vetted address for this upstream',
          }),
          {},
          null,
          '',
        );
        return;
      }
      this.listener(
        grpc.experimental.statusOrFromValue([{ addresses: [{ host: pin.address, port: hostPort.port }] }]),
        {},
        null,
        '',
      );
    });
  }

  destroy(): void {
    this.reported = false;
  }

  static getDefaultAuthority(target: grpc.experimental.GrpcUri): string {
    return target.path;
  }
}

let registered = false;

/** The channel target for `host:port`, whose connections go to `address` (vetted) from now on. */
export function pinnedTarget(host: string, port: number, address: ResolvedAddress): string {
  if (!registered) {
    grpc.experimental.registerResolver(SCHEME, PinnedResolver);
    registered = true;
  }
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  pins.set(hostPort, address);
  return `${SCHEME}:///${hostPort}`;
}
