import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/types.js';

/**
 * JSON logs, on stdout by default (`render` logs to stderr: its stdout is YAML). Writes are
 * asynchronous so a slow log pipe never stalls admission (main.ts flushes before exiting), and
 * not batched, so `kubectl logs` shows each line at once. Key material is redacted wherever it
 * might be passed by mistake.
 */
export function createLogger(level: LogLevel, fd: 1 | 2 = 1): Logger {
  return pino(
    {
      level,
      base: { name: 'kube-admission-server' },
      redact: { paths: ['keyPem', '*.keyPem', 'key', '*.key', 'tls.key', '*.privateKey'], censor: '[redacted]' },
    },
    pino.destination({ fd, sync: false }),
  );
}
