/**
 * testssl.sh (Debian's `testssl`), the thorough and slow second opinion: its flat JSON findings,
 * with every MEDIUM/HIGH/CRITICAL one a problem unless it is listed below with the reason it
 * does not apply to a webhook that kube-apiserver reaches through its caBundle.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ScanTarget } from './target.js';
import type { Problem } from './verdict.js';

const run = promisify(execFile);

export const TESTSSL_INSTALL_HINT = 'install it with: apt-get install -y --no-install-recommends testssl.sh';
const TESTSSL_TIMEOUT_MS = 10 * 60_000;
const FAILING_SEVERITIES = new Set(['MEDIUM', 'HIGH', 'CRITICAL']);

export interface TestsslFinding {
  id: string;
  severity: string;
  finding: string;
}

/** Findings that are expected for a private, caBundle-pinned CA, with why they are not a weakness. */
export const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  cert_revocation:
    'no CRL or OCSP URI: kube-apiserver trusts exactly the caBundle and checks no revocation; a leaked key is answered by a new CA and leaf, and a leaf lives a year by default',
  DNS_CAArecord: 'CAA governs public CAs issuing for public DNS names; the service name is cluster-internal',
};

/** Findings worth stating in the summary even when they are fine. */
export const NOTABLE_IDS = [
  'cert_chain_of_trust', 'secure_renego', 'secure_client_renego', 'CRIME_TLS', 'BREACH', 'ROBOT', 'heartbleed', 'LUCKY13',
  'TLS_session_ticket', 'sessionresumption_ticket', 'sessionresumption_ID', 'OCSP_stapling', 'HSTS_time', 'fallback_SCSV',
];

export function testsslProblems(findings: readonly TestsslFinding[]): Problem[] {
  return findings
    .filter((f) => (FAILING_SEVERITIES.has(f.severity) && NOT_APPLICABLE[f.id] === undefined) || f.id === 'scanProblem')
    .map((f) => ({ check: 'testssl', subject: f.id, detail: `${f.severity}: ${f.finding}` }));
}

export interface TestsslReport {
  version: string;
  findings: TestsslFinding[];
}

/** Runs testssl against the target's address under its service name, trusting `caFile`. */
export async function runTestssl(target: ScanTarget, caFile: string, signal?: AbortSignal): Promise<TestsslReport> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-testssl-'));
  const jsonFile = join(dir, 'testssl.json');
  const uri = `https://${target.serverName ?? target.host}:${target.port}/`;
  const args = ['--quiet', '--color', '0', '--warnings', 'off', '--ip', target.host, '--add-ca', caFile, '--jsonfile', jsonFile, uri];
  try {
    const options = { timeout: TESTSSL_TIMEOUT_MS, killSignal: 'SIGKILL' as const, maxBuffer: 64 * 1024 * 1024, ...(signal ? { signal } : {}) };
    // testssl exits non-zero when it has findings; the JSON file is the result either way.
    await run('testssl', args, options).catch((error: NodeJS.ErrnoException & { killed?: boolean }) => {
      if (error.code === 'ENOENT') throw new Error(`testssl (testssl.sh) is not installed: ${TESTSSL_INSTALL_HINT}`, { cause: error });
      if (signal?.aborted || error.killed) throw error;
    });
    const findings = JSON.parse(await readFile(jsonFile, 'utf8')) as TestsslFinding[];
    return { version: await testsslVersion(), findings };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function testsslVersion(): Promise<string> {
  const { stdout } = await run('testssl', ['--version'], { timeout: 30_000 }).catch(() => ({ stdout: '' }));
  // eslint-disable-next-line no-control-regex -- the banner is coloured even with --color 0
  const plain = stdout.replace(/\x1b\[[0-9;]*m/g, '');
  return /testssl\s+(\S+)\s+from/.exec(plain)?.[1] ?? 'unknown';
}
