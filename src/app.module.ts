import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { AdmissionModule } from './admission/admission.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { LoggerModule } from './common/logger.module';
import { ConfigModule } from './config/config.module';
import type { AppConfig } from './config/config';
import { ConsoleModule } from './console/console.module';
import { ConsoleService } from './console/console.service';
import { DatabaseModule } from './database/database.module';
import { DirectoryModule } from './directory/directory.module';
import { EventStreamModule } from './event-stream/event-stream.module';
import { OverviewModule } from './overview/overview.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { IdentitiesModule } from './identities/identities.module';
import { KeysModule } from './keys/keys.module';
import { KeysService } from './keys/keys.service';
import { MetricsModule } from './metrics/metrics.module';
import { LedgerModule } from './ledger/ledger.module';
import { OAuthModule } from './oauth/oauth.module';
import { TokenVerifier } from './oauth/token-verifier';
import { PortsModule } from './ports.module';
import { ProtocolModule } from './protocol/protocol.module';
import { RetentionModule } from './retention/retention.module';
import { UpstreamModule } from './upstream/upstream.module';
import { UsageModule } from './usage/usage.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logger),
        DatabaseModule.forRoot(config, logger),
        AuditModule,
        MetricsModule,
        AuthModule.forRoot({
          imports: [KeysModule, ConsoleModule, OAuthModule],
          apiKeys: KeysService,
          sessions: ConsoleService,
          tokens: TokenVerifier,
        }),
        PortsModule,
        ConsoleModule,
        KeysModule,
        IdentitiesModule,
        AdmissionModule,
        ApprovalsModule,
        DirectoryModule,
        UsageModule,
        LedgerModule,
        ProtocolModule,
        UpstreamModule,
        EventsModule,
        EventStreamModule,
        OverviewModule,
        HealthModule,
        OAuthModule,
        RetentionModule,
      ],
    };
  }
}
