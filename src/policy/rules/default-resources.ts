import { containersOf, describeContainer, isRecord, podSpecsOf, type JsonRecord } from '../../admission/pod-specs.js';
import { parseQuantity, QUANTITY_HINT } from '../../admission/quantity.js';
import { podRules, workloadRules, type RuleKind } from '../rule-kind.js';
import type { KubeObject } from '../../admission/types.js';
import type { YamlField } from '../../util/yaml-field.js';

export type ResourceAmounts = Partial<Record<'cpu' | 'memory', string>>;

export interface DefaultResourcesParams {
  requests: ResourceAmounts;
  /** Optional default limits. */
  limits: ResourceAmounts;
}

const RESOURCE_NAMES = ['cpu', 'memory'] as const;

function childRecord(parent: JsonRecord, key: string): JsonRecord {
  if (!isRecord(parent[key])) parent[key] = {};
  return parent[key] as JsonRecord;
}

function quantityOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  return typeof value === 'string' ? parseQuantity(value) : undefined;
}

/**
 * Fills one resource of one container. A request is not defaulted when a limit is set (the
 * apiserver then defaults the request to the limit), and a limit is not defaulted below the
 * container's request: either would make the pod invalid.
 */
function defaultOne(resources: JsonRecord, name: 'cpu' | 'memory', params: DefaultResourcesParams): string[] {
  const requests = isRecord(resources['requests']) ? resources['requests'] : {};
  const limits = isRecord(resources['limits']) ? resources['limits'] : {};
  const changes: string[] = [];
  let limit = limits[name];
  const userLimit = limit !== undefined;
  const defaultLimit = params.limits[name];
  if (limit === undefined && defaultLimit !== undefined) {
    const request = quantityOf(requests[name]);
    if (request === undefined || request <= (parseQuantity(defaultLimit) ?? Infinity)) {
      childRecord(resources, 'limits')[name] = defaultLimit;
      limit = defaultLimit;
      changes.push(`set limits.${name}=${defaultLimit}`);
    }
  }
  const defaultRequest = params.requests[name];
  if (defaultRequest !== undefined && requests[name] === undefined && !userLimit) {
    const limitValue = quantityOf(limit);
    if (limitValue === undefined || (parseQuantity(defaultRequest) ?? 0) <= limitValue) {
      childRecord(resources, 'requests')[name] = defaultRequest;
      changes.push(`set requests.${name}=${defaultRequest}`);
    }
  }
  return changes;
}

/**
 * Gives containers and init containers the default cpu/memory requests (and limits) they lack.
 * Ephemeral containers may not have resources, so they are left alone. Idempotent.
 */
export function applyDefaultResources(object: KubeObject, params: DefaultResourcesParams): string[] {
  const changes: string[] = [];
  for (const location of podSpecsOf(object)) {
    for (const ref of containersOf(location.spec)) {
      if (ref.kind === 'ephemeral container') continue;
      const hadResources = isRecord(ref.container['resources']);
      const resources = childRecord(ref.container, 'resources');
      const made = RESOURCE_NAMES.flatMap((name) => defaultOne(resources, name, params));
      if (!hadResources && made.length === 0) delete ref.container['resources'];
      changes.push(...made.map((change) => `${describeContainer(ref, location)}: ${change}`));
    }
  }
  return changes;
}

function readAmounts(field: YamlField | undefined): ResourceAmounts | undefined {
  if (!field) return {};
  const fields = field.map(RESOURCE_NAMES);
  if (!fields) return undefined;
  const amounts: ResourceAmounts = {};
  let ok = true;
  for (const name of RESOURCE_NAMES) {
    const value = fields.get(name);
    if (!value) continue;
    const text = value.string();
    if (text === undefined) ok = false;
    else if (parseQuantity(text) === undefined) {
      value.report(`"${text}" is not a quantity; use ${QUANTITY_HINT}`);
      ok = false;
    } else amounts[name] = text;
  }
  return ok ? amounts : undefined;
}

export const defaultResources: RuleKind = {
  kind: 'defaultResources',
  type: 'mutating',
  // Pod resources are immutable after creation, so Pods are defaulted on CREATE only.
  defaultRules: [podRules(['CREATE']), ...workloadRules(['CREATE'])],
  compile(params, entry) {
    if (!params) {
      entry.report('defaultResources needs "params.requests" (cpu and/or memory) and optionally "params.limits"');
      return undefined;
    }
    const fields = params.map(['requests', 'limits']);
    if (!fields) return undefined;
    const requests = readAmounts(fields.get('requests'));
    const limits = readAmounts(fields.get('limits'));
    if (!requests || !limits) return undefined;
    if (Object.keys(requests).length + Object.keys(limits).length === 0) {
      params.report('must set at least one of requests.cpu, requests.memory, limits.cpu, limits.memory');
      return undefined;
    }
    let ok = true;
    for (const name of RESOURCE_NAMES) {
      const request = requests[name];
      const limit = limits[name];
      if (request !== undefined && limit !== undefined && parseQuantity(request)! > parseQuantity(limit)!) {
        fields.get('requests')?.report(`${name} request ${request} is above the ${name} limit ${limit}; a request may not exceed its limit`);
        ok = false;
      }
    }
    if (!ok) return undefined;
    const bound: DefaultResourcesParams = { requests, limits };
    return { type: 'mutating', mutate: (object) => applyDefaultResources(object, bound), nativeMutation: { kind: 'defaultResources', ...bound } };
  },
};
