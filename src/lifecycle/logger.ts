import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/types.js';

/** JSON logs on stdout. Key material is redacted wherever it might be passed by mistake. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { name: 'kube-admission-server' },
    redact: { paths: ['keyPem', '*.keyPem', 'key', '*.key', 'tls.key', '*.privateKey'], censor: '[redacted]' },
  });
}
