/** `npm run bench`: every benchmark, one after another; a Markdown report on stdout, JSON in bench/results/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { runAdmissionBench } from './admission.js';
import { admissionReport } from './admission-report.js';
import { devLoopReport, runDevLoopBench } from './dev-loop.js';
import { instructionReport, runInstructionBench } from './instructions.js';
import { lifecycleReport, runLifecycleBench } from './lifecycle.js';
import { reviewPathReport, runReviewPathBench } from './review-path.js';
import { rotationReport, runRotationBench } from './rotation.js';
import { runStartupBench, startupReport } from './startup.js';
import { groupingReport, runGroupingBench } from './grouping.js';
import { nativeLatencyReport, runNativeLatencyBench } from './native-latency.js';
import { ruleCostReport, runRuleCostBench } from './rule-cost.js';
import { runToolsBench, toolsReport } from './tools.js';
import { reportsBenchReport, runReportsBench } from './reports.js';

async function main(): Promise<void> {
  const started = new Date();
  const log = (line: string): void => console.error(`[bench] ${line}`);
  const only = process.env.BENCH_ONLY?.split(',');
  const wanted = (name: string): boolean => !only || only.includes(name);
  const sections: string[] = [];
  const raw: Record<string, unknown> = { started: started.toISOString(), node: process.version };
  if (wanted('admission')) {
    const admission = (raw['admission'] = await runAdmissionBench(log));
    log('review path, in process');
    const reviewPath = (raw['reviewPath'] = await runReviewPathBench());
    sections.push(`## Admission (${started.toISOString()}, Node ${process.version})\n\n${admissionReport(admission)}\n\n### Review path alone\n\n${reviewPathReport(reviewPath)}`);
  }
  if (wanted('instructions')) {
    const instructions = (raw['instructions'] = await runInstructionBench(log));
    sections.push(`## Instructions per review (Node ${process.version})\n\n${instructionReport(instructions)}`);
  }
  if (wanted('rules')) {
    log('rules: CPU per review of a hand-written handler, a built-in rule and a cel rule, in process');
    sections.push(`## Rules on the review path (Node ${process.version})\n\n${ruleCostReport((raw['rules'] = await runRuleCostBench()))}`);
  }
  if (wanted('tools')) {
    sections.push(`## The tools at cluster scale (Node ${process.version})\n\n${toolsReport((raw['tools'] = await runToolsBench(log)))}`);
  }
  if (wanted('rotation')) {
    log('certificates: first handshake and rotations under load');
    sections.push(`## Certificates (Node ${process.version})\n\n${rotationReport((raw['rotation'] = await runRotationBench(log)) as Awaited<ReturnType<typeof runRotationBench>>)}`);
  }
  if (wanted('lifecycle')) {
    log('lifecycle against the API test double');
    sections.push(`## Lifecycle (Node ${process.version})\n\n${lifecycleReport((raw['lifecycle'] = await runLifecycleBench(log)) as Awaited<ReturnType<typeof runLifecycleBench>>)}`);
  }
  if (wanted('startup')) {
    log('startup: spawn -> registered, tsc output against the bundle the image runs');
    sections.push(`## Startup (Node ${process.version})\n\n${startupReport((raw['startup'] = await runStartupBench(log)) as Awaited<ReturnType<typeof runStartupBench>>)}`);
  }
  if (wanted('grouping')) {
    log('grouping: reviews, server CPU and kubectl latency per Pod create, grouped against one webhook per rule, in the local cluster');
    sections.push(`## Grouped registration (Node ${process.version})\n\n${groupingReport((raw['grouping'] = await runGroupingBench(log)) as Awaited<ReturnType<typeof runGroupingBench>>)}`);
  }
  if (wanted('native')) {
    log('native: a denied and an allowed write through a native policy, the same rule as a webhook, and no policy, in the local cluster');
    sections.push(`## Native policy against webhook (Node ${process.version})\n\n${nativeLatencyReport((raw['native'] = await runNativeLatencyBench(log)))}`);
  }
  if (wanted('reports')) {
    log('reports: the background audit at cluster scale (reporting off, then on), the compiled server against the API double');
    sections.push(`## Background audit and reports (Node ${process.version})\n\n${reportsBenchReport((raw['reports'] = await runReportsBench(log)))}`);
  }
  if (wanted('devloop')) {
    log('dev loop: edit -> served, against a restart');
    sections.push(`## Dev loop (Node ${process.version})\n\n${devLoopReport((raw['devloop'] = await runDevLoopBench(log)))}`);
  }
  console.log(sections.join('\n\n'));
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/bench-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(raw, null, 2));
  log(`raw results: ${file}`);
}

main().catch((error: unknown) => {
  console.error(`[bench] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
