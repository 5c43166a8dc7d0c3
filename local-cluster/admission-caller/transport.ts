/**
 * The HTTP side of a webhook call, like kube-apiserver's rest client: HTTPS trusting only the
 * caBundle, server name `<service>.<namespace>.svc`, ALPN http/1.1, keep-alive, the headers of
 * contract 3.5, retries on 429/5xx with a numeric Retry-After, and Go's error texts.
 */
import { request as httpsRequest, type Agent, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import { sleep } from '../util/waits.js';

export interface CallTarget {
  /** The URL as the apiserver prints it in errors, with `?timeout=`. */
  url: string;
  connectHost: string;
  connectPort: number;
  /** SNI and the name the certificate must carry. */
  serverName: string;
  /** The PEM trust roots (from caBundle); undefined: the system roots. */
  ca: string | undefined;
  /** Path and query sent on the wire. */
  requestPath: string;
  /** The URL's host as written, port included (Go's Host header). */
  hostHeader: string;
}

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A failure of the call itself: what follows "failed to call webhook: ". */
export class TransportError extends Error {}

const MAX_RETRIES = 10;

const UNKNOWN_AUTHORITY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_SIGNATURE_FAILURE',
]);

interface NodeError extends Error {
  code?: string;
  cert?: { subjectaltname?: string };
}

function goErrorText(error: NodeError, target: CallTarget, timedOut: boolean): string {
  const prefix = `Post "${target.url}": `;
  if (timedOut) return `${prefix}context deadline exceeded`;
  const code = error.code ?? '';
  if (UNKNOWN_AUTHORITY_CODES.has(code)) {
    return `${prefix}tls: failed to verify certificate: x509: certificate signed by unknown authority`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    const names = (error.cert?.subjectaltname ?? '')
      .split(', ')
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4));
    return `${prefix}tls: failed to verify certificate: x509: certificate is valid for ${names.join(', ')}, not ${target.serverName}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `${prefix}tls: failed to verify certificate: x509: certificate has expired or is not yet valid`;
  }
  if (code === 'ECONNREFUSED') return `${prefix}dial tcp ${target.connectHost}:${target.connectPort}: connect: connection refused`;
  if (code === 'ECONNRESET' || error.message === 'socket hang up') return `${prefix}EOF`;
  return `${prefix}${error.message}`;
}

function postOnce(agent: Agent, target: CallTarget, body: string, signal: AbortSignal): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const options: RequestOptions & ConnectionOptions = {
      agent,
      method: 'POST',
      host: target.connectHost,
      port: target.connectPort,
      path: target.requestPath,
      // An IP is not sent as SNI (RFC 6066); the certificate is then checked against the host.
      servername: isIP(target.serverName) ? undefined : target.serverName,
      ca: target.ca,
      ALPNProtocols: ['http/1.1'],
      minVersion: 'TLSv1.2',
      headers: {
        Host: target.hostHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, */*',
        'User-Agent': 'kube-apiserver-admission',
        'Accept-Encoding': 'gzip',
        'Content-Length': Buffer.byteLength(body),
      },
      signal,
    };
    const request = httpsRequest(options);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        let data = Buffer.concat(chunks);
        if (response.headers['content-encoding'] === 'gzip' && data.length > 0) data = gunzipSync(data);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: data });
      });
    });
    request.on('error', (error: NodeError) => reject(new TransportError(goErrorText(error, target, signal.aborted))));
    request.end(body);
  });
}

function retryAfterSeconds(reply: HttpReply): number | undefined {
  if (reply.status !== 429 && reply.status < 500) return undefined;
  const header = reply.headers['retry-after'];
  if (typeof header !== 'string' || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

/** POSTs the review; retries only on 429/5xx with a numeric Retry-After, within the deadline. */
export async function postReview(agent: Agent, target: CallTarget, body: string, deadline: AbortSignal): Promise<HttpReply> {
  for (let attempt = 0; ; attempt++) {
    const reply = await postOnce(agent, target, body, deadline);
    const wait = retryAfterSeconds(reply);
    if (wait === undefined || attempt >= MAX_RETRIES) return reply;
    try {
      await sleep(wait * 1000, deadline);
    } catch {
      throw new TransportError(`Post "${target.url}": context deadline exceeded`);
    }
  }
}
