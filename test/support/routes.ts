import { RequestMethod, type DynamicModule, type ForwardReference, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { SURFACE_KEY } from '../../src/auth/surface.decorator';
import { EXTRA_QUOTA_KEY } from '../../src/limits/rate-limit.decorator';

export interface RouteInfo {
  /** e.g. `GET /api/v1/api-keys/:id` */
  route: string;
  surface: string | undefined;
  /** The extra quota (`@ExtraQuota`) the route spends per client address, if any. */
  extraQuota?: string;
}

const join = (...parts: string[]) =>
  '/' +
  parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');

/** One controller's routes, from its decorators (as the guard reads them: the handler's, else the class's). */
function routesOf(controller: object, prototype: Record<string, unknown>, scanner: MetadataScanner): RouteInfo[] {
  const base = (Reflect.getMetadata(PATH_METADATA, controller) as string) ?? '';
  const routes: RouteInfo[] = [];
  for (const name of scanner.getAllMethodNames(prototype)) {
    const handler = prototype[name] as object;
    const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
    if (path === undefined) {
      continue;
    }
    const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
    const read = (key: string) =>
      (Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller)) as string | undefined;
    const surface = read(SURFACE_KEY);
    const extraQuota = read(EXTRA_QUOTA_KEY);
    for (const p of Array.isArray(path) ? path : [path]) {
      routes.push({ route: `${method} ${join(base, p)}`, surface, ...(extraQuota ? { extraQuota } : {}) });
    }
  }
  return routes;
}

const byRoute = (a: RouteInfo, b: RouteInfo) => a.route.localeCompare(b.route);

/** Every route the application's controllers declare, with the surface it names. */
export function listRoutes(app: INestApplication): RouteInfo[] {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  return discovery
    .getControllers()
    .flatMap((wrapper) =>
      routesOf(wrapper.metatype as object, Object.getPrototypeOf(wrapper.instance) as Record<string, unknown>, scanner),
    )
    .sort(byRoute);
}

type ModuleRef = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/**
 * The same, read from the module graph's decorators alone: no provider is created,
 * so no database is needed. Every controller of every module `root` imports.
 */
export function declaredRoutes(root: ModuleRef): RouteInfo[] {
  const scanner = new MetadataScanner();
  const seen = new Set<unknown>();
  const controllers = new Set<Type>();
  const visit = (ref: ModuleRef | undefined) => {
    if (!ref || ref instanceof Promise) {
      return;
    }
    const resolved = 'forwardRef' in ref ? (ref.forwardRef() as ModuleRef) : ref;
    if (seen.has(resolved)) {
      return;
    }
    seen.add(resolved);
    const dynamic = 'module' in resolved ? resolved : undefined;
    const type = dynamic ? dynamic.module : (resolved as Type);
    const metadata = (key: string) => (Reflect.getMetadata(key, type) as unknown[] | undefined) ?? [];
    for (const controller of [...metadata(MODULE_METADATA.CONTROLLERS), ...(dynamic?.controllers ?? [])]) {
      controllers.add(controller as Type);
    }
    for (const imported of [...metadata(MODULE_METADATA.IMPORTS), ...(dynamic?.imports ?? [])]) {
      visit(imported as ModuleRef);
    }
  };
  visit(root);
  return [...controllers]
    .flatMap((controller) => routesOf(controller, controller.prototype as Record<string, unknown>, scanner))
    .sort(byRoute);
}
