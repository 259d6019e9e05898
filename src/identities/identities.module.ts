import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Identity } from './identity.entity';

/** Agent identities. Routes, signup and claim arrive with the identities issue. */
@Module({
  imports: [TypeOrmModule.forFeature([Identity])],
})
export class IdentitiesModule {}
