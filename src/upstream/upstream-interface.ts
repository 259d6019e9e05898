import { isIP } from 'node:net';
import type { AgentCard } from '@a2a-js/sdk';
import { AppError } from '../common/app-error';
import { classifyAddress } from '../events/address-policy';
import type { UpstreamBinding, UpstreamVersion } from './dto/set-upstream.dto';

/** The bindings the forwarder speaks (the SDK client's JSON-RPC, HTTP+JSON and gRPC transports, both generations). */
const FORWARDED_BINDINGS: readonly UpstreamBinding[] = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

/** The binding and generation the forwarder calls an upstream with. */
export interface InterfaceChoice {
  binding: UpstreamBinding;
  protocolVersion: UpstreamVersion;
  /** The URL of the card's interface that was chosen, as the card gives it; null when none of the card's was. */
  url: string | null;
}

/**
 * What the forwarder calls: the binding and generation the request names, with the
 * card filling in what it leaves open. The card's order is its preference (a v0.3
 * card's preferredTransport comes first): the first interface that the forwarder
 * speaks and the request allows is the one called. Cards spell versions "1.0", "0.3",
 * "0.3.0"…: the generation is what counts; an interface that names no version (some
 * cards in the 1.0 shape omit it; a 0.3-shaped card is read as 0.3 by the SDK) is taken
 * as 1.0, the generation of its card's shape. 422 `upstream_binding_unsupported` when
 * nothing the forwarder speaks is left.
 */
export function chooseInterface(
  card: AgentCard | null,
  wanted: { binding?: UpstreamBinding; protocolVersion?: UpstreamVersion },
): InterfaceChoice {
  // The card's interfaces that have the shape of one (the card is the upstream's JSON).
  const offered = (Array.isArray(card?.supportedInterfaces) ? card.supportedInterfaces : [])
    .filter((i) => typeof i?.url === 'string' && typeof i.protocolBinding === 'string')
    .map((i) => ({
      url: i.url,
      binding: i.protocolBinding as UpstreamBinding,
      version:
        i.protocolVersion === undefined || i.protocolVersion === ''
          ? ('1.0' as const)
          : typeof i.protocolVersion === 'string'
            ? generationOf(i.protocolVersion)
            : null,
    }));
  const chosen = offered.find(
    (i) =>
      (!wanted.binding || i.binding === wanted.binding) &&
      (!wanted.protocolVersion || i.version === wanted.protocolVersion) &&
      FORWARDED_BINDINGS.includes(i.binding) &&
      i.version !== null,
  );
  const binding = wanted.binding ?? chosen?.binding;
  const protocolVersion = wanted.protocolVersion ?? chosen?.version ?? undefined;
  if (!binding || !protocolVersion) {
    throw new AppError(
      422,
      'upstream_binding_unsupported',
      `The upstream's card offers no ${FORWARDED_BINDINGS.join(', ')} interface of A2A 1.0 or 0.3 that the forwarder speaks.`,
    );
  }
  if (!FORWARDED_BINDINGS.includes(binding)) {
    throw new AppError(
      422,
      'upstream_binding_unsupported',
      `The forwarder speaks ${FORWARDED_BINDINGS.join(', ')} to upstreams; ${binding} is not supported.`,
    );
  }
  const fromCard = chosen !== undefined && chosen.binding === binding && chosen.version === protocolVersion;
  return { binding, protocolVersion, url: fromCard ? chosen.url : null };
}

/**
 * A card interface's URL as an upstream URL. gRPC interfaces name `host:port` (or a
 * `grpc://`/`grpcs://` URL): stored as `https://host:port` (TLS), or `http://host:port`
 * (plaintext) when private networks are allowed and the host is a non-public address literal.
 */
export function interfaceUrl(raw: string, binding: UpstreamBinding, allowPrivateNetworks: boolean): string {
  if (binding !== 'GRPC') {
    return raw;
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    return raw;
  }
  if (scheme === 'grpcs') {
    return `https://${raw.slice('grpcs://'.length)}`;
  }
  const address = scheme === 'grpc' ? raw.slice('grpc://'.length) : raw;
  const host = address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  const plaintext =
    allowPrivateNetworks && (scheme === 'grpc' || (isIP(host) !== 0 && classifyAddress(host) !== 'public'));
  return `${plaintext ? 'http' : 'https'}://${address}`;
}

function generationOf(version: string): UpstreamVersion | null {
  if (/^1\.0(\.\d+)?$/.test(version)) {
    return '1.0';
  }
  if (/^0\.3(\.\d+)?$/.test(version)) {
    return '0.3';
  }
  return null;
}
