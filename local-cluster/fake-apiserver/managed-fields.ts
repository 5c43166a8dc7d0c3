/**
 * metadata.managedFields as kube-apiserver's field manager keeps them
 * (apimachinery pkg/util/managedfields/internal): one entry per manager, operation, and (for
 * Update) apiVersion; a write that changes the object sets its writer's entry's `time` to now
 * (managedFieldsUpdater: "if the current operation took any fields ... update the timestamp"),
 * one that changes nothing leaves every entry as it was. Entries sort by operation, then time,
 * then manager. Not modelled: the field sets (fieldsV1 stays empty, so no entry is ever emptied
 * and dropped) and the cap of ten Update entries.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from './objects.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, never>;
}

/** Who writes: the field manager (`unknown` when a write names none) and how. */
export interface ManagedWrite {
  manager?: string;
  operation?: 'Update' | 'Apply';
  /**
   * A change kube-apiserver makes itself, outside its field manager (the delete path's finalizers
   * and Terminating phase, set by a direct storage update): the entries stay as they were.
   */
  untracked?: boolean;
  apiVersion: string;
  /** Now, as kube-apiserver writes it (whole seconds). */
  time: string;
}

/** The object without what a write does not own: resourceVersion, generation and managedFields. */
function content(object: KubeObject): KubeObject {
  const { resourceVersion: _rv, generation: _generation, managedFields: _managed, ...metadata } = object.metadata ?? {};
  return { ...object, metadata };
}

const sameWriter = (entry: ManagedFieldsEntry, write: Required<Pick<ManagedWrite, 'manager' | 'operation'>> & ManagedWrite): boolean =>
  entry.manager === write.manager && entry.operation === write.operation && (write.operation === 'Apply' || entry.apiVersion === write.apiVersion);

const byOrder = (a: ManagedFieldsEntry, b: ManagedFieldsEntry): number =>
  a.operation !== b.operation ? (a.operation < b.operation ? -1 : 1) : a.time !== b.time ? (a.time < b.time ? -1 : 1) : a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0;

/** The managedFields after `next` replaced `old` (undefined: created). */
export function recordWrite(old: KubeObject | undefined, next: KubeObject, entries: readonly unknown[], write: ManagedWrite): unknown[] {
  const kept = entries as ManagedFieldsEntry[];
  if (write.untracked || (old && isDeepStrictEqual(content(old), content(next)))) return [...kept];
  const writer = { ...write, manager: write.manager ?? 'unknown', operation: write.operation ?? 'Update' };
  const entry: ManagedFieldsEntry = { manager: writer.manager, operation: writer.operation, apiVersion: write.apiVersion, time: write.time, fieldsType: 'FieldsV1', fieldsV1: {} };
  return [...kept.filter((e) => !sameWriter(e, writer)), entry].sort(byOrder);
}
