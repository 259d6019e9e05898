/**
 * `promise`, or the error `timedOut` makes if it has not settled within `ms`. The timer
 * never holds the process open (a server's sockets do that), and is cleared either way.
 * Here rather than in common/, which builds on this folder: the LISTEN connection uses it.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
