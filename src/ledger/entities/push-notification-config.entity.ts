import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type A2AVersion = '0.3' | '1.0';

/**
 * An A2A push notification config, owned by the task's requester. Stored here;
 * delivery rides on the events module. `protocolVersion` is the A2A version it was
 * set with, which decides the payload shape it will be sent.
 */
@Entity({ name: 'push_notification_configs' })
export class PushNotificationConfig {
  @PrimaryColumn({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @PrimaryColumn({ name: 'config_id', type: 'varchar' })
  configId: string;

  @Column({ name: 'owner_identity_id', type: 'uuid' })
  ownerIdentityId: string;

  @Column({ type: 'varchar' })
  url: string;

  @Column({ type: 'varchar', nullable: true })
  token: string | null;

  @Column({ type: 'jsonb', nullable: true })
  authentication: { scheme: string; credentials: string } | null;

  @Column({ name: 'protocol_version', type: 'varchar' })
  protocolVersion: A2AVersion;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
