/**
 * The product's CEL engine (@marcbachmann/cel-js, extended in src/cel/engine/) against
 * @bufbuild/cel through its public API: `node dist/bench/cel-engines.js [ROUNDS] [PER_ROUND]`
 * runs (1) Kubernetes' CEL library tables (test/support/policy/kubernetes-cel-library-tests.yaml)
 * on both, the product through the policy path as test/policy-cel-kubernetes-library-tables.test.ts
 * does and @bufbuild/cel with the product's library carried over (bufbuild-cel-library.ts), and
 * (2) the CPU time per evaluation of the bundled policies' CEL rules (policies/cel.yaml) on the
 * bench Pod, interleaved rounds, median: cel-js through the product's compile path and budget,
 * @bufbuild/cel with the carried library and with the local cluster's native quantity functions.
 * docs/cel.md records the decision these figures support.
 */
import { readFileSync } from 'node:fs';
import { celEnv, isCelError, parse, plan, type CelEnv, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { parse as parseYaml } from 'yaml';
import { QUANTITY_FUNCS } from '../local-cluster/fake-apiserver/policy-cel-quantity.js';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression, type CompiledExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { Authorizer } from '../src/cel/library/authorizer.js';
import { toCel } from '../src/cel/values.js';
import { disagreement, runCase, validationOf, type LibraryCases, type LibraryCase } from '../test/support/policy/kubernetes-cel-cases.js';
import { libraryEnv, notCarried, reset, toBuf } from './bufbuild-cel-library.js';
import { podCreateReview } from './pod-review.js';

const ROUNDS = Number(process.argv[2] ?? 9);
const PER_ROUND = Number(process.argv[3] ?? 5000);

type Outcome = { value: unknown } | { stage: 'parse' | 'plan' | 'eval'; error: string };

/** Runs `expression` on @bufbuild/cel with the authorizer of cost_test.go (alwaysAllowAuthorizer). */
function runOnBuf(expression: string): Outcome {
  reset();
  const bindings = { authorizer: toBuf(new Authorizer({ username: 'bench', groups: [] }, () => ({ allowed: true }))) };
  let parsed;
  try {
    parsed = parse(expression);
  } catch (error) {
    return { stage: 'parse', error: (error as Error).message.split('\n')[0]! };
  }
  try {
    const result = plan(libraryEnv, parsed)(bindings as Record<string, CelInput>);
    return isCelError(result) ? { stage: 'eval', error: result.message } : { value: result };
  } catch (error) {
    return { stage: 'plan', error: (error as Error).message.split('\n')[0]! };
  }
}

/** Why @bufbuild/cel's answer is not what the case's Go test expects, or undefined. */
function bufDisagreement(c: LibraryCase): string | undefined {
  if (c.compileErrors) {
    const outcome = runOnBuf(c.expression);
    return 'stage' in outcome && outcome.stage === 'parse' ? undefined : 'compiles: no type checker refuses it';
  }
  if (c.error !== undefined || c.errorPattern !== undefined) {
    const outcome = runOnBuf(c.expression);
    if (!('stage' in outcome)) return 'evaluates without error';
    if (outcome.stage !== 'eval') return `${outcome.stage}: ${outcome.error}`;
    const matches = c.error !== undefined ? outcome.error.endsWith(c.error) : new RegExp(c.errorPattern!).test(outcome.error);
    return matches ? undefined : `another error: ${outcome.error}`;
  }
  const outcome = runOnBuf(validationOf(c));
  if ('stage' in outcome) return `${outcome.stage}: ${outcome.error.replace(/^(unbound function: \w+).*/, '$1')}`;
  return outcome.value === true ? undefined : 'another value';
}

async function libraryTables(): Promise<string> {
  // The data file is not compiled into dist/: read from the sources.
  const text = readFileSync(new URL('../../test/support/policy/kubernetes-cel-library-tests.yaml', import.meta.url), 'utf8');
  const { source, cases } = parseYaml(text) as LibraryCases;
  let product = 0;
  let buf = 0;
  let both = 0;
  const bufOnly: string[] = [];
  const reasons = new Map<string, number>();
  for (const c of cases) {
    const productAgrees = disagreement(c, await runCase(c)) === undefined;
    const why = bufDisagreement(c);
    if (productAgrees) product++;
    if (why === undefined) buf++;
    if (why === undefined && productAgrees) both++;
    if (why === undefined && !productAgrees) bufOnly.push(c.name);
    if (why !== undefined) reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  return [
    `Kubernetes' CEL library tables (${source}, ${cases.length} cases), each judged by its Go test's expectation:`,
    '',
    '| engine | cases agreeing |',
    '|---|---:|',
    `| cel-js (the product, through the policy path) | ${product} |`,
    `| @bufbuild/cel (the product's library carried over) | ${buf} |`,
    '',
    `Agreeing on both: ${both}. On @bufbuild/cel only: ${bufOnly.length} (${bufOnly.slice(0, 3).join('; ')}${bufOnly.length > 3 ? '; ...' : ''}).`,
    '',
    "@bufbuild/cel's disagreements:",
    ...[...reasons].sort((a, b) => b[1] - a[1]).map(([why, n]) => `- ${n}: ${why}`),
    '',
    `Not carried over: ${[...new Set(notCarried)].join(', ')}.`,
  ].join('\n');
}

interface Rule {
  name: string;
  params: unknown;
  variables: { name: string; expression: string }[];
  validations: string[];
}

function bundledRules(): Rule[] {
  const policy = parseYaml(readFileSync(new URL('../../policies/cel.yaml', import.meta.url), 'utf8')) as {
    webhooks: { name: string; params?: unknown; variables?: { name: string; expression: string }[]; validations: { expression: string }[] }[];
  };
  return policy.webhooks.map((w) => ({ name: w.name, params: w.params ?? null, variables: w.variables ?? [], validations: w.validations.map((v) => v.expression) }));
}

type RuleRun = (object: unknown) => unknown[];

const celJsEnv = environmentWith(VALIDATION_VARIABLES);

function onCelJs(rule: Rule): RuleRun {
  const compile = (source: string): CompiledExpression => {
    const compiled = compileExpression(celJsEnv, source, 'any');
    if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
    return compiled.expression;
  };
  const variables = rule.variables.map((v) => [v.name, compile(v.expression)] as const);
  const validations = rule.validations.map(compile);
  return (object) => {
    const budget = new EvaluationBudget();
    const activation: Record<string, unknown> = { object, params: toCel(rule.params) };
    activation.variables = Object.fromEntries(variables.map(([name, e]) => [name, e.evaluate(activation, budget)]));
    return validations.map((e) => e.evaluate(activation, budget));
  };
}

function onBuf(env: CelEnv, before: () => void): (rule: Rule) => RuleRun {
  return (rule) => {
    const program = (source: string) => plan(env, parse(source));
    const variables = rule.variables.map((v) => [v.name, program(v.expression)] as const);
    const validations = rule.validations.map(program);
    const value = (result: unknown) => {
      if (isCelError(result)) throw new Error(result.message);
      return result;
    };
    return (object) => {
      before();
      const activation: Record<string, unknown> = { object, params: toCel(rule.params) };
      activation.variables = new Map(variables.map(([name, p]) => [name, value(p(activation as Record<string, CelInput>))]));
      return validations.map((p) => value(p(activation as Record<string, CelInput>)));
    };
  };
}

const cpuUs = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function ruleCpu(): string {
  const rules = bundledRules();
  const body = JSON.stringify(podCreateReview());
  const review = () => toCel((JSON.parse(body) as { request: { object: unknown } }).request.object);
  const engines = [
    { label: 'cel-js (the product: compile path, budget)', runs: rules.map(onCelJs) },
    { label: "@bufbuild/cel, the product's library carried over", runs: rules.map(onBuf(libraryEnv, reset)) },
    { label: '@bufbuild/cel, native quantity (the local cluster)', runs: rules.map(onBuf(celEnv({ funcs: [...strings, ...QUANTITY_FUNCS] }), () => {})) },
  ];
  for (const engine of engines) {
    const results = engine.runs.flatMap((run) => run(review()));
    if (!results.every((r) => r === true)) throw new Error(`${engine.label} did not allow the bench Pod: ${JSON.stringify(results)}`);
    for (let i = 0; i < 3000; i++) for (const run of engine.runs) run(review());
  }
  const base: number[] = [];
  const samples = engines.map(() => rules.map((): number[] => []));
  for (let round = 0; round < ROUNDS; round++) {
    let started = cpuUs();
    for (let i = 0; i < PER_ROUND; i++) review();
    base.push((cpuUs() - started) / PER_ROUND);
    engines.forEach((engine, e) =>
      engine.runs.forEach((run, r) => {
        started = cpuUs();
        for (let i = 0; i < PER_ROUND; i++) run(review());
        samples[e]![r]!.push((cpuUs() - started) / PER_ROUND);
      }),
    );
  }
  const baseUs = median(base);
  return [
    `The bundled rules (policies/cel.yaml) on the bench Pod, every validation evaluated (all true), variables once; CPU µs per rule evaluation (process.cpuUsage), median of ${ROUNDS} interleaved rounds of ${PER_ROUND}, minus JSON.parse and the JSON -> CEL conversion of the object (${baseUs.toFixed(2)} µs):`,
    '',
    `| engine | ${rules.map((r) => `${r.name} (${r.variables.length} variable, ${r.validations.length} validations)`).join(' | ')} |`,
    `|---|${rules.map(() => '---:').join('|')}|`,
    ...engines.map((engine, e) => `| ${engine.label} | ${rules.map((_, r) => (median(samples[e]![r]!) - baseUs).toFixed(1)).join(' | ')} |`),
  ].join('\n');
}

console.log(`# CEL engines (Node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`);
console.log(await libraryTables());
console.log('');
console.log(ruleCpu());
