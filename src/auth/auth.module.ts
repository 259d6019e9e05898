import { Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { ConsoleModule } from '../console/console.module';
import { KeysModule } from '../keys/keys.module';
import { LimitsModule } from '../limits/limits.module';
import { ApiKeyGuard } from './api-key.guard';
import { AuthService } from './auth.service';
import { CredentialCheck } from './credential-check';
import { SurfaceCoverageCheck } from './surface-coverage';

@Module({
  imports: [DiscoveryModule, KeysModule, ConsoleModule, LimitsModule],
  providers: [AuthService, CredentialCheck, SurfaceCoverageCheck, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [CredentialCheck],
})
export class AuthModule {}
