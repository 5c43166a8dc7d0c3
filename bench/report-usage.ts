/**
 * Preloaded into a tool run by the tools benchmark (`node --import`): at exit, the process's peak
 * RSS and CPU time as one JSON line on stderr.
 */
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const usage = process.resourceUsage();
  writeSync(2, `\n${JSON.stringify({ benchUsage: { maxRssKb: usage.maxRSS, cpuUs: usage.userCPUTime + usage.systemCPUTime } })}\n`);
});
