import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PATH_METADATA } from '@nestjs/common/constants';
import { SURFACE_KEY } from './surface.decorator';

/**
 * Refuses to start when a route declares no surface. The guard would already deny
 * such a route; failing at boot makes the mistake impossible to ship.
 */
@Injectable()
export class SurfaceCoverageCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const missing: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as object | undefined;
      if (!instance) {
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method] as () => unknown;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) {
          continue;
        }
        if (!this.reflector.getAllAndOverride(SURFACE_KEY, [handler, wrapper.metatype as () => unknown])) {
          missing.push(`${wrapper.name}.${method}`);
        }
      }
    }
    if (missing.length > 0) {
      throw new Error(`routes without @Surface: ${missing.join(', ')}`);
    }
  }
}
