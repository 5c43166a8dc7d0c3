/** Exactly `count` review POSTs over `connections` keep-alive TLS connections: a load measured by work done, not by time. */
import https from 'node:https';

export interface FixedCountLoad {
  port: number;
  path: string;
  body: string;
  count: number;
  connections: number;
  /** Per request: a server under valgrind is ~50x slower than usual. */
  requestTimeoutMs: number;
  /** Keep-alive connections to reuse (and leave open); a fresh agent, destroyed at the end, by default. */
  agent?: https.Agent;
}

export interface FixedCountResult {
  ok: number;
  failed: number;
}

/** One review POSTed to a bench server: true when answered 200 (the body read to its end). */
export function postReview(agent: https.Agent, load: { port: number; path: string; body: string; requestTimeoutMs: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port: load.port,
        path: load.path,
        method: 'POST',
        agent,
        timeout: load.requestTimeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(load.body) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode === 200));
        response.on('error', () => resolve(false));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', () => resolve(false));
    request.end(load.body);
  });
}

/** A keep-alive agent for `connections` connections to a bench server (the bench CA is throwaway, the servers on loopback). */
export function benchAgent(connections: number): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets: connections, rejectUnauthorized: false });
}

export async function sendFixedCount(load: FixedCountLoad): Promise<FixedCountResult> {
  const agent = load.agent ?? benchAgent(load.connections);
  const result: FixedCountResult = { ok: 0, failed: 0 };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < load.count) {
      next++;
      if (await postReview(agent, load)) result.ok++;
      else result.failed++;
    }
  };
  try {
    await Promise.all(Array.from({ length: load.connections }, worker));
    return result;
  } finally {
    if (!load.agent) agent.destroy();
  }
}
