import { StreamResponse, Task } from '@a2a-js/sdk';
import { AppError } from '../common/app-error';
import { AnswerReader, AnswerRefused, refusalOf } from './upstream-answer';

const ids = { id: 'up', contextId: 'ctx' };
const text = (value: string) => ({ text: value });
const event = (json: Record<string, unknown>) => StreamResponse.fromJSON(json);
const status = (state: string, messageId?: string, value?: string) => ({
  state,
  ...(messageId ? { message: { messageId, role: 'ROLE_AGENT', parts: [text(value ?? messageId)] } } : {}),
});

describe('AnswerReader', () => {
  it('takes a stream’s first Task for its ids; a later one as a snapshot that repeats nothing', () => {
    const reader = new AnswerReader(256 * 1024);
    expect(reader.event(event({ task: { ...ids, status: status('TASK_STATE_SUBMITTED') } }))).toEqual({
      upstream: { taskId: 'up', contextId: 'ctx' },
    });
    reader.event(
      event({ artifactUpdate: { taskId: 'up', contextId: 'ctx', artifact: { artifactId: 'a', parts: [text('x')] } } }),
    );
    const snapshot = reader.event(
      event({
        task: {
          ...ids,
          status: status('TASK_STATE_COMPLETED', 'done'),
          history: [{ messageId: 'n', role: 'ROLE_AGENT', parts: [text('note')] }],
          artifacts: [
            { artifactId: 'a', parts: [text('x')] },
            { artifactId: 'b', parts: [text('y')] },
          ],
        },
      }),
    );
    expect(snapshot).toMatchObject({
      state: 'completed',
      message: { messageId: 'done' },
      history: [{ messageId: 'n' }],
      artifacts: [{ artifactId: 'b' }],
    });
  });

  it('records a status message that grows under one messageId as versions, and the one the task settles with', () => {
    const reader = new AnswerReader(256 * 1024);
    const snap = (state: string, value: string) =>
      reader.event(event({ task: { ...ids, status: status(state, 'v', value) } }))?.message?.messageId;
    reader.event(event({ task: { ...ids, status: status('TASK_STATE_WORKING') } }));
    expect(snap('TASK_STATE_WORKING', 'He')).toBe('v');
    expect(snap('TASK_STATE_WORKING', 'Hello')).toBeUndefined(); // within a second of the last
    expect(snap('TASK_STATE_COMPLETED', 'Hello')).toBe('v.2');
  });

  it('refuses an answer past a REST reply’s limits, naming the limit', () => {
    const reader = new AnswerReader(1024);
    const many = Task.fromJSON({
      ...ids,
      status: status('TASK_STATE_COMPLETED'),
      artifacts: Array.from({ length: 11 }, (_, i) => ({ artifactId: `a${i}`, parts: [text('x')] })),
    });
    expect(() => reader.task(many)).toThrow(
      new AnswerRefused('it holds 11 artifacts, more than the 10 an answer may hold'),
    );
    const big = Task.fromJSON({ ...ids, status: status('TASK_STATE_COMPLETED', 'm', 'x'.repeat(2000)) });
    expect(() => new AnswerReader(1024).task(big)).toThrow(/bytes, more than the 1024 an answer may hold/);
    const nul = Task.fromJSON({ ...ids, status: status('TASK_STATE_COMPLETED', 'm', 'a\u0000b') });
    expect(() => new AnswerReader(1024).task(nul)).toThrow(
      new AnswerRefused('it holds a NUL character, which cannot be stored'),
    );
    const surrogate = Task.fromJSON({ ...ids, status: status('TASK_STATE_COMPLETED', 'm', 'a\ud800b') });
    expect(() => new AnswerReader(1024).task(surrogate)).toThrow(
      new AnswerRefused('it holds a lone UTF-16 surrogate, which is not text and cannot be stored'),
    );
  });

  it('takes the usage an answer reports only with the update that ends the task, the event’s before its message’s', () => {
    const usage = (input_tokens: number) => ({ usage: { input_tokens, output_tokens: 1 } });
    const update = (state: string, metadata?: object, messageMetadata?: object) =>
      new AnswerReader(256 * 1024).event(
        event({
          statusUpdate: {
            taskId: 'up',
            contextId: 'ctx',
            status: {
              state,
              message: { messageId: 'm', role: 'ROLE_AGENT', parts: [text('x')], metadata: messageMetadata },
            },
            metadata,
          },
        }),
      );
    // A working update's report is not the task's: none is taken.
    expect(update('TASK_STATE_WORKING', usage(5))).not.toHaveProperty('usage');
    expect(update('TASK_STATE_COMPLETED', usage(5), usage(9))?.usage).toEqual({
      inputTokens: 5,
      outputTokens: 1,
      cost: null,
    });
    expect(update('TASK_STATE_FAILED', undefined, usage(9))?.usage).toMatchObject({ inputTokens: 9 });
    // A malformed report is none, and the next place is read.
    expect(update('TASK_STATE_COMPLETED', { usage: { input_tokens: -1 } }, usage(9))?.usage).toMatchObject({
      inputTokens: 9,
    });
  });

  it('turns the ledger’s refusals of an answer into AnswerRefused, and leaves other errors alone', () => {
    const limit = new AppError(
      409,
      'task_artifact_limit',
      "The task's artifacts would exceed their maximum of 9 bytes of content; put further output in a new task.",
    );
    expect(refusalOf(limit)).toEqual(
      new AnswerRefused("the task's artifacts would exceed their maximum of 9 bytes of content"),
    );
    const other = new Error('connection lost');
    expect(refusalOf(other)).toBe(other);
  });
});
