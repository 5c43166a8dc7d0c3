import pino, { type Bindings, type Logger, type LoggerOptions } from 'pino';
import type { LogFormat, LogLevel } from '../config/types.js';

/** How long a log line may wait in the batch when traffic is low. */
const FLUSH_INTERVAL_MS = 1000;

/**
 * What log pipelines (Loki, Elasticsearch, Cloud Logging, Datadog) parse without a pino-specific
 * mapping: `"level":"info"` and `"time":"2026-01-02T03:04:05.678Z"`. `pino` keeps pino's numeric
 * level and epoch milliseconds, for pino-pretty and tools built on them.
 */
const FORMATS: Record<LogFormat, Pick<LoggerOptions, 'formatters' | 'timestamp'>> = {
  json: { formatters: { level: (label) => ({ level: label }) }, timestamp: pino.stdTimeFunctions.isoTime },
  pino: {},
};

/**
 * The fields every line carries besides `level`, `time` and `msg`. A line's own fields are named
 * for what they are (`object`, `entry`, `configuration`), never like these or a child's bindings
 * (`component`): a repeated key is a line that jq, Loki and most parsers read with one field lost.
 */
export const LOG_BASE: Readonly<Record<string, string>> = { name: 'kube-admission-server' };

export interface LoggerFormatOptions {
  format?: LogFormat;
  flushIntervalMs?: number;
}

/**
 * JSON logs, on stdout by default (`render` logs to stderr: its stdout is YAML). Lines are
 * written asynchronously in batches of up to 4 KiB: one write per review cost about 45% of the
 * admission throughput here (measured: `git log -p BENCHMARKS.md`), and a slow log pipe must never stall admission. A
 * timer flushes at least every second, and main.ts flushes before exiting. Key material is
 * redacted wherever it might be passed by mistake.
 */
export function createLogger(level: LogLevel, dest: number | string = 1, options: LoggerFormatOptions = {}): Logger {
  const flushIntervalMs = options.flushIntervalMs ?? FLUSH_INTERVAL_MS;
  const logger = pino(
    {
      level,
      ...FORMATS[options.format ?? 'json'],
      base: LOG_BASE,
      redact: { paths: ['keyPem', '*.keyPem', 'key', '*.key', 'tls.key', '*.privateKey'], censor: '[redacted]' },
    },
    pino.destination({ dest, sync: false, minLength: 4096 }),
  );
  // One flush at a time: each one waits for the destination to drain, and while a log pipe is
  // stalled, a flush per second would pile up listeners (and warnings) until it drains.
  let flushing = false;
  setInterval(() => {
    if (flushing) return;
    flushing = true;
    logger.flush(() => (flushing = false));
  }, flushIntervalMs).unref();
  return logger;
}

/**
 * A child for components whose lines are built field by field from known values (the admission
 * server: uid, kind, names, operation, decision, timing): key material is never among them, so
 * the wildcard redaction is skipped there. It was the single largest cost of a review: about a
 * fifth of the instructions per request and ~19 KB of garbage per log line (measured: `git log -p BENCHMARKS.md`).
 */
export function fixedFieldsLogger(logger: Logger, bindings: Bindings): Logger {
  return logger.child(bindings, { redact: { paths: [] } });
}
