import { RESULT_VALUES, type ReportedRule, type ResultValue } from './results.js';
import { decodeResults, type KeptObject, type RuleTable } from './kept-objects.js';
import type { ReportApi } from './report-api.js';

/** What every report says of itself. */
export const REPORT_SOURCE = 'kube-admission-server';
/** The label that names the install whose reports these are (the configurations' name). */
export const INSTALL_LABEL = 'kube-admission-server.io/install';
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'kube-admission-server' };

/** The deepest split by hash bits; past it (objects whose uids hash alike) the rest is cut in order. */
const MAX_DEPTH = 32;

/** The install's owner, so that uninstalling garbage-collects the reports. */
export interface ReportOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/** How reports are made. */
export interface ReportShape {
  api: ReportApi;
  /** The install's name (`--config-name`): the reports' names start with it and its label selects them. */
  install: string;
  /** No report body is larger than this, in bytes of JSON. */
  maxBytes: number;
  rules: RuleTable;
  /** The rules reported now, by name (severity, category). */
  reported: ReadonlyMap<string, ReportedRule>;
  owner?: ReportOwner;
}

/** One report object as the server writes it. */
export interface ReportObject {
  name: string;
  /** '' for a cluster-scoped report. */
  namespace: string;
  /** The body as sent, measured against maxBytes. */
  json: string;
}

/** An object whose results alone exceed the size limit: left out of the reports, and said so. */
export interface Oversized {
  object: KeptObject;
  bytes: number;
}

interface Item {
  hash: number;
  /** Its results, each as JSON. */
  fragments: string[];
  counts: Record<ResultValue, number>;
  bytes: number;
}

/** FNV-1a, 32 bits: where an object goes when a namespace's results need more than one report. */
export function partitionHash(uid: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) {
    hash ^= uid.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function resource(object: KeptObject): Record<string, string> {
  return { apiVersion: object.kind.apiVersion, kind: object.kind.kind, name: object.name, ...(object.namespace ? { namespace: object.namespace } : {}), uid: object.uid };
}

function itemOf(object: KeptObject, shape: ReportShape): Item {
  const counts = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  const fragments: string[] = [];
  const resources = [resource(object)];
  for (const result of decodeResults(object, shape.rules)) {
    const rule = shape.reported.get(result.rule);
    if (!rule) continue;
    counts[result.result]++;
    fragments.push(
      JSON.stringify({
        ...(shape.api.sourcePerResult ? { source: REPORT_SOURCE } : {}),
        policy: rule.name,
        ...(rule.category ? { category: rule.category } : {}),
        ...(rule.severity ? { severity: rule.severity } : {}),
        result: result.result,
        ...(result.message !== undefined ? { message: result.message } : {}),
        resources,
      }),
    );
  }
  const bytes = fragments.reduce((sum, fragment) => sum + Buffer.byteLength(fragment) + 1, 0);
  return { hash: partitionHash(object.uid), fragments, counts, bytes };
}

/** `kube-admission-server` for a namespace's only report, `kube-admission-server-01` for the objects whose hash starts 0, 1. */
export function reportName(install: string, prefix: string): string {
  return prefix === '' ? install : `${install}-${prefix}`;
}

function build(namespace: string, prefix: string, items: readonly Item[], shape: ReportShape): ReportObject {
  const summary = Object.fromEntries(RESULT_VALUES.map((value) => [value, items.reduce((n, item) => n + item.counts[value], 0)]));
  const name = reportName(shape.install, prefix);
  const metadata = {
    name,
    ...(namespace ? { namespace } : {}),
    labels: { ...MANAGED_BY, [INSTALL_LABEL]: shape.install },
    ...(shape.owner ? { ownerReferences: [shape.owner] } : {}),
  };
  const head = {
    apiVersion: shape.api.apiVersion,
    kind: namespace ? shape.api.namespaced.kind : shape.api.cluster.kind,
    metadata,
    ...(shape.api.sourcePerResult ? {} : { source: REPORT_SOURCE }),
    summary,
  };
  // The results are joined as JSON already made: each object's were serialized once, for sizing.
  const json = `${JSON.stringify(head).slice(0, -1)},"results":[${items.flatMap((item) => item.fragments).join(',')}]}`;
  return { name, namespace, json };
}

/** The envelope (metadata, summary) of a report, a generous estimate in bytes. */
const ENVELOPE_BYTES = 1024;

/** Past the deepest split: consecutive runs of the items, each as large as fits (`<prefix>-0`, `-1`...). */
function cutInOrder(namespace: string, prefix: string, items: readonly Item[], shape: ReportShape, out: ReportObject[]): void {
  let run: Item[] = [];
  let bytes = ENVELOPE_BYTES;
  let runs = 0;
  const flush = (): void => {
    if (run.length > 0) out.push(build(namespace, `${prefix}-${runs++}`, run, shape));
    run = [];
    bytes = ENVELOPE_BYTES;
  };
  for (const item of items) {
    if (bytes + item.bytes > shape.maxBytes) flush();
    run.push(item);
    bytes += item.bytes;
  }
  flush();
}

function partition(namespace: string, prefix: string, items: readonly Item[], shape: ReportShape, out: ReportObject[]): void {
  const estimate = ENVELOPE_BYTES + items.reduce((sum, item) => sum + item.bytes, 0);
  if (estimate <= shape.maxBytes) {
    const report = build(namespace, prefix, items, shape);
    if (Buffer.byteLength(report.json) <= shape.maxBytes) {
      out.push(report);
      return;
    }
  }
  if (prefix.length >= MAX_DEPTH) return cutInOrder(namespace, prefix, items, shape, out);
  const bit = 31 - prefix.length;
  const zero = items.filter((item) => ((item.hash >>> bit) & 1) === 0);
  const one = items.filter((item) => ((item.hash >>> bit) & 1) === 1);
  if (zero.length > 0) partition(namespace, `${prefix}0`, zero, shape, out);
  if (one.length > 0) partition(namespace, `${prefix}1`, one, shape, out);
}

function compareObjects(a: KeptObject, b: KeptObject): number {
  return a.kind.apiVersion.localeCompare(b.kind.apiVersion) || a.kind.kind.localeCompare(b.kind.kind) || a.name.localeCompare(b.name) || a.uid.localeCompare(b.uid);
}

/**
 * The reports of one namespace ('' for the cluster-scoped objects): one report while its results
 * fit in `maxBytes`, otherwise split by the bits of each object's uid hash until each part fits.
 * A pure function of the objects and their results, so the same results always make the same
 * reports (the server and `audit -o report` agree), and a change to one object rewrites only the
 * report its hash falls in. No report for a namespace without results. An object whose results
 * alone exceed the limit is left out and returned in `oversized`.
 */
export function reportsOf(namespace: string, objects: Iterable<KeptObject>, shape: ReportShape): { reports: ReportObject[]; oversized: Oversized[] } {
  const items: Item[] = [];
  const oversized: Oversized[] = [];
  for (const object of [...objects].sort(compareObjects)) {
    const item = itemOf(object, shape);
    if (item.fragments.length === 0) continue;
    if (item.bytes + ENVELOPE_BYTES > shape.maxBytes) oversized.push({ object, bytes: item.bytes });
    else items.push(item);
  }
  const reports: ReportObject[] = [];
  if (items.length > 0) partition(namespace, '', items, shape, reports);
  return { reports, oversized };
}
