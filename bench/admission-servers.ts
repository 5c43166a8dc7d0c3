/**
 * The servers the admission bench puts side by side, each in its own process: the reference (raw
 * node:https), the shipped binary of this checkout (the image's entry with a policy file of
 * built-in rules), the same binary of another checkout (BENCH_BASELINE), a project made by `init`
 * serving typed handlers that do the same, and, when asked for, the in-process target
 * (createWebhookServer with hand-written handlers, what the bench measured before). Each answers
 * the bench's review once, verified against the CA it trusts, before anything is measured.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { decodePatch, request, type ReviewResponse } from '../test/support/server/server-harness.js';
import { createTestCa, issueServingCert } from '../test/support/tls/test-certs.js';
import { runCommand } from '../test/support/tools/run-command.js';
import { ADDED_LABEL, builtInRulesPolicy, noRulesPolicy, startBinary, type Grouping } from './binary-target.js';
import { makeInitProject } from './init-project.js';
import { SERVER_NODE_FLAGS, startTarget, stopTarget } from './target-process.js';

/** reference: the yardstick; binary: this checkout's; baseline: BENCH_BASELINE's; init: an init project; in-process: createWebhookServer in a forked process. */
export type ServerKey = 'reference' | 'binary' | 'baseline' | 'init' | 'in-process';

export const OPTIONAL_SERVERS: readonly ServerKey[] = ['binary', 'init', 'in-process'];

/**
 * What runs unless BENCH_ADMISSION_SERVERS says otherwise: what users run. The in-process target
 * serves one webhook per path with no grouping, which the binary does only with `grouping: none`;
 * its difference to the binary is the grouped route, so it runs only when asked for.
 */
export const DEFAULT_SERVERS: readonly ServerKey[] = ['binary', 'init'];

export interface ServerUnderTest {
  key: ServerKey;
  label: string;
  child: ChildProcess;
  port: number;
  /** The validating and mutating paths; none for the reference, which answers any. */
  paths: { validate: string; mutate: string } | undefined;
  /** The CA its serving certificate chains to. */
  caPem: string;
  /** Where its --cpu-prof profile is written on exit (BENCH_CPU_PROF). */
  profileFile: string | undefined;
}

export interface ServerPlan {
  /** Besides the reference, which always runs. */
  servers: readonly ServerKey[];
  /** A checkout with its dist/ built, whose binary runs beside this one's. */
  baseline: string | undefined;
  /** The binary's entry: the bundle the image runs, or the tsc output (`npm start`). */
  entry: 'bundle' | 'tsc';
  /** The baseline's entry (the same as this checkout's unless told). */
  baselineEntry: 'bundle' | 'tsc';
  grouping: Grouping;
  /** --cpu-prof every server into this folder. */
  profileDir: string | undefined;
  /** Scratch folder of the run: policies, cert dirs, the init project. */
  workDir: string;
}

/** BENCH_ADMISSION_SERVERS (default binary,init), BENCH_BASELINE, BENCH_BINARY_ENTRY, BENCH_BASELINE_ENTRY, BENCH_GROUPING, BENCH_CPU_PROF. */
export function planFromEnvironment(env: NodeJS.ProcessEnv, workDir: string): ServerPlan {
  const servers = (env.BENCH_ADMISSION_SERVERS ?? DEFAULT_SERVERS.join(',')).split(',').filter(Boolean);
  const unknown = servers.filter((s) => !OPTIONAL_SERVERS.includes(s as ServerKey));
  if (unknown.length > 0) throw new Error(`BENCH_ADMISSION_SERVERS: ${unknown.join(', ')} unknown; use some of ${OPTIONAL_SERVERS.join(', ')}`);
  const entryKind = (name: string, fallback: string): 'bundle' | 'tsc' => {
    const value = env[name] ?? fallback;
    if (value !== 'bundle' && value !== 'tsc') throw new Error(`${name}: "${value}"; use bundle or tsc`);
    return value;
  };
  const entry = entryKind('BENCH_BINARY_ENTRY', 'bundle');
  const baselineEntry = entryKind('BENCH_BASELINE_ENTRY', entry);
  const grouping = env.BENCH_GROUPING ?? 'auto';
  if (grouping !== 'auto' && grouping !== 'none') throw new Error(`BENCH_GROUPING: "${grouping}"; use auto or none`);
  const baseline = env.BENCH_BASELINE ? path.resolve(env.BENCH_BASELINE) : undefined;
  const profileDir = env.BENCH_CPU_PROF ? path.resolve(env.BENCH_CPU_PROF) : undefined;
  return { servers: servers as ServerKey[], baseline, entry, baselineEntry, grouping, profileDir, workDir };
}

const BUILD_MS = 5 * 60_000;

/** A checkout's revision as `git describe` says it (with -dirty when its tree has changes). */
async function revision(checkout: string): Promise<string> {
  const result = await runCommand('git', ['-C', checkout, 'describe', '--always', '--dirty'], { timeoutMs: 30_000, allowFailure: true });
  return result.code === 0 ? result.stdout.trim() : 'unknown revision';
}

/** A checkout's binary: the bundle the image runs (made by the checkout's own script), or its tsc output. */
async function binaryEntry(checkout: string, kind: ServerPlan['entry'], log: (line: string) => void): Promise<{ entry: string; what: string }> {
  const tsc = path.join(checkout, 'dist', 'src', 'main.js');
  if (!existsSync(tsc)) throw new Error(`${tsc} is missing: build that checkout first (npm run build)`);
  const script = path.join(checkout, 'scripts', 'bundle-server.mjs');
  if (kind === 'tsc') return { entry: tsc, what: 'dist/src/main.js, tsc output' };
  if (!existsSync(script)) return { entry: tsc, what: 'dist/src/main.js (no bundle script in that checkout)' };
  log(`admission: bundling ${checkout} (scripts/bundle-server.mjs)`);
  await runCommand(process.execPath, [script], { cwd: checkout, timeoutMs: BUILD_MS });
  return { entry: path.join(checkout, 'dist', 'bundle', 'main.js'), what: 'the bundle the image runs' };
}

function profileFlags(plan: ServerPlan, key: ServerKey): { flags: string[]; file: string | undefined } {
  if (!plan.profileDir) return { flags: [], file: undefined };
  const name = `${key}.cpuprofile`;
  return { flags: ['--cpu-prof', `--cpu-prof-dir=${plan.profileDir}`, `--cpu-prof-name=${name}`], file: path.join(plan.profileDir, name) };
}

async function startForked(plan: ServerPlan, key: 'reference' | 'in-process', label: string): Promise<ServerUnderTest> {
  const ca = createTestCa(`bench CA (${key})`);
  const profile = profileFlags(plan, key);
  const target = await startTarget(key === 'reference' ? 'reference' : 'fastify', issueServingCert(ca), { nodeFlags: [...SERVER_NODE_FLAGS, ...profile.flags] });
  const paths = key === 'reference' ? undefined : { validate: '/validate/require-labels?timeout=10s', mutate: '/mutate/add-label?timeout=10s' };
  return { key, label, child: target.child, port: target.port, paths, caPem: ca.certPem, profileFile: profile.file };
}

async function startEntry(plan: ServerPlan, key: ServerKey, label: string, entry: string, cwd: string, policy: string): Promise<ServerUnderTest> {
  const dir = path.join(plan.workDir, key);
  mkdirSync(dir, { recursive: true });
  const policyFile = path.join(dir, 'policy.yaml');
  writeFileSync(policyFile, policy);
  const profile = profileFlags(plan, key);
  const target = await startBinary({ entry, cwd, policyFile, certDir: path.join(dir, 'certs'), extraNodeFlags: profile.flags });
  return { key, label, child: target.child, port: target.port, paths: target.paths, caPem: target.caPem, profileFile: profile.file };
}

/** Starts the reference and every server of the plan; stops what started if one fails. */
export async function startServers(plan: ServerPlan, log: (line: string) => void): Promise<ServerUnderTest[]> {
  const started: ServerUnderTest[] = [];
  const root = repositoryRoot();
  try {
    log('admission: starting the reference');
    started.push(await startForked(plan, 'reference', 'reference: raw node:https, JSON.parse, allow echoing the uid'));
    if (plan.servers.includes('binary')) {
      const { entry, what } = await binaryEntry(root, plan.entry, log);
      log(`admission: starting this checkout's binary (${what})`);
      started.push(await startEntry(plan, 'binary', `binary ${await revision(root)} (${what})`, entry, root, builtInRulesPolicy(plan.grouping)));
    }
    if (plan.baseline) {
      const { entry, what } = await binaryEntry(plan.baseline, plan.baselineEntry, log);
      log(`admission: starting the baseline's binary (${plan.baseline}, ${what})`);
      started.push(await startEntry(plan, 'baseline', `baseline binary ${await revision(plan.baseline)} (${what})`, entry, plan.baseline, builtInRulesPolicy(plan.grouping)));
    }
    if (plan.servers.includes('init')) {
      const project = await makeInitProject(root, path.join(plan.workDir, 'init-project'), log);
      log('admission: starting the init project (node dist/src/main.js, its start script)');
      started.push(await startEntry(plan, 'init', 'init project (typed handlers, node dist/src/main.js)', path.join(project, 'dist', 'src', 'main.js'), project, noRulesPolicy(plan.grouping)));
    }
    if (plan.servers.includes('in-process')) {
      log('admission: starting the in-process target');
      started.push(await startForked(plan, 'in-process', 'in-process target (createWebhookServer, hand-written handlers)'));
    }
    return started;
  } catch (error) {
    await stopServers(started);
    throw error;
  }
}

/** SIGTERM to each, so a profiled one writes its profile; SIGKILL after `graceMs`. */
export async function stopServers(servers: readonly ServerUnderTest[], graceMs = 30_000): Promise<void> {
  await Promise.all(servers.map((server) => stopTarget(server.child, graceMs)));
}

/** Why an answer is not the one the bench measures, or undefined when it is. */
export function answerProblem(route: 'reference' | 'validate' | 'mutate', uid: string, status: number, review: ReviewResponse | undefined): string | undefined {
  if (status !== 200) return `status ${status}`;
  const response = review?.response;
  if (response?.uid !== uid) return `uid ${String(response?.uid)}, not ${uid}`;
  if (response.allowed !== true) return `not allowed: ${JSON.stringify(response.status)}`;
  if (route !== 'mutate') return response.patch === undefined ? undefined : 'a patch where none was due';
  const patch = JSON.stringify(decodePatch(response.patch));
  const wanted = JSON.stringify([{ op: 'add', path: `/metadata/labels/${ADDED_LABEL.key.replace('/', '~1')}`, value: ADDED_LABEL.value }]);
  return patch === wanted ? undefined : `patch ${patch}, not ${wanted}`;
}

/** One review per path, over TLS verified against the server's CA: the answer the bench is about to measure. */
export async function checkAnswers(server: ServerUnderTest, body: string, uid: string): Promise<void> {
  const routes = server.paths ? ([['validate', server.paths.validate], ['mutate', server.paths.mutate]] as const) : ([['reference', '/']] as const);
  for (const [route, pathname] of routes) {
    const reply = await request(server.port, pathname, undefined, { raw: body, ca: server.caPem });
    const problem = answerProblem(route, uid, reply.status, reply.json as ReviewResponse | undefined);
    if (problem) throw new Error(`${server.label}, ${pathname}: ${problem}: ${reply.text.slice(0, 500)}`);
  }
}
