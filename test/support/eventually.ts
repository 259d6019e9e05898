/**
 * Reads until `predicate` holds for what was read, for state that settles
 * asynchronously (a delivery recorded after its send). Fails with the last value
 * read after `timeoutMs`; never asserts on how long it took.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  predicate: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (predicate(value)) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`never settled within ${timeoutMs} ms; last read: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
