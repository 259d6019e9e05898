import { Global, Module } from '@nestjs/common';
import { ConsoleModule } from './console/console.module';
import { ConsoleRepository } from './console/console.repository';
import { OrganizationLocks, WebhookIdentities } from './events/event-ports';
import { IdentitiesModule } from './identities/identities.module';
import { IdentitiesRepository } from './identities/identities.repository';
import { BindableIdentities, KeyLifetimeLimits } from './keys/key-ports';

/**
 * The ports lower modules declare (docs/architecture.md, "Layers"), bound to the
 * higher modules' repositories that implement them. Only the composition root sees
 * both sides; the compiler checks each repository fits its port.
 */
@Global()
@Module({
  imports: [IdentitiesModule, ConsoleModule],
  providers: [
    { provide: BindableIdentities, useExisting: IdentitiesRepository },
    { provide: OrganizationLocks, useExisting: ConsoleRepository },
    { provide: WebhookIdentities, useExisting: IdentitiesRepository },
    { provide: KeyLifetimeLimits, useExisting: ConsoleRepository },
  ],
  exports: [BindableIdentities, OrganizationLocks, WebhookIdentities, KeyLifetimeLimits],
})
export class PortsModule {}

// Compile-time: each implementation fits its port.
const fits: [BindableIdentities, OrganizationLocks, WebhookIdentities, KeyLifetimeLimits] = [
  null as unknown as IdentitiesRepository,
  null as unknown as ConsoleRepository,
  null as unknown as IdentitiesRepository,
  null as unknown as ConsoleRepository,
];
void fits;
