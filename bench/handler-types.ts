/**
 * What typed handlers cost a user's type-check: `node dist/bench/handler-types.js [RUNS]
 * [BASELINE_ROOT]` type-checks one small handler file, in a strict project, several ways, each
 * RUNS times (default 5) in a new tsc process, and prints the medians of tsc's own figures
 * (--extendedDiagnostics): files read, check time, total time, memory. The package's declarations
 * are this checkout's dist/src (run `npm run build` first); BASELINE_ROOT is another checkout
 * (built) to compare against, e.g. main before typed handlers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const UNTYPED = `import { defineValidatingWebhook } from 'kube-admission-server';
export const w = defineValidatingWebhook({ name: 'w', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  handler: (request) => ({ allowed: true, warnings: [String((request.object?.['spec'] as { containers?: Array<{ image?: string }> } | undefined)?.containers?.[0]?.image)] }) });
`;
const TYPED = `import { defineValidatingWebhook } from 'kube-admission-server';
export const w = defineValidatingWebhook({ name: 'w', kind: 'Pod', handler: (request) => ({ allowed: true, warnings: [String(request.object?.spec?.containers?.[0]?.image)] }) });
`;
const CLIENT_NODE = `import { defineValidatingWebhook } from 'kube-admission-server';
import type { V1Pod } from '@kubernetes/client-node';
export const w = defineValidatingWebhook({ name: 'w', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  handler: (request) => ({ allowed: true, warnings: [String((request.object as V1Pod | null)?.spec?.containers?.[0]?.image)] }) });
`;

interface Variant {
  name: string;
  source: string;
  packageRoot: string;
}

interface Figures {
  files: number;
  checkS: number;
  totalS: number;
  memoryMb: number;
}

function runTsc(dir: string): Figures {
  const output = execFileSync(process.execPath, [TSC, '-p', dir, '--extendedDiagnostics'], { encoding: 'utf8' });
  const figure = (label: string): number => Number(new RegExp(`^${label}:\\s+([\\d.]+)`, 'm').exec(output)?.[1] ?? Number.NaN);
  return { files: figure('Files'), checkS: figure('Check time'), totalS: figure('Total time'), memoryMb: figure('Memory used') / 1024 };
}

function project(variant: Variant): string {
  const dir = mkdtempSync(join(tmpdir(), 'kas-types-bench-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'handler.ts'), variant.source);
  const compilerOptions = {
    strict: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    paths: { 'kube-admission-server': [join(variant.packageRoot, 'dist', 'src', 'index.d.ts')] },
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['handler.ts'] }));
  return dir;
}

const runs = Number(process.argv[2] ?? '5');
const baseline = process.argv[3] ? resolve(process.argv[3]) : undefined;
const variants: Variant[] = [
  ...(baseline ? [{ name: 'baseline package, untyped handler', source: UNTYPED, packageRoot: baseline }] : []),
  { name: 'untyped handler (rules, KubeObject)', source: UNTYPED, packageRoot: ROOT },
  { name: "typed handler (kind: 'Pod', generated models)", source: TYPED, packageRoot: ROOT },
  { name: 'untyped handler cast to client-node V1Pod', source: CLIENT_NODE, packageRoot: ROOT },
];
const results = new Map<string, Figures[]>(variants.map((v) => [v.name, []]));
const dirs = variants.map((v) => [v, project(v)] as const);
try {
  // Interleaved, so that the machine's load moves every variant alike.
  for (let run = 0; run < runs; run++) for (const [variant, dir] of dirs) results.get(variant.name)!.push(runTsc(dir));
} finally {
  for (const [, dir] of dirs) rmSync(dir, { recursive: true, force: true });
}
console.log(`| variant | files | check s | total s | memory MB |\n|---|---:|---:|---:|---:|`);
for (const [name, figures] of results) {
  const m = (pick: (f: Figures) => number): string => median(figures.map(pick)).toFixed(2);
  console.log(`| ${name} | ${median(figures.map((f) => f.files))} | ${m((f) => f.checkS)} | ${m((f) => f.totalS)} | ${m((f) => f.memoryMb)} |`);
}
