// Port 0 asks the OS for any free port (tests and local trials run many servers side by side with
// no window in which another process can take a port picked in advance).
import { COMMANDS } from '../src/commands/index.js';
import t from 'tap';
import { loadConfig, type EnvironmentProbe } from '../src/config/load-config.js';

const probe: EnvironmentProbe = { env: {}, readFile: () => undefined, exists: () => false, hostname: () => 'laptop' };

t.test('--port 0 and --health-port 0 are both accepted: the OS picks two different ports', async (t) => {
  const result = loadConfig(['--port', '0', '--health-port', '0'], probe, COMMANDS);
  t.equal(result.kind, 'run', JSON.stringify(result));
  if (result.kind === 'run') t.same([result.config.port, result.config.healthPort], [0, 0]);
});

t.test('a fixed port shared by both listeners is still refused; a port past 65535 too', async (t) => {
  const same = loadConfig(['--port', '9000', '--health-port', '9000'], probe, COMMANDS);
  t.match(same.kind === 'invalid' && same.problems.join('\n'), /--port and --health-port are both 9000/);
  const big = loadConfig(['--port', '65536'], probe, COMMANDS);
  t.match(big.kind === 'invalid' && big.problems.join('\n'), /--port: "65536" is not a port; use a whole number from 1 to 65535 \(or 0 for any free port\)/);
});
