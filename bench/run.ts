/** `npm run bench`: every benchmark, one after another; a Markdown report on stdout, JSON in bench/results/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { admissionReport, runAdmissionBench } from './admission.js';
import { reviewPathReport, runReviewPathBench } from './review-path.js';

async function main(): Promise<void> {
  const started = new Date();
  const log = (line: string): void => console.error(`[bench] ${line}`);
  const admission = await runAdmissionBench(log);
  log('review path, in process');
  const reviewPath = await runReviewPathBench();
  const header = `## Admission (${started.toISOString()}, Node ${process.version})`;
  console.log(`${header}\n\n${admissionReport(admission)}\n\n### Review path alone\n\n${reviewPathReport(reviewPath)}`);
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/admission-${started.toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify({ started: started.toISOString(), node: process.version, admission, reviewPath }, null, 2));
  log(`raw results: ${file}`);
}

main().catch((error: unknown) => {
  console.error(`[bench] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
