/** A plain HTTPS client for tests that assert exact status codes and bodies of the double. */
import { request } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { deadlineSignal } from '../util/waits.js';

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestOptions {
  body?: unknown;
  contentType?: string;
  /** The Accept header (a Table: `application/json;as=Table;v=v1;g=meta.k8s.io`). */
  accept?: string;
  /** Overrides the double's token; null sends no Authorization header. */
  token?: string | null;
  signal?: AbortSignal;
  /** Default 10 s. */
  timeoutMs?: number;
}

export function rawRequest(
  api: { url: string; caPem: string; token: string },
  method: string,
  path: string,
  options: RawRequestOptions = {},
): Promise<RawReply> {
  const url = new URL(path, api.url);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const token = options.token === undefined ? api.token : options.token;
  const headers: Record<string, string> = {};
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (options.accept !== undefined) headers.Accept = options.accept;
  if (body !== undefined) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    // Node sends a DELETE body without framing unless the length is given.
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  const signal = deadlineSignal(options.timeoutMs ?? 10_000, options.signal);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca: api.caPem, headers, signal, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
