import { Entity, PrimaryColumn } from 'typeorm';

/** A task waiting on an approval request; removed once it stops waiting (approved, denied, expired, canceled). */
@Entity({ name: 'approval_tasks' })
export class ApprovalTask {
  @PrimaryColumn({ name: 'approval_id', type: 'uuid' })
  approvalId: string;

  @PrimaryColumn({ name: 'task_id', type: 'uuid' })
  taskId: string;
}
