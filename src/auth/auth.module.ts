import { DynamicModule, Module, type ModuleMetadata, type Type } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { LimitsModule } from '../limits/limits.module';
import { ApiKeyGuard } from './api-key.guard';
import { AuthService } from './auth.service';
import { CredentialCheck } from './credential-check';
import { AccessTokenVerifier, ApiKeyVerifier, SessionVerifier } from './credential-verifiers';
import { SurfaceCoverageCheck } from './surface-coverage';

/** Who verifies each kind of credential, and the modules that provide them. */
export interface CredentialVerifiers {
  imports: NonNullable<ModuleMetadata['imports']>;
  apiKeys: Type<ApiKeyVerifier>;
  sessions: Type<SessionVerifier>;
  tokens: Type<AccessTokenVerifier>;
}

/**
 * The global guard and the one credential check. Global so that the gRPC binding
 * gets CredentialCheck without importing this module (whose verifiers AppModule binds).
 */
@Module({})
export class AuthModule {
  static forRoot(verifiers: CredentialVerifiers): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      imports: [DiscoveryModule, LimitsModule, ...verifiers.imports],
      providers: [
        AuthService,
        CredentialCheck,
        SurfaceCoverageCheck,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: ApiKeyVerifier, useExisting: verifiers.apiKeys },
        { provide: SessionVerifier, useExisting: verifiers.sessions },
        { provide: AccessTokenVerifier, useExisting: verifiers.tokens },
      ],
      exports: [CredentialCheck, AccessTokenVerifier],
    };
  }
}
