/**
 * `npm run tls-scan [-- --full]`: starts the compiled server in local mode (its own CA in a
 * scratch directory), scans it with sslscan and the probes (and testssl with --full), stops it
 * with SIGTERM, prints the summary and exits 1 when the verdict lists any problem.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildServer } from '../../test/support/child-server.js';
import { freePort } from '../../test/support/free-port.js';
import { scanTarget, type ScanResult } from './scan.js';
import { formatSummary } from './summary.js';

const SERVICE_NAME = 'kube-admission-server.default.svc';
const READY_TIMEOUT_MS = 30_000;

async function scanLocalServer(full: boolean, signal: AbortSignal): Promise<ScanResult> {
  const certDir = await mkdtemp(join(tmpdir(), 'kas-tls-scan-'));
  const port = await freePort();
  const server = new ChildServer(['--port', String(port), '--health-port', String(await freePort()), '--cert-dir', certDir]);
  try {
    await server.waitForMessage('ready', READY_TIMEOUT_MS);
    const target = { host: '127.0.0.1', port, serverName: SERVICE_NAME };
    const result = await scanTarget(target, { signal, ...(full ? { testsslCaFile: join(certDir, 'ca.crt') } : {}) });
    const exit = await server.stop('SIGTERM');
    if (exit.code !== 0) throw new Error(`the server exited with ${exit.code} after SIGTERM: ${server.stderr.slice(-500)}`);
    return result;
  } finally {
    await server.stop('SIGKILL');
    await rm(certDir, { recursive: true, force: true });
  }
}

function writeResults(result: ScanResult, started: Date): string {
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/tls-scan-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  const verdict = result.problems.length === 0 ? 'pass' : 'fail';
  writeFileSync(file, JSON.stringify({ started: started.toISOString(), node: process.version, verdict, ...result }, null, 2));
  return file;
}

async function main(): Promise<void> {
  const full = process.argv.includes('--full');
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const started = new Date();
  console.error(`[tls-scan] server under Node ${process.version}; sslscan${full ? ' + testssl (about a minute)' : ''}`);
  const result = await scanLocalServer(full, controller.signal);
  console.log(`${formatSummary(result)}\n(${started.toISOString()}, Node ${process.version})`);
  console.error(`[tls-scan] raw results: ${writeResults(result, started)}`);
  process.exitCode = result.problems.length === 0 ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(`[tls-scan] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
});
