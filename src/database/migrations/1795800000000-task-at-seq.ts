import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A task's lock, taken only if the task is still where its writer believes it is
 * (issue 13): `a2a_lock_task_at(task, seq)` locks the task's row (`FOR UPDATE`, so
 * concurrent writers queue as with LedgerRepository.lockTask) and raises SQLSTATE
 * `TMOVE` ("the task moved on", a code of its own: nothing else raises it, so a writer
 * that sees it knows its transaction failed there, before COMMIT) unless the row exists
 * at event `seq`. A writer that
 * knows the task as this instance last committed it sends it ahead of its writes, in
 * the same round trip, instead of reading the row first; a task that has moved on
 * since fails the transaction before any of its writes, and the writer runs again
 * with a lock it reads (TasksService.reply).
 *
 * A function because a plain statement cannot fail on a row it did not find; under
 * READ COMMITTED the lock waits for a concurrent writer and then checks the row as
 * that writer left it.
 */
export class TaskAtSeq1795800000000 implements MigrationInterface {
  name = 'TaskAtSeq1795800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION a2a_lock_task_at(p_task uuid, p_seq integer) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM tasks WHERE id = p_task AND seq = p_seq FOR UPDATE;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'task % is no longer at event %', p_task, p_seq USING ERRCODE = 'TMOVE';
        END IF;
      END $$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION a2a_lock_task_at(uuid, integer);`);
  }
}
