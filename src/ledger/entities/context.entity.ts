import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { Participants } from './participants.embedded';

/** A conversation between one requester and one worker; its tasks share it. */
@Entity({ name: 'contexts' })
export class TaskContext {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column(() => Participants, { prefix: false })
  participants: Participants;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
