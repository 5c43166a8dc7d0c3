import { constants } from 'node:crypto';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import { DEFAULT_CONNECTION_LIMITS } from './connections.js';

/** Serving certificate and key, PEM. */
export interface ServingCertificate {
  certPem: string;
  keyPem: string;
}

export interface ServerTlsMaterial extends ServingCertificate {
  /** When set, reviews need a client certificate this CA signed (see clientCertificateGate). */
  clientCaPem?: string | undefined;
}

/**
 * TLS 1.3 suites (all AEAD) and, for TLS 1.2, only ECDHE key exchange with AEAD ciphers: no RSA
 * key transport, no CBC, no SHA-1 MACs. kube-apiserver's Go client offers all of these.
 */
export const SERVER_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/**
 * Everything a secure context needs. setSecureContext replaces the whole context, so the version
 * floor and cipher list must be passed every time, not only at start.
 */
export function secureContextOptions(material: ServerTlsMaterial): SecureContextOptions {
  const options: SecureContextOptions = {
    cert: material.certPem,
    key: material.keyPem,
    minVersion: 'TLSv1.2',
    ciphers: SERVER_CIPHERS,
    honorCipherOrder: true,
    // kube-apiserver's Go client never starts a renegotiation, while each client-initiated one
    // costs the server a full handshake and Node only rate-limits them (3 per 10 minutes per
    // connection): refuse them outright. TLS 1.3 has no renegotiation at all.
    secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
  };
  if (material.clientCaPem !== undefined) options.ca = material.clientCaPem;
  return options;
}

/**
 * Options for the HTTPS server itself. With a client CA the certificate is asked for and verified
 * in the handshake, but a connection without a valid one is not cut there: the review routes
 * refuse it (clientCertificateGate), while `GET /served-entries`, which the leader asks of every
 * replica and which holds only rule names, stays open to it (the leader has no kube-apiserver
 * client certificate to present).
 */
export function serverTlsOptions(material: ServerTlsMaterial): TlsOptions {
  const clientAuth = material.clientCaPem !== undefined;
  return {
    ...secureContextOptions(material),
    requestCert: clientAuth,
    rejectUnauthorized: false,
    // A client that connects and never finishes the handshake must not hold a socket for long.
    handshakeTimeout: DEFAULT_CONNECTION_LIMITS.handshakeTimeoutMs,
  };
}
