import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { SURFACE_KEY } from '../../src/auth/surface.decorator';

export interface RouteInfo {
  /** e.g. `GET /api/v1/api-keys/:id` */
  route: string;
  surface: string | undefined;
}

const join = (...parts: string[]) => '/' + parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/');

/** Every route the application's controllers declare, with the surface it names. */
export function listRoutes(app: INestApplication): RouteInfo[] {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const routes: RouteInfo[] = [];
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as object;
    const base = (Reflect.getMetadata(PATH_METADATA, controller) as string) ?? '';
    const prototype = Object.getPrototypeOf(wrapper.instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as object;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (path === undefined) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
      const surface = (Reflect.getMetadata(SURFACE_KEY, handler) ?? Reflect.getMetadata(SURFACE_KEY, controller)) as string | undefined;
      for (const p of Array.isArray(path) ? path : [path]) routes.push({ route: `${method} ${join(base, p)}`, surface });
    }
  }
  return routes.sort((a, b) => a.route.localeCompare(b.route));
}
