import { ClusterHarness } from './dist/test/support/cluster-harness.js';
const cleanups = [];
const t = { teardown: (fn) => cleanups.push(fn) };
const cluster = await ClusterHarness.start(t);
cluster.seedDeployment(['kas-a']);
try {
  const r = await cluster.startReplica(t, 'kas-a', [], {});
  console.log('ready');
} catch (e) { console.log('ERR', e.message.slice(0, 200)); }
for (const fn of cleanups.reverse()) await fn();
