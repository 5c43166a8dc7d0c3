// The review in one place you can name: the files of src/ that run any code while one review of a
// custom handler is answered, read from V8's precise coverage of the compiled server in a child
// process (test/support/server/review-files.mjs), taken just before and just after that review.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const root = fileURLToPath(new URL('..', import.meta.url));
const script = fileURLToPath(new URL('./support/server/review-files.mjs', import.meta.url));

async function filesOfOneReview(type: 'validating' | 'mutating'): Promise<{ answer: { status: number; text: string }; files: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, [script, root, type], { timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

t.test('a validating review runs code in at most six files of src/: the HTTP layer, the review folder, the registry', async (t) => {
  const { answer, files } = await filesOfOneReview('validating');
  t.equal(answer.status, 200);
  t.match(answer.text, /"allowed":true/, 'the review was answered');
  t.ok(files.length <= 6, `${files.length} files: ${files.join(', ')}`);
  t.same(
    files.filter((file) => !file.startsWith('src/server/review/')),
    ['src/server/connections.ts', 'src/server/webhook-server.ts', 'src/webhooks/registry.ts'],
    'outside src/server/review/: the listener, fastify routes and the registry lookup',
  );
});

t.test("a mutating review adds only the patch's files", async (t) => {
  const { answer, files } = await filesOfOneReview('mutating');
  t.match(answer.text, /"patchType":"JSONPatch"/, 'the review was answered with a patch');
  t.same(
    files.filter((file) => !file.startsWith('src/server/')),
    ['src/admission/json-diff.ts', 'src/admission/patch.ts', 'src/webhooks/registry.ts'],
  );
});
