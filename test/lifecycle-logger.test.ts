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
  const logger = createLogger('info', fifo, 20);
  const stream = (logger as unknown as Record<symbol, NodeJS.EventEmitter>)[symbols.streamSym] as NodeJS.EventEmitter;
  const line = 'x'.repeat(1024);
  for (let i = 0; i < 200; i++) logger.info({ line }, 'filler');
  await sleep(400); // ~20 flush intervals while the pipe stays full
  t.ok(stream.listenerCount('drain') <= 1, `drain listeners: ${stream.listenerCount('drain')}`);
  t.ok(stream.listenerCount('error') <= 2, `error listeners: ${stream.listenerCount('error')}`);
  (stream as unknown as { destroy(): void }).destroy();
});
