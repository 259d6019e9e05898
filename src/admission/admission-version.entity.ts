import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: a random value replaced by every committed change to identities and contact
 * rules (triggers: the AdmissionVersion migration). A call's parties read at one version
 * hold for as long as the version stays (AdmissionService.admitCall).
 */
@Entity({ name: 'admission_version' })
export class AdmissionVersion {
  @PrimaryColumn({ type: 'boolean' })
  singleton: boolean;

  @Column({ type: 'uuid' })
  version: string;
}
