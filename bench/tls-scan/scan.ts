/** One scan of a target: sslscan, the two probes sslscan cannot replace, optionally testssl, and the verdict. */
import { probeHello } from './hello-probe.js';
import { probeClientRenegotiation } from './renegotiation-probe.js';
import { runSslscan } from './sslscan.js';
import type { ScanTarget } from './target.js';
import { runTestssl, testsslProblems, type TestsslReport } from './testssl.js';
import { judge, type Evidence, type Problem } from './verdict.js';

export interface ScanResult {
  target: ScanTarget;
  evidence: Evidence;
  testssl?: TestsslReport;
  problems: Problem[];
}

export interface ScanOptions {
  signal?: AbortSignal;
  /** Also run testssl (about a minute), trusting this CA file. */
  testsslCaFile?: string;
}

export async function scanTarget(target: ScanTarget, options: ScanOptions = {}): Promise<ScanResult> {
  const { signal } = options;
  // One after another: sslscan's 3-second socket timeout should not compete with the probes.
  const evidence: Evidence = {
    sslscan: await runSslscan(target, signal),
    hello: await probeHello(target, signal),
    renegotiation: await probeClientRenegotiation(target, signal),
  };
  const problems = judge(evidence);
  if (options.testsslCaFile === undefined) return { target, evidence, problems };
  const testssl = await runTestssl(target, options.testsslCaFile, signal);
  return { target, evidence, testssl, problems: [...problems, ...testsslProblems(testssl.findings)] };
}
