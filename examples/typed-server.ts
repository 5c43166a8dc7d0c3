/** Serves examples/typed-webhooks.ts with the server's whole lifecycle: `npx tsc && node typed-server.js`. */
import { runKubeAdmissionServer } from 'kube-admission-server';
import { webhooks } from './typed-webhooks.js';

process.exitCode = await runKubeAdmissionServer({ webhooks });
