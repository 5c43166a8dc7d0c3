import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { KubeObject, Operation } from '../admission/types.js';
import { DEFAULT_SHAPE, operationProblem, principalProblem, subresourceProblem, userInfoOf, type RequestShape } from '../kube/evaluation/request-shape.js';
import { ToolInputError } from './tool-io.js';

export const TEST_API_VERSION = 'kube-admission-server/v1';
export const TEST_KIND = 'PolicyTest';
export const DECISIONS = ['allowed', 'denied', 'warn', 'audit', 'skipped', 'error'] as const;
export type ExpectedDecision = (typeof DECISIONS)[number];

/** One expectation: for a resource and a webhook, the decision and (mutations) fields of the result. */
export interface Expectation {
  /** `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects. */
  resource: string;
  webhook: string;
  decision: ExpectedDecision;
  /** A substring the webhook's message (or one of its warnings or audit annotations) must contain. */
  message?: string;
  /** A partial object the resource must match after every mutating webhook ran. */
  patched?: Record<string, unknown>;
}

export interface PolicyTestFile {
  file: string;
  name: string;
  /** Absolute path of the policy; the test's own `policy` or --policy-file. */
  policy: string | undefined;
  resources: string[];
  oldResources: string[];
  namespaces: KubeObject[];
  /** How every resource is requested (operation, dry run, user, subresource). */
  request: RequestShape;
  results: Expectation[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringList(value: unknown, what: string, file: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new ToolInputError(`${file}: ${what} must be a list of file names`);
  return value;
}

function expectation(value: unknown, index: number, file: string): Expectation {
  const where = `${file}: results[${index}]`;
  if (!isRecord(value)) throw new ToolInputError(`${where} must be a mapping with resource, webhook and decision`);
  const { resource, webhook, decision, message, patched, ...unknown } = value;
  const extra = Object.keys(unknown);
  if (extra.length > 0) throw new ToolInputError(`${where}: unknown field "${extra[0]}"; valid fields: resource, webhook, decision, message, patched`);
  if (typeof resource !== 'string' || !/^[A-Za-z0-9]+\/[^/]+(\/[^/]+)?$/.test(resource)) throw new ToolInputError(`${where}.resource must be Kind/namespace/name or Kind/name`);
  if (typeof webhook !== 'string' || webhook === '') throw new ToolInputError(`${where}.webhook must name a webhook of the policy`);
  if (typeof decision !== 'string' || !(DECISIONS as readonly string[]).includes(decision)) throw new ToolInputError(`${where}.decision must be one of ${DECISIONS.join(', ')}`);
  if (message !== undefined && typeof message !== 'string') throw new ToolInputError(`${where}.message must be a string`);
  if (patched !== undefined && !isRecord(patched)) throw new ToolInputError(`${where}.patched must be a partial object (a mapping)`);
  return { resource, webhook, decision: decision as ExpectedDecision, ...(message !== undefined ? { message } : {}), ...(patched ? { patched } : {}) };
}

const REQUEST_FIELDS = ['operation', 'dryRun', 'userInfo', 'subResource'];

function checked(value: unknown, where: string, problemOf: (v: string) => string | undefined): string {
  const problem = typeof value === 'string' ? problemOf(value) : `must be a string`;
  if (problem) throw new ToolInputError(`${where}: ${problem}`);
  return value as string;
}

/** The `request` field: the same values evaluate takes as --operation, --dry-run, --user, --group, --subresource. */
function requestShape(value: unknown, file: string): RequestShape {
  if (value === undefined) return DEFAULT_SHAPE;
  const where = `${file}: request`;
  if (!isRecord(value)) throw new ToolInputError(`${where} must be a mapping with ${REQUEST_FIELDS.join(', ')}`);
  const extra = Object.keys(value).filter((k) => !REQUEST_FIELDS.includes(k));
  if (extra.length > 0) throw new ToolInputError(`${where}: unknown field "${extra[0]}"; valid fields: ${REQUEST_FIELDS.join(', ')}`);
  const { operation, dryRun, userInfo, subResource } = value;
  if (dryRun !== undefined && typeof dryRun !== 'boolean') throw new ToolInputError(`${where}.dryRun must be true or false`);
  if (userInfo !== undefined && !isRecord(userInfo)) throw new ToolInputError(`${where}.userInfo must be a mapping with username and groups`);
  const groups = userInfo?.groups ?? [];
  if (!Array.isArray(groups)) throw new ToolInputError(`${where}.userInfo.groups must be a list of group names`);
  return {
    ...(operation !== undefined ? { operation: checked(operation, `${where}.operation`, operationProblem) as Operation } : {}),
    dryRun: dryRun ?? false,
    userInfo: userInfoOf(
      userInfo?.username === undefined ? undefined : checked(userInfo.username, `${where}.userInfo.username`, principalProblem),
      groups.map((g, i) => checked(g, `${where}.userInfo.groups[${i}]`, principalProblem)),
    ),
    ...(subResource !== undefined ? { subResource: checked(subResource, `${where}.subResource`, subresourceProblem) } : {}),
  };
}

/** Reads a test file; undefined when the YAML is not a PolicyTest (resources live beside tests). */
export async function readTestFile(file: string): Promise<PolicyTestFile | undefined> {
  const document = parseDocument(await readFile(file, 'utf8'), { uniqueKeys: true });
  if (document.errors.length > 0) return undefined;
  const value: unknown = document.toJSON();
  if (!isRecord(value) || value.kind !== TEST_KIND) return undefined;
  if (value.apiVersion !== TEST_API_VERSION) throw new ToolInputError(`${file}: apiVersion must be ${TEST_API_VERSION}`);
  const base = dirname(file);
  const relative = (paths: string[]) => paths.map((p) => resolve(base, p));
  if (!Array.isArray(value.results) || value.results.length === 0) throw new ToolInputError(`${file}: results must list at least one expectation`);
  const namespaces = value.namespaces ?? [];
  if (!Array.isArray(namespaces) || !namespaces.every((n) => isRecord(n) && n.kind === 'Namespace')) throw new ToolInputError(`${file}: namespaces must be a list of Namespace objects`);
  const resources = relative(stringList(value.resources, 'resources', file));
  if (resources.length === 0) throw new ToolInputError(`${file}: resources must name at least one manifest file`);
  return {
    file,
    name: typeof value.name === 'string' && value.name !== '' ? value.name : file,
    policy: typeof value.policy === 'string' ? resolve(base, value.policy) : undefined,
    resources,
    oldResources: relative(stringList(value.oldResources, 'oldResources', file)),
    namespaces: namespaces as KubeObject[],
    request: requestShape(value.request, file),
    results: value.results.map((r, i) => expectation(r, i, file)),
  };
}

/** Every PolicyTest under `dir`, in file-name order. */
export async function findTestFiles(dir: string): Promise<PolicyTestFile[]> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true, recursive: true })).filter((e) => e.isFile() && ['.yaml', '.yml'].includes(extname(e.name)));
  } catch (error) {
    throw new ToolInputError(`${dir}: cannot read the test folder: ${(error as Error).message}`);
  }
  const files = entries.map((e) => join(e.parentPath, e.name)).sort();
  const tests = (await Promise.all(files.map(readTestFile))).filter((t): t is PolicyTestFile => t !== undefined);
  if (tests.length === 0) throw new ToolInputError(`${dir}: no test files (YAML with apiVersion: ${TEST_API_VERSION}, kind: ${TEST_KIND})`);
  return tests;
}
