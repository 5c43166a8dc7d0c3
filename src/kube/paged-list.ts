import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { deadlineSignal } from '../util/abort.js';

/** A listable resource: the path of its list across all namespaces, and the kind of its items. */
export interface ListTarget {
  /** e.g. `/api/v1/pods`, `/apis/apps/v1/deployments`. */
  path: string;
  apiVersion: string;
  kind: string;
}

/**
 * A GET answered with another status than 200, shaped as @kubernetes/client-node's ApiException
 * (code, headers, body) so that api-errors classifies it and reads its Retry-After.
 */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  constructor(
    message: string,
    readonly code: number,
    readonly headers: Record<string, string>,
    readonly body: string,
  ) {
    super(message);
  }
}

interface ListPage {
  items?: Record<string, unknown>[];
  metadata?: { continue?: string; resourceVersion?: string };
}

/** One GET, as raw JSON (objects exactly as the API serves them), within `timeoutMs`. */
export function getJson<T = ListPage>(kubeConfig: KubeConfig, path: string, timeoutMs: number, signal: AbortSignal): Promise<T> {
  return requestJson<T>(kubeConfig, { method: 'GET', path }, timeoutMs, signal);
}

/** A request with a JSON body (or none): what requestJson sends. */
export interface JsonRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Sent as is, as application/json. */
  body?: string;
}

/**
 * One request, the answer parsed as JSON, within `timeoutMs`: 200 and 201 resolve (202 too, for a
 * DELETE whose object waits for finalizers); any other status rejects with an HttpStatusError
 * that api-errors classifies.
 */
export async function requestJson<T>(kubeConfig: KubeConfig, call: JsonRequest, timeoutMs: number, signal: AbortSignal): Promise<T> {
  const text = await requestText(kubeConfig, call, timeoutMs, signal);
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`${call.method} ${call.path}: the answer is not JSON: ${(error as Error).message}`);
  }
}

/** requestJson() without the parse: the answer's text, for a caller that needs one field of a large object. */
export async function requestText(kubeConfig: KubeConfig, call: JsonRequest, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(call.path, cluster.server);
  const headers: Record<string, string> = { Accept: 'application/json', ...(call.body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(call.body)) } : {}) };
  const options: Parameters<KubeConfig['applyToHTTPSOptions']>[0] = { method: call.method, headers };
  await kubeConfig.applyToHTTPSOptions(options);
  const bounded = deadlineSignal(timeoutMs, signal);
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, signal: bounded } as Parameters<typeof request>[1], (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status !== 200 && status !== 201 && status !== 202) {
          let message = body.slice(0, 300);
          try {
            message = (JSON.parse(body) as { message?: string }).message ?? message;
          } catch {
            // not a Status: keep the text
          }
          const headers = Object.fromEntries(Object.entries(res.headers).map(([key, value]) => [key, String(value)]));
          reject(new HttpStatusError(`${call.method} ${url.pathname}${url.search}: ${status}: ${message}`, status, headers, body));
          return;
        }
        resolve(body);
      });
    });
    req.on('error', reject);
    req.end(call.body);
  });
}

export interface PagedListOptions {
  pageSize: number;
  /** Per page. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Bounds the number of pages (a server that keeps answering `continue` must not loop forever). */
  maxPages?: number;
  /** Only the objects with these labels (`key=value,...`). */
  labelSelector?: string;
}

/** One page of a list: its items (with apiVersion and kind set) and the list's resourceVersion. */
export interface ListedPage {
  items: Record<string, unknown>[];
  resourceVersion: string;
}

/**
 * The objects of `target` across all namespaces, one page of `pageSize` at a time (`limit` and
 * `continue`, as kube-apiserver pages lists): only one page is held at a time. Each item gets
 * back the apiVersion and kind that items of a typed list leave out.
 */
export async function* listPages(kubeConfig: KubeConfig, target: ListTarget, options: PagedListOptions): AsyncGenerator<ListedPage> {
  let token: string | undefined;
  const maxPages = options.maxPages ?? 10_000;
  for (let pages = 0; pages < maxPages; pages++) {
    const query = new URLSearchParams({ limit: String(options.pageSize) });
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (token) query.set('continue', token);
    const page = await getJson<ListPage>(kubeConfig, `${target.path}?${query}`, options.timeoutMs, options.signal);
    const items = (page.items ?? []).map((item) => ({ apiVersion: target.apiVersion, kind: target.kind, ...item }));
    yield { items, resourceVersion: page.metadata?.resourceVersion ?? '' };
    token = page.metadata?.continue || undefined;
    if (!token) return;
  }
  throw new Error(`${target.path}: still more after ${maxPages} pages; giving up`);
}

/** Every object of `target` across all namespaces, read page by page (listPages). */
export async function listAll(kubeConfig: KubeConfig, target: ListTarget, options: PagedListOptions): Promise<Record<string, unknown>[]> {
  const objects: Record<string, unknown>[] = [];
  for await (const page of listPages(kubeConfig, target, options)) objects.push(...page.items);
  return objects;
}
