import { EventEmitter } from 'node:events';

/**
 * The leader election of a process that is alone by construction (the dev loop, registering under
 * a name of its own): it leads from the start and writes no Lease, so it leaves nothing behind.
 */
export class SoleLeader extends EventEmitter<{ 'started-leading': []; 'stopped-leading': [] }> {
  readonly firstAttempt = Promise.resolve(true);

  run(signal: AbortSignal): Promise<void> {
    return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  release(): Promise<'not-held'> {
    return Promise.resolve('not-held');
  }
}
