import type { KubeConfig } from '@kubernetes/client-node';
import { listPages, requestJson, requestText } from '../kube/paged-list.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../kube/request-deadline.js';
import { reportsPath, type ReportApi } from './report-api.js';

/** A report as read back: what the writer compares with what it would write. */
export interface StoredReport {
  name: string;
  namespace: string;
  resourceVersion: string;
  body: Record<string, unknown>;
}

/** The calls the writer makes; the tests hand it one of their own. */
export interface ReportClient {
  /** Every report of the install (both scopes), paged. */
  list(labelSelector: string, signal: AbortSignal): AsyncGenerator<StoredReport>;
  /** Resolves with the created report's resourceVersion. */
  create(namespace: string, json: string, signal: AbortSignal): Promise<string>;
  /** The JSON with `resourceVersion` set in its metadata (kube-apiserver updates a custom resource only so); resolves with the new one. */
  replace(namespace: string, name: string, json: string, resourceVersion: string, signal: AbortSignal): Promise<string>;
  read(namespace: string, name: string, signal: AbortSignal): Promise<StoredReport>;
  delete(namespace: string, name: string, signal: AbortSignal): Promise<void>;
}

/** Reports are up to --reports-max-bytes each: a few per page keeps a page of them small. */
const PAGE_SIZE = 8;

interface Meta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/**
 * The body as written, with the resourceVersion the update is made against first in its metadata:
 * spliced into the JSON (a report's first `"metadata":{` is its own; what precedes it is its
 * apiVersion and kind), not parsed and written again, for a body of a quarter of a megabyte.
 */
export function withResourceVersion(json: string, resourceVersion: string): string {
  const at = json.indexOf('"metadata":{');
  if (at < 0) throw new Error('a report body without metadata');
  const insert = at + '"metadata":{'.length;
  return `${json.slice(0, insert)}"resourceVersion":${JSON.stringify(resourceVersion)},${json.slice(insert)}`;
}

/**
 * The resourceVersion of a report as the API answered a write: read from the text (the first one
 * is the object's own; results name none), not by parsing a quarter of a megabyte into objects.
 */
function resourceVersionOf(text: string): string {
  const match = /"resourceVersion":"([^"]*)"/.exec(text);
  if (!match) throw new Error('the answer names no resourceVersion');
  return match[1] ?? '';
}

function stored(object: Record<string, unknown> & Meta): StoredReport {
  return { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace ?? '', resourceVersion: object.metadata?.resourceVersion ?? '', body: object };
}

/** The report API over raw JSON requests: what is sent is the writer's JSON, byte for byte. */
export function reportClient(kubeConfig: KubeConfig, api: ReportApi, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): ReportClient {
  const send = <T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, signal: AbortSignal, body?: string) =>
    requestJson<T>(kubeConfig, { method, path, ...(body !== undefined ? { body } : {}) }, timeoutMs, signal);
  return {
    async *list(labelSelector, signal) {
      for (const namespaced of [true, false]) {
        const kind = namespaced ? api.namespaced : api.cluster;
        const target = { path: `/apis/${api.apiVersion}/${kind.resource}`, apiVersion: api.apiVersion, kind: kind.kind };
        for await (const page of listPages(kubeConfig, target, { pageSize: PAGE_SIZE, timeoutMs, signal, labelSelector })) {
          for (const item of page.items) yield stored(item as Record<string, unknown> & Meta);
        }
      }
    },
    async create(namespace, json, signal) {
      return resourceVersionOf(await requestText(kubeConfig, { method: 'POST', path: reportsPath(api, namespace), body: json }, timeoutMs, signal));
    },
    async replace(namespace, name, json, resourceVersion, signal) {
      return resourceVersionOf(await requestText(kubeConfig, { method: 'PUT', path: `${reportsPath(api, namespace)}/${name}`, body: withResourceVersion(json, resourceVersion) }, timeoutMs, signal));
    },
    async read(namespace, name, signal) {
      return stored(await send<Meta & Record<string, unknown>>('GET', `${reportsPath(api, namespace)}/${name}`, signal));
    },
    async delete(namespace, name, signal) {
      await send('DELETE', `${reportsPath(api, namespace)}/${name}`, signal);
    },
  };
}
