/**
 * Open-loop load: reviews sent on a fixed schedule (`ratePerSecond`), whether or not earlier ones
 * have been answered, the way kube-apiserver's callers arrive. A closed-loop tool like wrk sends
 * the next request only when the previous one returns, so a slow server slows the load down and
 * its queueing never shows ("coordinated omission"). Each latency is measured from the moment
 * the request was due, not from when it was sent: a late send counts against the server too.
 */
import { benchAgent, postReview } from './fixed-count-load.js';
import { percentile } from './stats.js';

export interface OpenLoopLoad {
  port: number;
  path: string;
  body: string;
  ratePerSecond: number;
  durationSeconds: number;
  /** Sent at the same rate first and not counted (TLS handshakes, JIT warm-up). */
  warmupSeconds: number;
  /** Keep-alive connections at most; a request that finds them all busy waits (and that counts). */
  maxConnections: number;
}

export interface OpenLoopResult {
  sent: number;
  /** Answered 200, counted. */
  ok: number;
  /** Not 200, a socket error or no answer within the request timeout. */
  errors: number;
  /** Answered per second over the measured part. */
  achievedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const REQUEST_TIMEOUT_MS = 10_000;

/** Runs the schedule to its end and waits for every answer (each bounded by REQUEST_TIMEOUT_MS). */
export async function runOpenLoop(load: OpenLoopLoad): Promise<OpenLoopResult> {
  const agent = benchAgent(load.maxConnections);
  const intervalMs = 1000 / load.ratePerSecond;
  const warmupCount = Math.round(load.warmupSeconds * load.ratePerSecond);
  const total = warmupCount + Math.round(load.durationSeconds * load.ratePerSecond);
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const send = (index: number): void => {
    const dueAt = started + index * intervalMs;
    const counted = index >= warmupCount;
    pending.push(
      postReview(agent, { ...load, requestTimeoutMs: REQUEST_TIMEOUT_MS }).then((ok) => {
        if (!counted) return;
        if (ok) latencies.push(performance.now() - dueAt);
        else errors++;
      }),
    );
  };
  try {
    await new Promise<void>((resolve) => {
      const tick = (): void => {
        const now = performance.now();
        // Everything due by now goes out, however late the timer fired.
        while (next < total && started + next * intervalMs <= now) send(next++);
        if (next >= total) return resolve();
        setTimeout(tick, Math.max(0, started + next * intervalMs - performance.now()));
      };
      tick();
    });
    await Promise.all(pending);
  } finally {
    agent.destroy();
  }
  latencies.sort((a, b) => a - b);
  return {
    sent: total - warmupCount,
    ok: latencies.length,
    errors,
    achievedPerSecond: latencies.length / load.durationSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? 0,
  };
}
