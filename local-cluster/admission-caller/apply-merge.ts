/**
 * The part of server-side apply's structured merge that a MutatingAdmissionPolicy's
 * ApplyConfiguration needs for what the double's tests and the server's built-ins write (the
 * patch/smd.go path: the apply configuration merged into the object, no managed fields). The
 * subset: objects (`Object{...}`) and maps merge key by key (granular, as structured merge treats
 * structs and maps without `x-kubernetes-map-type: atomic`); the lists `containers`,
 * `initContainers` and `ephemeralContainers` are associative, keyed by `name` (an item merges
 * into the live item of the same name, or is appended); every other list is atomic (replaced
 * whole); a scalar replaces. Not modelled, and refused so a test never relies on them: a null
 * value, an item of a keyed list without its key. Not modelled at all: the schema (an unknown
 * field is kept here, then dropped by the typed decode, where kube-apiserver refuses it), other
 * associative lists and sets, atomic maps and structs.
 */
import { isRecord } from '../fake-apiserver/objects.js';

type Json = Record<string, unknown>;

/** Associative lists and their key, by field name. */
const LIST_MAP_KEYS: Readonly<Record<string, string>> = { containers: 'name', initContainers: 'name', ephemeralContainers: 'name' };

export class ApplyMergeError extends Error {}

const copy = <T>(value: T): T => structuredClone(value);

function mergeList(field: string, live: unknown, patch: unknown[], path: string): unknown[] {
  const key = LIST_MAP_KEYS[field];
  if (key === undefined || !Array.isArray(live)) return patch.map((item, index) => mergeValue(undefined, undefined, item, `${path}[${index}]`));
  const merged = live.map(copy);
  patch.forEach((item, index) => {
    if (!isRecord(item) || typeof item[key] !== 'string') throw new ApplyMergeError(`${path}[${index}]: an item of an associative list needs its key "${key}"`);
    const at = merged.findIndex((existing) => isRecord(existing) && existing[key] === item[key]);
    if (at < 0) merged.push(mergeValue(undefined, undefined, item, `${path}[${index}]`));
    else merged[at] = mergeValue(undefined, merged[at], item, `${path}[${index}]`);
  });
  return merged;
}

function mergeValue(field: string | undefined, live: unknown, patch: unknown, path: string): unknown {
  if (patch === null || patch === undefined) throw new ApplyMergeError(`${path}: a null value in an apply configuration is not supported by the double`);
  if (Array.isArray(patch)) return mergeList(field ?? '', live, patch, path);
  if (isRecord(patch)) {
    const result: Json = isRecord(live) ? copy(live) : {};
    for (const [key, value] of Object.entries(patch)) result[key] = mergeValue(key, result[key], value, `${path}.${key}`);
    return result;
  }
  return patch;
}

/** The object with the apply configuration merged in (a new object; `object` is not changed). */
export function mergeApplyConfiguration(object: Json, applyConfiguration: unknown): Json {
  if (!isRecord(applyConfiguration)) throw new ApplyMergeError('an apply configuration must be an Object{...}');
  return mergeValue(undefined, object, applyConfiguration, '') as Json;
}
