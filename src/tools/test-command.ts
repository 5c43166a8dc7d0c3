import { writeFile } from 'node:fs/promises';
import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import type { Webhook } from '../admission/types.js';
import { givenAnswers, type GivenAnswers } from './authorizer-answers.js';
import { evaluateObjects } from './evaluation.js';
import { loadHandlerModules } from './handler-modules.js';
import { junitXml, type SuiteResult } from './junit.js';
import { ManifestError, readManifests } from './manifests.js';
import { checkExpectation } from './test-check.js';
import { findTestFiles, type PolicyTestFile } from './test-file.js';
import { loadToolPolicy, toolPolicyOptions, TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

async function runTestFile(test: PolicyTestFile, config: Config, tool: ToolOptions, answers: GivenAnswers, handlers: readonly Webhook[]): Promise<SuiteResult> {
  const loaded = await loadToolPolicy(test.policy ?? config.policyFile, toolPolicyOptions(config, answers));
  const { excludedNamespaces } = loaded;
  const webhooks = [...loaded.webhooks, ...handlers];
  const manifests = await readManifests(test.resources);
  const oldObjects = (await readManifests(test.oldResources)).map((m) => m.object);
  const results = await evaluateObjects(webhooks, manifests, { excludedNamespaces, defaultNamespace: tool.defaultNamespace, oldObjects, namespaces: test.namespaces, shape: test.request, authorize: answers.authorize });
  answers.requireAllAnswered();
  return { name: test.name, file: test.file, checks: test.results.map((e) => checkExpectation(e, results)) };
}

function table(suites: readonly SuiteResult[]): string {
  const rows = [['RESULT', 'TEST', 'RESOURCE', 'WEBHOOK', 'EXPECTED', 'GOT']];
  const problems: string[] = [];
  for (const suite of suites) {
    if (suite.error) {
      rows.push(['FAIL', suite.name, '-', '-', '-', 'error']);
      problems.push(`${suite.name}: ${suite.error}`);
    }
    for (const check of suite.checks) {
      const { resource, webhook, decision } = check.expectation;
      rows.push([check.passed ? 'pass' : 'FAIL', suite.name, resource, webhook, decision, check.got]);
      if (check.problem) problems.push(`${suite.name}: ${resource} ${webhook}: ${check.problem}`);
    }
  }
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
  const failed = suites.reduce((n, s) => n + (s.error ? 1 : 0) + s.checks.filter((c) => !c.passed).length, 0);
  const passed = suites.reduce((n, s) => n + s.checks.filter((c) => c.passed).length, 0);
  return [...lines, ...(problems.length > 0 ? ['', ...problems] : []), '', `${passed} passed, ${failed} failed`, ''].join('\n');
}

/** `kube-admission-server test DIR`: every PolicyTest in DIR; exit 1 on any mismatch, 2 on bad input. */
export async function runTests(config: Config, tool: ToolOptions, io: ToolIo): Promise<number> {
  let suites: SuiteResult[];
  try {
    const tests = await findTestFiles(tool.testDir ?? '.');
    const answers = await givenAnswers(tool);
    const handlers = await loadHandlerModules(tool.handlers);
    suites = [];
    for (const test of tests) {
      try {
        suites.push(await runTestFile(test, config, tool, answers, handlers));
      } catch (error) {
        if (!(error instanceof ToolInputError || error instanceof ManifestError)) throw error;
        suites.push({ name: test.name, file: test.file, checks: [], error: error.message });
      }
    }
  } catch (error) {
    if (error instanceof ToolInputError) {
      io.stderr(`kube-admission-server test: ${error.message}\n`);
      return TOOL_BAD_INPUT;
    }
    throw error;
  }
  if (tool.junitFile) await writeFile(tool.junitFile, junitXml(suites));
  io.stdout(tool.output === 'json' ? `${JSON.stringify(suites, null, 2)}\n` : table(suites));
  // A test whose policy or resources cannot be read is bad input, reported after the others ran.
  if (suites.some((s) => s.error)) return TOOL_BAD_INPUT;
  return suites.every((s) => s.checks.every((c) => c.passed)) ? TOOL_OK : TOOL_FINDINGS;
}
