import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LimitsModule } from '../limits/limits.module';
import { ConsoleController } from './console.controller';
import { ConsoleService } from './console.service';
import { ConsoleSession } from './console-session.entity';
import { ConsoleUser } from './console-user.entity';
import { Organization } from './organization.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Organization, ConsoleUser, ConsoleSession]), LimitsModule],
  controllers: [ConsoleController],
  providers: [ConsoleService],
  exports: [ConsoleService],
})
export class ConsoleModule {}
