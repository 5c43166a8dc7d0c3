/**
 * One raw TLS 1.2 ClientHello that offers DEFLATE compression and RFC 5746: the ServerHello says
 * whether the server would compress (CRIME) and whether it supports secure renegotiation.
 */
import { connect } from 'node:net';
import { withTimeout } from '../../src/util/abort.js';
import { compressionClientHello, COMPRESSION_NULL, EXTENSION_RENEGOTIATION_INFO, readFirstServerMessage, type FirstServerMessage } from './tls-records.js';
import type { ScanTarget } from './target.js';

export type HelloProbeResult =
  /** The server answered TLS 1.2 with a ServerHello. */
  | { outcome: 'negotiated'; compression: boolean; secureRenegotiation: boolean; cipherSuite: number }
  /** The server refused TLS 1.2 and below (e.g. TLS 1.3 only): nothing to compress or renegotiate. */
  | { outcome: 'refused'; alert: number };

const PROBE_TIMEOUT_MS = 5_000;

function firstMessage(target: ScanTarget, signal: AbortSignal): Promise<Exclude<FirstServerMessage, { kind: 'incomplete' }>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port, signal });
    let received = Buffer.alloc(0);
    const settle = (action: () => void): void => {
      socket.destroy();
      action();
    };
    socket.on('connect', () => socket.write(compressionClientHello()));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      try {
        const message = readFirstServerMessage(received);
        if (message.kind !== 'incomplete') settle(() => resolve(message));
      } catch (error) {
        settle(() => reject(error as Error));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`the server closed the connection after ${received.length} bytes, before a ServerHello or an alert`)));
  });
}

export async function probeHello(target: ScanTarget, signal?: AbortSignal): Promise<HelloProbeResult> {
  const message = await withTimeout(PROBE_TIMEOUT_MS, signal, (bounded) => firstMessage(target, bounded));
  if (message.kind === 'alert') return { outcome: 'refused', alert: message.description };
  return {
    outcome: 'negotiated',
    compression: message.hello.compressionMethod !== COMPRESSION_NULL,
    secureRenegotiation: message.hello.extensionTypes.includes(EXTENSION_RENEGOTIATION_INFO),
    cipherSuite: message.hello.cipherSuite,
  };
}
