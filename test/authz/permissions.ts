import { join } from 'node:path';
import pino from 'pino';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { AppModule } from '../../src/app.module';
import { SURFACES, type SurfaceName, type SurfacePolicy } from '../../src/auth/surfaces';
import type { AppConfig } from '../../src/config/config';
import { GRPC_SURFACE } from '../../src/protocol/grpc-binding.service';
import { declaredRoutes } from '../support/routes';

/**
 * Who may reach what, resolved: for every HTTP route (method and path template) and
 * every gRPC method, the surface it declares, the credentials that surface accepts,
 * whether an agent key must belong to a claimed identity, and any extra quota. The
 * file is checked in, so a change in who may reach a route is a diff in review.
 * Read from the decorators alone (no application, no database); authz.e2e-spec.ts
 * checks the running application serves exactly these routes with these surfaces.
 *
 * After an intended change: UPDATE_SNAPSHOT=1 npx jest test/authz/permissions-snapshot.e2e-spec.ts
 */
export const PERMISSIONS_SNAPSHOT = join(__dirname, 'permissions.snapshot.json');

interface Permission {
  surface: SurfaceName;
  credentials: string[];
  claimed: boolean;
  extraQuota?: string;
}

function permission(surface: string | undefined, extraQuota?: string): Permission {
  if (!surface || !Object.hasOwn(SURFACES, surface)) {
    throw new Error(`unknown surface: ${String(surface)}`);
  }
  const policy: SurfacePolicy = SURFACES[surface as SurfaceName];
  return {
    surface: surface as SurfaceName,
    credentials: [...policy.credentials].sort(),
    // Only an agent key can be unclaimed: the flag says nothing for a surface that takes none.
    claimed: policy.claimed && policy.credentials.includes('agent'),
    ...(extraQuota ? { extraQuota } : {}),
  };
}

/** The snapshot as JSON, one line per route, sorted, so that a diff names each route whose access changed. */
export function renderPermissions(sections: Record<string, Record<string, Permission>>): string {
  const section = (name: string, entries: Record<string, Permission>) => {
    const lines = Object.keys(entries)
      .sort()
      .map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(entries[key])}`);
    return `  ${JSON.stringify(name)}: {\n${lines.join(',\n')}\n  }`;
  };
  return `{\n${Object.entries(sections)
    .map(([name, entries]) => section(name, entries))
    .join(',\n')}\n}\n`;
}

export function resolvedPermissions(): { http: Record<string, Permission>; grpc: Record<string, Permission> } {
  const routes = declaredRoutes(AppModule.forRoot({} as AppConfig, pino({ enabled: false })));
  const http: Record<string, Permission> = {};
  for (const { route, surface, extraQuota } of routes) {
    if (http[route]) {
      throw new Error(`route declared twice: ${route}`);
    }
    http[route] = permission(surface, extraQuota);
  }
  const grpc: Record<string, Permission> = {};
  for (const service of [A2AService, LegacyA2AService]) {
    for (const method of Object.values(service)) {
      grpc[method.path] = permission(GRPC_SURFACE);
    }
  }
  return { http, grpc };
}
