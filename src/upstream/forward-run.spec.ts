import { BoundExceeded, ForwardRun, ForwardStopped, nextPollWait } from './forward-run';

describe('nextPollWait', () => {
  it('starts at the first wait, then waits 1.5 times longer each time, up to the most', () => {
    const waits: number[] = [];
    let wait: number | null = null;
    for (let i = 0; i < 10; i++) {
      wait = nextPollWait(wait, 500, 10_000);
      waits.push(wait);
    }
    expect(waits).toEqual([500, 750, 1125, 1688, 2532, 3798, 5697, 8546, 10_000, 10_000]);
    expect(nextPollWait(null, 500, 200)).toBe(200);
  });
});

describe('ForwardRun', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('fails with the idle bound when the upstream is asked and answers nothing, naming it', async () => {
    const run = new ForwardRun('task', 'message', new Date(), { forwardMaxMs: 60_000, idleTimeoutMs: 50 });
    await sleep(120);
    expect(run.signal.reason).toEqual(
      new BoundExceeded('The upstream agent sent nothing for 50 ms (UPSTREAM_IDLE_TIMEOUT_MS).'),
    );
  });

  it("does not count the forwarder's own waits as the upstream's idle time", async () => {
    const run = new ForwardRun('task', 'message', new Date(), { forwardMaxMs: 60_000, idleTimeoutMs: 50 });
    await run.wait(120);
    expect(run.signal.aborted).toBe(false);
    run.touch();
    await sleep(120);
    expect(run.signal.aborted).toBe(true);
  });

  it('fails with the total bound, counted from when the forward was queued', async () => {
    const run = new ForwardRun('task', 'message', new Date(Date.now() - 1_000), {
      forwardMaxMs: 1_050,
      idleTimeoutMs: 60_000,
    });
    await sleep(120);
    expect(run.signal.reason).toEqual(
      new BoundExceeded('The upstream agent did not finish within 1050 ms (UPSTREAM_FORWARD_MAX_MS).'),
    );
  });

  it('once stopped, ends its waits with the reason and starts no bound again', async () => {
    const run = new ForwardRun('task', 'message', new Date(), { forwardMaxMs: 60_000, idleTimeoutMs: 50 });
    const waiting = run.wait(10_000);
    run.stop(new ForwardStopped('shutdown'));
    await expect(waiting).rejects.toBeInstanceOf(ForwardStopped);
    run.touch();
    await sleep(120);
    expect(run.signal.reason).toBeInstanceOf(ForwardStopped);
  });
});
