/**
 * The four PATCH content types (contract 5.2). Strategic merge and apply merge the lists named in
 * the resource's mergeKeys by their key and replace all other lists; JSON merge patch replaces
 * every list. Apply is simplified: no field ownership, so no FieldManagerConflict.
 */
import jsonPatch from 'fast-json-patch';
import { parse as parseYaml } from 'yaml';
import { clone, isRecord } from './objects.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

export const MAX_JSON_PATCH_OPERATIONS = 10000;

const REASONS: Record<number, string> = { 400: 'BadRequest', 413: 'RequestEntityTooLarge', 422: 'Invalid' };

/** A patch the server cannot use; `code` is the HTTP status to answer with. */
export class PatchError extends Error {
  constructor(
    readonly code: 400 | 413 | 422,
    message: string,
  ) {
    super(message);
  }

  get reason(): string {
    return REASONS[this.code] ?? 'BadRequest';
  }
}

type Json = Record<string, unknown>;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const result: Json = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function strategicMerge(target: unknown, patch: unknown, mergeKeys: Readonly<Record<string, string>>): unknown {
  if (!isRecord(patch)) return clone(patch);
  const result: Json = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue; // directives such as $setElementOrder: ordering only
    const mergeKey = mergeKeys[key];
    if (value === null) delete result[key];
    else if (mergeKey && Array.isArray(value)) result[key] = mergeList(result[key], value, mergeKey, mergeKeys);
    else result[key] = strategicMerge(result[key], value, mergeKeys);
  }
  return result;
}

function mergeList(target: unknown, patch: unknown[], mergeKey: string, mergeKeys: Readonly<Record<string, string>>): unknown[] {
  const result: unknown[] = Array.isArray(target) ? [...target] : [];
  for (const element of patch) {
    if (!isRecord(element)) {
      result.push(clone(element));
      continue;
    }
    const index = result.findIndex((existing) => isRecord(existing) && existing[mergeKey] === element[mergeKey]);
    if (element.$patch === 'delete') {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = strategicMerge(result[index], element, mergeKeys);
    } else {
      result.push(strategicMerge({}, element, mergeKeys));
    }
  }
  return result;
}

function parseBody(body: string, yaml: boolean): unknown {
  try {
    return yaml ? parseYaml(body) : JSON.parse(body);
  } catch (error) {
    throw new PatchError(400, `error decoding patch: ${(error as Error).message}`);
  }
}

function applyJsonPatch(current: Json, body: string): Json {
  const operations = parseBody(body, false);
  if (!Array.isArray(operations)) {
    throw new PatchError(400, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(
      413,
      `The allowed count of operations in a json patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`,
    );
  }
  try {
    const result = jsonPatch.applyPatch(clone(current), operations as jsonPatch.Operation[], true, false);
    if (!isRecord(result.newDocument)) throw new Error('patched document is not an object');
    return result.newDocument;
  } catch (error) {
    throw new PatchError(422, (error as Error).message.split('\n')[0] ?? 'invalid patch');
  }
}

/** The patched object; `current` is an empty object when apply creates. */
export function applyPatch(
  type: PatchType,
  current: Json,
  body: string,
  mergeKeys: Readonly<Record<string, string>>,
): Json {
  if (type === 'json') return applyJsonPatch(current, body);
  const patch = parseBody(body, type === 'apply');
  if (!isRecord(patch)) throw new PatchError(400, 'the patch must be an object');
  const merged = type === 'merge' ? mergePatch(current, patch) : strategicMerge(current, patch, mergeKeys);
  return merged as Json;
}
