// @ts-check
// The first boot's short way (node-shim/boot/pinned_wheels.py): the pinned wheels fetched at once from
// the configured index and unpacked, each checked against the index's SHA-256; pip takes over,
// saying why, where that way does not apply; a download that is not what the index said fails the
// preparation; a page not of PEP 691's shape, or a wheel past the size its page gives it, leaves
// the work to pip; a boot killed mid-download leaves nothing outside its work folder, which the
// next boot removes. The index is a server on 127.0.0.1 serving the pip wheel Python bundles.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, join } from 'node:path';
import test from 'node:test';

import { BUNDLED_WHEELS, ENVIRONMENT_MODULE, fakePackage, folderOf, offline } from './environments.js';

const WHEEL = readdirSync(BUNDLED_WHEELS).find((name) => name.startsWith('pip-') && name.endsWith('.whl'));
assert.ok(WHEEL, `no pip wheel in ${BUNDLED_WHEELS}`);
const PIP_VERSION = WHEEL.split('-')[1];
const BYTES = readFileSync(join(BUNDLED_WHEELS, WHEEL));

/**
 * A package index on 127.0.0.1 listing the pip wheel under `/simple/pip/` (PEP 691 JSON); `page`
 * changes what it answers there ('json', 'html': PEP 503 HTML only, 'missing': 404) and `sha256`
 * the digest it gives; with `password`, it answers only to the user `user` with it (basic auth);
 * `listed` is the address the JSON page gives the wheel, `moved` where the wheel redirects to,
 * `size` the size it gives the wheel. `shape(document)` is what the first JSON page answers instead
 * of the standard `document` (later pages are HTML, for pip). While `stalled.now` is true the wheel
 * is sent half, and the rest never (`stalled.sent` resolves once the half is out).
 * @param {{ page?: 'json' | 'html' | 'missing', sha256?: string, password?: string, listed?: string, moved?: string,
 *   size?: number, shape?: (document: any) => any, stalled?: { now: boolean, sent?: (value: unknown) => void } }} options
 */
async function index({
  page = 'json', sha256 = createHash('sha256').update(BYTES).digest('hex'), password = '', listed = `../../files/${WHEEL}`, moved = '',
  size = BYTES.length, shape = undefined, stalled = { now: false },
} = {}) {
  const asked = [];
  let shaped = false;
  const server = createServer((request, response) => {
    asked.push(request.url);
    if (password && request.headers.authorization !== `Basic ${Buffer.from(`user:${password}`).toString('base64')}`) {
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="index"' });
      response.end();
      return;
    }
    const document = {
      meta: { 'api-version': '1.0' },
      name: 'pip',
      files: [
        { filename: `pip-${PIP_VERSION}.tar.gz`, url: `../../files/pip-${PIP_VERSION}.tar.gz`, hashes: { sha256: '0'.repeat(64) } },
        { filename: WHEEL, url: listed, hashes: { sha256 }, size },
      ],
    };
    if (request.url === '/simple/pip/' && page === 'json' && !(shape && shaped)) {
      shaped = true;
      response.writeHead(200, { 'Content-Type': 'application/vnd.pypi.simple.v1+json' });
      response.end(JSON.stringify(shape ? shape(document) : document));
    } else if (request.url === '/simple/pip/' && page !== 'missing') {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end(`<!DOCTYPE html><html><body><a href="../../files/${WHEEL}#sha256=${sha256}">${WHEEL}</a></body></html>`);
    } else if (request.url === `/files/${WHEEL}` && moved) {
      response.writeHead(302, { Location: moved });
      response.end();
    } else if (request.url === `/files/${WHEEL}` && stalled.now) {
      response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': BYTES.length });
      response.write(BYTES.subarray(0, BYTES.length >> 1), () => stalled.sent?.(undefined));
    } else if (request.url === `/files/${WHEEL}`) {
      response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      response.end(BYTES);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}/simple`,
    asked,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * A first preparation in a child process (the index answers meanwhile), in a process group of its
 * own: `child`, and `done`, its outcome and stderr.
 */
function startPreparing(env, root) {
  const script = `import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    try {
      process.stdout.write(JSON.stringify(workerInterpreter({ root: ${JSON.stringify(root)}, log: (l) => console.error(l), prefix: 'P: ' })));
    } catch (error) { process.stdout.write(JSON.stringify({ error: error.message })); }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env, detached: true });
  const done = new Promise((resolve) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.stderr.on('data', (chunk) => { err += chunk; });
    child.on('close', () => resolve({ ...(out ? JSON.parse(out) : {}), stderr: err }));
  });
  return { child, done };
}

/** A first preparation in a child process; its outcome and stderr. */
const prepareWith = (env, root) => startPreparing(env, root).done;

/** The environment of a test: no pip configuration file, the index on loopback. */
function online(url, extra = {}) {
  const env = offline({ PIP_INDEX_URL: url, PIP_RETRIES: '0', PIP_TIMEOUT: '5', ...extra });
  delete env.PIP_NO_INDEX;
  return env;
}

const pinnedPackage = () => fakePackage('1.0.0', ['pip>=20'], ['pip'], [`pip==${PIP_VERSION}`]);

test('the pinned wheels are fetched from the configured index, checked and unpacked, with no pip run', async () => {
  const served = await index();
  try {
    const env = online(served.url, { PIP_FIND_LINKS: '' });
    const result = await prepareWith(env, pinnedPackage());
    assert.equal(result.error, undefined, result.stderr);
    const marker = JSON.parse(readFileSync(join(result.dir, 'rtb-environment.json'), 'utf8'));
    assert.equal(marker.pip, 'pinned');
    assert.deepEqual(served.asked, ['/simple/pip/', `/files/${WHEEL}`], 'one page, one wheel: no source archive');
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('P: '));
    assert.ok(lines.includes('P: step 2/3, fetching packages: 1 pinned wheels at once'), lines.join('\n'));
    assert.ok(lines.some((line) => line.startsWith(`P: step 2/3, fetching packages: 1 so far, downloaded pip-${PIP_VERSION} (`)), lines.join('\n'));
    assert.ok(lines.includes('P: step 3/3, installing 1 packages into the environment'), lines.join('\n'));
    const shown = spawnSync(result.command, ['-c', 'import pip, importlib.metadata as m; print(pip.__version__, m.distribution("pip").read_text("INSTALLER").strip())'], { encoding: 'utf8' });
    assert.equal(shown.stdout.trim(), `${PIP_VERSION} dsh-repeat-tool-breaker`);
  } finally {
    served.close();
  }
});

test('an index that asks for the user and password in its address gets them, and no line shows them', async () => {
  const served = await index({ password: 's3cret' });
  try {
    const url = served.url.replace('http://', 'http://user:s3cret@');
    const result = await prepareWith(online(url, { PIP_FIND_LINKS: '' }), pinnedPackage());
    assert.equal(result.error, undefined, result.stderr);
    assert.equal(JSON.parse(readFileSync(join(result.dir, 'rtb-environment.json'), 'utf8')).pip, 'pinned');
    assert.doesNotMatch(result.stderr, /s3cret/);
  } finally {
    served.close();
  }
  const wrong = await index({ page: 'missing', password: 'right' });
  try {
    const url = wrong.url.replace('http://', 'http://user:wr0ng@');
    const result = await prepareWith(online(url), pinnedPackage());
    assert.match(result.stderr, /could not be fetched from http:\/\/127\.0\.0\.1:\d+\/simple\/ \(HTTP Error 401: Unauthorized\)/);
    assert.doesNotMatch(result.stderr + (result.error ?? ''), /wr0ng/);
  } finally {
    wrong.close();
  }
});

test('a wheel listed at or redirected to an address with a password in it, or a local file, is not fetched: pip takes over and no line shows the password', async () => {
  const password = /s3cret/;
  const cases = [
    [{ listed: `http://user:s3cret@localhost/files/${WHEEL}` }, /the index lists pip-\S+ at an address not fetched \(not http or https, or a user in it\);/],
    [{ listed: `file://${join(BUNDLED_WHEELS, WHEEL)}` }, /the index lists pip-\S+ at an address not fetched \(not http or https, or a user in it\);/],
    [{ moved: 'http://user:s3cret@localhost/elsewhere.whl' }, /could not be fetched from http:\/\/127\.0\.0\.1:\d+\/simple\/ \(HTTP Error 302: a redirect to an address not fetched \(not http or https, or a user in it\)\);/],
  ];
  for (const [options, said] of cases) {
    const served = await index(options);
    try {
      const result = await prepareWith(online(served.url), pinnedPackage());
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('P: step 2/3, the pinned wheels do not apply here:'));
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0], said);
      assert.doesNotMatch(result.stderr + (result.error ?? ''), password);
    } finally {
      served.close();
    }
  }
});

test('first boots fetching the pinned wheels at once leave one complete environment and all use it', async () => {
  const served = await index();
  try {
    const env = online(served.url, { PIP_FIND_LINKS: '' });
    const root = pinnedPackage();
    const results = await Promise.all([prepareWith(env, root), prepareWith(env, root), prepareWith(env, root)]);
    for (const result of results) assert.equal(result.error, undefined, result.stderr);
    const [first, ...others] = results.map(({ command, chosenBy, dir }) => ({ command, chosenBy, dir }));
    for (const other of others) assert.deepEqual(other, first);
    assert.deepEqual(readdirSync(folderOf(env)).sort(), [first.dir.split('/').at(-1), 'users'], 'no partial folder is left');
    assert.equal(JSON.parse(readFileSync(join(first.dir, 'rtb-environment.json'), 'utf8')).pip, 'pinned');
    assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
  } finally {
    served.close();
  }
});

test('a wheel whose SHA-256 is not the index\'s fails the preparation, naming both digests', async () => {
  const served = await index({ sha256: 'f'.repeat(64) });
  try {
    const env = online(served.url);
    const result = await prepareWith(env, pinnedPackage());
    assert.match(result.error, /installing the worker's Python packages \(pip>=20\) failed:/);
    assert.match(result.error, new RegExp(`${WHEEL.replace(/[.+]/g, '\\$&')} .* has SHA-256 [0-9a-f]{64}, not the f{64} the index gives: not installed`));
    assert.deepEqual(readdirSync(folderOf(env)), [], 'nothing half-made is left');
  } finally {
    served.close();
  }
});

test('where the pinned wheels cannot be had, pip installs the requirements and the reason is said', async () => {
  const html = await index({ page: 'html' });
  try {
    // An index that answers only in HTML: pip downloads the wheel from it.
    const env = online(html.url, { PIP_FIND_LINKS: '' });
    const result = await prepareWith(env, pinnedPackage());
    assert.equal(result.error, undefined, result.stderr);
    const marker = JSON.parse(readFileSync(join(result.dir, 'rtb-environment.json'), 'utf8'));
    assert.equal(marker.pip, 'base');
    assert.equal(html.asked.filter((url) => url === `/files/${WHEEL}`).length, 1, html.asked.join(' '));
    assert.match(result.stderr, /P: step 2\/3, the pinned wheels do not apply here: the index http:\/\/127\.0\.0\.1:\d+\/simple\/ does not answer in JSON \(PEP 691\); pip resolves them instead/);
  } finally {
    html.close();
  }
  const served = await index({ page: 'missing' });
  try {
    // pip finds the wheel in the bundled folder (find-links) once the index has no page for it.
    const result = await prepareWith(online(served.url), pinnedPackage());
    assert.equal(result.error, undefined, result.stderr);
    assert.match(result.stderr, /P: step 2\/3, the pinned wheels do not apply here: pip .* could not be fetched from http:\/\/127\.0\.0\.1:\d+\/simple\/ \(HTTP Error 404: Not Found\); pip resolves them instead/);
  } finally {
    served.close();
  }
  // pip told to use no index: the short way is not tried at all.
  const result = await prepareWith(offline(), pinnedPackage());
  assert.equal(result.error, undefined, result.stderr);
  assert.match(result.stderr, /the pinned wheels do not apply here: pip is configured to use no index;/);
});

test('no reachable index at all: the preparation fails with pip\'s reason and the fix', async () => {
  const env = online('http://127.0.0.1:9/simple', { PIP_FIND_LINKS: '' });
  const result = await prepareWith(env, pinnedPackage());
  assert.match(result.stderr, /the pinned wheels do not apply here: pip .* could not be fetched from http:\/\/127\.0\.0\.1:9\/simple\/ \(<urlopen error \[Errno 111\] Connection refused>\)/);
  assert.match(result.error, /installing the worker's Python packages \(pip>=20\) failed:/);
  assert.match(result.error, /With network access, run `node .*node-shim\/setup\.js`/);
  assert.deepEqual(readdirSync(folderOf(env)), [], 'nothing half-made is left');
});

/** The one line saying why pip takes over, from a preparation's stderr. */
function whyPip(stderr) {
  const lines = stderr.split('\n').filter((line) => line.startsWith('P: step 2/3, the pinned wheels do not apply here:'));
  assert.equal(lines.length, 1, stderr);
  return lines[0];
}

test('a JSON page not of the standard\'s shape: pip takes over, one line naming the package and what is wrong', async () => {
  const cases = [
    [(page) => ({ ...page, files: { [WHEEL]: page.files[1] } }), 'its `files` is missing or not a list'],
    [(page) => ({ ...page, files: [page.files[0], WHEEL] }), 'entry 2 of its `files` is not an object'],
    [(page) => ({ ...page, files: [page.files[0], { ...page.files[1], hashes: [page.files[1].hashes.sha256] }] }),
      'entry 2 of its `files` has no `hashes` map of names to strings'],
    [(page) => ({ ...page, files: [page.files[0], { ...page.files[1], url: 5 }] }), 'entry 2 of its `files` has no `url` string'],
  ];
  for (const [shape, wrong] of cases) {
    const served = await index({ shape });
    try {
      const result = await prepareWith(online(served.url, { PIP_FIND_LINKS: '' }), pinnedPackage());
      assert.equal(result.error, undefined, result.stderr);
      assert.equal(JSON.parse(readFileSync(join(result.dir, 'rtb-environment.json'), 'utf8')).pip, 'base');
      assert.equal(whyPip(result.stderr), 'P: step 2/3, the pinned wheels do not apply here: the index\'s page for pip is not ' +
        `of the JSON (PEP 691) shape: ${wrong}; pip resolves them instead`);
      assert.doesNotMatch(result.stderr, /Traceback|AttributeError|TypeError/);
    } finally {
      served.close();
    }
  }
});

test('a wheel larger than its page says is not read past that size: pip takes over, saying so', async () => {
  const served = await index({ size: BYTES.length - 1 });
  try {
    const result = await prepareWith(online(served.url, { PIP_FIND_LINKS: '' }), pinnedPackage());
    assert.equal(result.error, undefined, result.stderr);
    assert.equal(JSON.parse(readFileSync(join(result.dir, 'rtb-environment.json'), 'utf8')).pip, 'base');
    assert.equal(whyPip(result.stderr), `P: step 2/3, the pinned wheels do not apply here: ${WHEEL} is larger than ` +
      `the ${BYTES.length - 1} bytes the index's page gives it; pip resolves them instead`);
  } finally {
    served.close();
  }
});

/** Once a file named `name` is somewhere under one of `folders` (polled, for a minute at most). */
async function appears(name, folders) {
  const found = () => folders.some((folder) => readdirSync(folder, { recursive: true }).some((path) => basename(String(path)) === name));
  for (const started = Date.now(); !found(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    assert.ok(Date.now() - started < 60_000, `${name} was not being downloaded after a minute`);
  }
}

/** The pid of the child of `parent` running prepare_environment.py (from /proc). */
function preparing(parent) {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('prepare_environment.py')) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no prepare_environment.py under ${parent}`);
}

test('a boot killed while it downloads a wheel (the pinned way\'s or pip\'s) leaves nothing outside the cache, and the next boot leaves nothing of it', async () => {
  for (const page of /** @type {const} */ (['json', 'html'])) {
    const stalled = { now: true, sent: undefined };
    const sent = new Promise((resolve) => { stalled.sent = resolve; });
    const served = await index({ page, stalled });
    try {
      const env = online(served.url, { PIP_FIND_LINKS: '' });
      const root = pinnedPackage();
      const { child, done } = startPreparing(env, root);
      await sent;
      await appears(WHEEL, [env.TMPDIR, folderOf(env)]);
      process.kill(-child.pid, 'SIGKILL'); // the boot and its Python
      await done;
      assert.deepEqual(readdirSync(env.TMPDIR), [], `${page}: nothing in the temporary folder`);
      assert.ok(readdirSync(folderOf(env)).some((name) => name.includes('.partial-')), 'the work folders are left');
      stalled.now = false;
      const next = await prepareWith(env, root);
      assert.equal(next.error, undefined, next.stderr);
      assert.deepEqual(readdirSync(folderOf(env)).sort(), [basename(next.dir), 'users'], 'the killed boot\'s work folders are gone');
      assert.deepEqual(readdirSync(next.dir).filter((name) => name.startsWith('rtb-wheels')), []);
      assert.deepEqual(readdirSync(env.TMPDIR), [], `${page}: nothing in the temporary folder after the next boot`);
    } finally {
      served.close();
    }
  }
});

/** The pids of the processes whose command line names `text` (from /proc). */
function running(text) {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
    } catch {
      return false; // gone meanwhile
    }
  });
}

for (const page of /** @type {const} */ (['json', 'html'])) test(`the preparing Python stopped while it downloads a wheel (${page === 'json' ? 'the pinned way' : 'pip'}): the boot says so, nothing is left and nothing goes on`, { skip: !existsSync('/proc/self/stat') && 'no /proc' }, async () => {
  const stalled = { now: true, sent: undefined };
  const sent = new Promise((resolve) => { stalled.sent = resolve; });
  const served = await index({ page, stalled });
  try {
    const env = online(served.url, { PIP_FIND_LINKS: '' });
    const { child, done } = startPreparing(env, pinnedPackage());
    await sent;
    await appears(WHEEL, [env.TMPDIR, folderOf(env)]);
    process.kill(preparing(child.pid), 'SIGTERM');
    const result = await done;
    assert.match(result.error, /installing the worker's Python packages \(pip>=20\) failed:\nprepare_environment\.py was stopped by SIGTERM\nWith network access/);
    assert.deepEqual(running(folderOf(env)), [], 'no pip of the preparation still runs');
    assert.deepEqual(readdirSync(env.TMPDIR), [], 'nothing in the temporary folder');
    assert.deepEqual(readdirSync(folderOf(env)), [], 'nothing in the cache folder');
  } finally {
    served.close();
  }
});
