/** A bounded poll for conditions that emit no event (a served certificate, a process's memory). */
import { sleep } from '../../../local-cluster/util/waits.js';

/** Resolves once `condition` holds; rejects with `what` past `timeoutMs` or when `signal` aborts. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; everyMs?: number; signal?: AbortSignal },
): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (performance.now() >= deadline) throw new Error(`not within ${options.timeoutMs} ms: ${what}`);
    await sleep(options.everyMs ?? 100, options.signal);
  }
}
