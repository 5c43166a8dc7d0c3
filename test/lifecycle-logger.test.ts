import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { symbols, type Logger } from 'pino';
import t from 'tap';
import { createLogger, fixedFieldsLogger } from '../src/lifecycle/logger.js';

function flushed(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

const dir = mkdtempSync(path.join(tmpdir(), 'logger-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('key material is redacted, top level and one level down; fixed-field lines carry their bindings', async (t) => {
  const file = path.join(dir, 'log.json');
  const logger = createLogger('info', file);
  logger.info({ keyPem: 'TOP-SECRET', material: { keyPem: 'NESTED-SECRET', certPem: 'public' } }, 'material');
  fixedFieldsLogger(logger, { component: 'admission' }).info({ uid: 'u-1', decision: 'allowed' }, 'admission review');
  await flushed(logger);
  const [material, review] = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.equal(material?.keyPem, '[redacted]');
  t.same(material?.material, { keyPem: '[redacted]', certPem: 'public' });
  t.notMatch(readFileSync(file, 'utf8'), /SECRET/);
  t.match(review, { component: 'admission', uid: 'u-1', decision: 'allowed', msg: 'admission review' });
});

t.test('a stalled log pipe does not pile up flush listeners', async (t) => {
  const fifo = path.join(dir, 'stalled.fifo');
  t.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  // A reader that never reads: the pipe fills and the logger's writes stall.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.teardown(() => closeSync(reader));
  const logger = createLogger('info', fifo, { flushIntervalMs: 20 });
  const stream = (logger as unknown as Record<symbol, NodeJS.EventEmitter>)[symbols.streamSym] as NodeJS.EventEmitter;
  const line = 'x'.repeat(1024);
  for (let i = 0; i < 200; i++) logger.info({ line }, 'filler');
  await sleep(400); // ~20 flush intervals while the pipe stays full
  t.ok(stream.listenerCount('drain') <= 1, `drain listeners: ${stream.listenerCount('drain')}`);
  t.ok(stream.listenerCount('error') <= 2, `error listeners: ${stream.listenerCount('error')}`);
  (stream as unknown as { destroy(): void }).destroy();
});

t.test('log lines carry the level name and an ISO-8601 time by default; --log-format pino keeps the numbers', async (t) => {
  const byFormat = async (format?: 'json' | 'pino'): Promise<Record<string, unknown>> => {
    const file = path.join(dir, `format-${format ?? 'default'}.json`);
    const logger = createLogger('info', file, format ? { format } : {});
    const before = Date.now();
    fixedFieldsLogger(logger, { component: 'admission' }).warn({ uid: 'u-2' }, 'a warning');
    await flushed(logger);
    const line = JSON.parse(readFileSync(file, 'utf8').trim()) as Record<string, unknown>;
    line['loggedAfter'] = before;
    return line;
  };
  const json = await byFormat();
  t.match(json, { level: 'warn', component: 'admission', uid: 'u-2', msg: 'a warning' }, 'the level by name, child bindings kept');
  t.match(json['time'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'an ISO-8601 UTC time');
  const ms = Date.parse(json['time'] as string);
  t.ok(ms >= (json['loggedAfter'] as number) - 1 && ms <= Date.now(), 'the time of the call');
  t.same(await byFormat('json').then((l) => typeof l['level']), 'string');
  const numeric = await byFormat('pino');
  t.equal(numeric['level'], 40);
  t.equal(typeof numeric['time'], 'number');
});
