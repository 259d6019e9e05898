import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity';
import { AuditContextInterceptor } from './audit-context';
import { AuditController } from './audit.controller';
import { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';

/** The audit log (CONTRACT §15). Global: every module that changes things records here. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent])],
  controllers: [AuditController],
  providers: [AuditService, AuditRepository, { provide: APP_INTERCEPTOR, useClass: AuditContextInterceptor }],
  exports: [AuditService, AuditRepository],
})
export class AuditModule {}
