import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: how many changes to identities and contact rules have committed (raised by
 * triggers: the AdmissionVersion migration). A call's parties read at one version hold
 * for as long as the version stays (AdmissionService.admitCall).
 */
@Entity({ name: 'admission_version' })
export class AdmissionVersion {
  @PrimaryColumn({ type: 'boolean', default: true })
  singleton: boolean;

  @Column({ type: 'bigint', default: 0 })
  version: string;
}
