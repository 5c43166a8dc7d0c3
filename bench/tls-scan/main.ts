/**
 * `npm run tls-scan [-- --full] [-- --client-ca]`: starts the compiled server in local mode (its
 * own CA in a scratch directory), scans it with sslscan and the probes (and testssl with --full),
 * stops it with SIGTERM, prints the summary and exits 1 when the verdict lists any problem.
 * --client-ca scans a second server that requires client certificates, presenting one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANY_PORTS, ChildServer } from '../../test/support/server/child-server.js';
import { createTestCa } from '../../test/support/tls/test-certs.js';
import { scanTarget, type ScanResult } from './scan.js';
import { formatSummary } from './summary.js';
import type { ScanTarget } from './target.js';

const SERVICE_NAME = 'kube-admission-server.default.svc';
const READY_TIMEOUT_MS = 30_000;

interface ServerMode {
  /** Extra server flags and the client certificate to present, written into the scratch directory. */
  prepare(dir: string): Promise<{ args: string[]; clientCertificate?: ScanTarget['clientCertificate'] }>;
  testssl: boolean;
}

const plainMode = (testssl: boolean): ServerMode => ({ prepare: async () => ({ args: [] }), testssl });

const clientCaMode: ServerMode = {
  testssl: false,
  async prepare(dir) {
    const ca = createTestCa('tls-scan client CA');
    const client = ca.issue({ commonName: 'kube-apiserver', usage: 'client' });
    const files = { ca: join(dir, 'client-ca.crt'), certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') };
    await writeFile(files.ca, ca.certPem);
    await writeFile(files.certFile, client.certPem);
    await writeFile(files.keyFile, client.keyPem, { mode: 0o600 });
    return { args: ['--client-ca', files.ca], clientCertificate: { certFile: files.certFile, keyFile: files.keyFile } };
  },
};

async function scanLocalServer(mode: ServerMode, signal: AbortSignal): Promise<ScanResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-tls-scan-'));
  const certDir = join(dir, 'certs');
  const { args, clientCertificate } = await mode.prepare(dir);
  const server = new ChildServer([...ANY_PORTS, '--cert-dir', certDir, ...args]);
  try {
    const { port } = await server.listening(READY_TIMEOUT_MS);
    await server.waitForMessage('ready', READY_TIMEOUT_MS);
    const target: ScanTarget = { host: '127.0.0.1', port, serverName: SERVICE_NAME, ...(clientCertificate ? { clientCertificate } : {}) };
    const result = await scanTarget(target, { signal, ...(mode.testssl ? { testsslCaFile: join(certDir, 'ca.crt') } : {}) });
    const exit = await server.stop('SIGTERM');
    if (exit.code !== 0) throw new Error(`the server exited with ${exit.code} after SIGTERM: ${server.stderr.slice(-500)}`);
    return result;
  } finally {
    await server.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

function writeResults(results: readonly ScanResult[], started: Date): string {
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/tls-scan-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  const verdict = results.every((r) => r.problems.length === 0) ? 'pass' : 'fail';
  writeFileSync(file, JSON.stringify({ started: started.toISOString(), node: process.version, verdict, results }, null, 2));
  return file;
}

async function main(): Promise<void> {
  const full = process.argv.includes('--full');
  const modes = [plainMode(full), ...(process.argv.includes('--client-ca') ? [clientCaMode] : [])];
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  const started = new Date();
  console.error(`[tls-scan] server under Node ${process.version}; sslscan${full ? ' + testssl (a minute or two)' : ''}`);
  const results: ScanResult[] = [];
  for (const mode of modes) results.push(await scanLocalServer(mode, controller.signal));
  console.log(`${results.map(formatSummary).join('\n\n')}\n(${started.toISOString()}, Node ${process.version})`);
  console.error(`[tls-scan] raw results: ${writeResults(results, started)}`);
  process.exitCode = results.every((r) => r.problems.length === 0) ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(`[tls-scan] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 2;
});
