/**
 * Certificates under load, the compiled server as a child process: time to the first TLS
 * handshake on a fresh start in generate mode, and 10 rotations of a kubelet-style mounted Secret
 * in files mode while wrk drives admission load (failed requests, and the time from each swap to
 * the new certificate on a new connection).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:tls';
import { servingSans } from '../src/tls/sans.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ANY_PORTS, ChildServer } from '../test/support/server/child-server.js';
import { makeCa, makeLeaf } from '../test/support/tls/tls-fixtures.js';
import { luaScript } from './admission.js';
import { podCreateReview } from './pod-review.js';
import { listRounded, median } from './stats.js';
import { runWrk, type WrkResult } from './wrk.js';

const SERVICE = 'kube-admission-server';
const NAMESPACE = 'default';
const HOST = `${SERVICE}.${NAMESPACE}.svc`;

export interface RotationBenchResult {
  /** First start: no material yet, so the CA and leaf keys are generated. */
  firstHandshakeMs: number[];
  /** Restart of the same install: the persisted material is reused. */
  restartHandshakeMs: number[];
  rotations: number;
  swapToServedMs: number[];
  load: WrkResult;
}

export const ROTATION_TARGETS = { firstHandshakeMs: 500, swapToServedMs: 1000 };

/** The serial a new connection is served, or undefined while nothing answers TLS yet. */
function servedSerial(port: number, caPem: string | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername: HOST, ...(caPem ? { ca: caPem } : { rejectUnauthorized: false }) }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber;
      socket.destroy();
      resolve(serial);
    });
    socket.setTimeout(1000, () => (socket.destroy(), resolve(undefined)));
    socket.on('error', () => resolve(undefined));
  });
}

async function pollUntil<T>(probe: () => Promise<T | undefined>, accept: (value: T) => boolean, timeoutMs: number, everyMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const value = await probe();
    if (value !== undefined && accept(value)) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`not reached within ${timeoutMs} ms`);
}

/** Spawn -> the first completed TLS handshake, in local generate mode with `certDir`. */
async function timeToHandshake(certDir: string): Promise<number> {
  const started = performance.now();
  // Info, not warn: the kernel picks the ports (port 0) and the server logs them.
  const child = new ChildServer([...ANY_PORTS, '--cert-dir', certDir]);
  try {
    const { port } = await child.listening(15_000);
    await pollUntil(() => servedSerial(port, undefined), () => true, 15_000, 5);
    return performance.now() - started;
  } finally {
    await child.stop();
  }
}

export async function runRotationBench(log: (line: string) => void, rotations = 10, starts = 5): Promise<RotationBenchResult> {
  const firstHandshakeMs: number[] = [];
  const restartHandshakeMs: number[] = [];
  for (let i = 0; i < starts; i++) {
    log(`fresh start ${i + 1}/${starts}`);
    const certDir = mkdtempSync(path.join(tmpdir(), 'kas-first-'));
    try {
      firstHandshakeMs.push(await timeToHandshake(certDir));
      restartHandshakeMs.push(await timeToHandshake(certDir));
    } finally {
      rmSync(certDir, { recursive: true, force: true });
    }
  }

  const dir = mkdtempSync(path.join(tmpdir(), 'kas-rotation-'));
  const volume = new AtomicWriter(path.join(dir, 'secret'));
  const sans = servingSans({ serviceName: SERVICE, namespace: NAMESPACE, local: false, extraSans: [] });
  const ca = await makeCa(new Date(), 365, 'rotation bench CA');
  const leaves = await Promise.all(Array.from({ length: rotations + 1 }, () => makeLeaf(ca, sans)));
  await volume.write({ 'tls.crt': leaves[0]!.certPem, 'tls.key': leaves[0]!.keyPem, 'ca.crt': ca.certPem });
  // The poll fallback is pushed out of the way (1 h): the swap must come from the file events.
  const child = new ChildServer(['--tls-mode', 'files', '--cert-dir', volume.targetDir, ...ANY_PORTS], { WATCH_POLL_INTERVAL: '1h' });
  const script = path.join(dir, 'review.lua');
  writeFileSync(script, luaScript(JSON.stringify(podCreateReview())));
  try {
    const { port } = await child.listening(15_000);
    await pollUntil(() => servedSerial(port, ca.certPem), () => true, 15_000, 20);
    const durationSeconds = rotations + 3;
    const load = runWrk({ url: `https://127.0.0.1:${port}/validate/deny-privileged?timeout=10s`, script, connections: 32, threads: 1, durationSeconds });
    const swapToServedMs: number[] = [];
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (let i = 1; i <= rotations; i++) {
      const expected = new X509Certificate(leaves[i]!.certPem).serialNumber;
      const swappedAt = performance.now();
      await volume.write({ 'tls.crt': leaves[i]!.certPem, 'tls.key': leaves[i]!.keyPem, 'ca.crt': ca.certPem });
      await pollUntil(() => servedSerial(port, ca.certPem), (serial) => serial === expected, 10_000, 5);
      swapToServedMs.push(performance.now() - swappedAt);
      log(`rotation ${i}/${rotations}: ${Math.round(swapToServedMs.at(-1)!)} ms`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return { firstHandshakeMs, restartHandshakeMs, rotations, swapToServedMs, load: await load };
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}


export function rotationReport(r: RotationBenchResult): string {
  return [
    '| measurement | median | all runs | target |',
    '|---|---:|---|---|',
    `| first start (generate mode, local: CA and leaf keys generated) -> first TLS handshake | ${Math.round(median(r.firstHandshakeMs))} ms | ${listRounded(r.firstHandshakeMs)} | median <= ${ROTATION_TARGETS.firstHandshakeMs} ms |`,
    `| restart (generate mode, local: persisted material reused) -> first TLS handshake | ${Math.round(median(r.restartHandshakeMs))} ms | ${listRounded(r.restartHandshakeMs)} | median <= ${ROTATION_TARGETS.firstHandshakeMs} ms |`,
    `| rotation written -> new certificate on a new connection (file events, poll at 1 h) | ${Math.round(median(r.swapToServedMs))} ms | ${listRounded(r.swapToServedMs)} | median <= ${ROTATION_TARGETS.swapToServedMs} ms |`,
    '',
    `Admission load during the ${r.rotations} rotations (wrk -t1 -c32, keep-alive): ${r.load.requests} requests, ${Math.round(r.load.requestsPerSecond)} req/s, p99 ${r.load.p99Ms.toFixed(1)} ms, **${r.load.errors} failed** (target 0).`,
    '',
    `- first handshake, first start: ${median(r.firstHandshakeMs) <= ROTATION_TARGETS.firstHandshakeMs ? 'met' : 'MISSED'}; restart: ${median(r.restartHandshakeMs) <= ROTATION_TARGETS.firstHandshakeMs ? 'met' : 'MISSED'}`,
    `- swap -> served: ${median(r.swapToServedMs) <= ROTATION_TARGETS.swapToServedMs ? 'met' : 'MISSED'}`,
    `- failed requests across rotations: ${r.load.errors === 0 ? 'met' : 'MISSED'}`,
  ].join('\n');
}
