/**
 * Client-initiated renegotiation, tried for real: a TLS 1.2 connection asks for a new handshake.
 * Needed because sslscan 2.0.7 reports "not supported" for any server that also speaks TLS 1.3
 * (its check negotiates TLS 1.3, which has no renegotiation), even with --tls12.
 */
import { readFile } from 'node:fs/promises';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { withTimeout } from '../../src/util/abort.js';
import type { ScanTarget } from './target.js';

export type RenegotiationResult =
  | { outcome: 'accepted' }
  | { outcome: 'refused'; reason: string }
  /** No TLS 1.2 (or lower) connection is possible, so there is nothing to renegotiate. */
  | { outcome: 'no-tls12'; reason: string };

const PROBE_TIMEOUT_MS = 5_000;

async function clientCertificate(target: ScanTarget): Promise<Pick<ConnectionOptions, 'cert' | 'key'>> {
  const files = target.clientCertificate;
  return files ? { cert: await readFile(files.certFile, 'utf8'), key: await readFile(files.keyFile, 'utf8') } : {};
}

async function connectTls12(target: ScanTarget, signal: AbortSignal): Promise<TLSSocket> {
  const credentials = await clientCertificate(target);
  return new Promise((resolve, reject) => {
    const socket = connect({
      ...credentials,
      host: target.host,
      port: target.port,
      servername: target.serverName,
      maxVersion: 'TLSv1.2',
      // Only the renegotiation is judged here; trust and weak parameters are sslscan's part.
      rejectUnauthorized: false,
      ciphers: 'ALL:@SECLEVEL=0',
      minVersion: 'TLSv1',
    });
    const onAbort = (): void => {
      socket.destroy(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => {
      signal.removeEventListener('abort', onAbort);
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** OpenSSL's reason ("no renegotiation") out of its error line, or the message as it is. */
function shortReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.trim();
}

function renegotiate(socket: TLSSocket, signal: AbortSignal): Promise<RenegotiationResult> {
  return new Promise((resolve) => {
    const refused = (reason: string): void => resolve({ outcome: 'refused', reason: shortReason(reason) });
    signal.addEventListener('abort', () => socket.destroy(), { once: true });
    socket.on('error', (error) => refused(error.message));
    socket.on('close', () => refused('the server closed the connection'));
    // The new handshake's messages are only processed while the socket is read.
    socket.resume();
    const started = socket.renegotiate({ rejectUnauthorized: false }, (error) => (error ? refused(error.message) : resolve({ outcome: 'accepted' })));
    if (!started) refused('the client could not start a renegotiation');
  });
}

export async function probeClientRenegotiation(target: ScanTarget, signal?: AbortSignal): Promise<RenegotiationResult> {
  return withTimeout(PROBE_TIMEOUT_MS, signal, async (bounded) => {
    let socket: TLSSocket;
    try {
      socket = await connectTls12(target, bounded);
    } catch (error) {
      if (bounded.aborted) throw error;
      return { outcome: 'no-tls12', reason: (error as Error).message };
    }
    try {
      return await renegotiate(socket, bounded);
    } finally {
      socket.destroy();
    }
  });
}
