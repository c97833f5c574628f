// The hand-written codec against Python's `msgpack`, both ways: every value JS encodes must be
// byte-identical to what Python encodes for the value Python decoded from it, and JS must decode
// Python's bytes back to the original value.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { Frames, decode, encode, encodeFrame } from '../worker/msgpack.js';

const python = process.env.RTB_PYTHON || 'python3';

// Python side: read a JSON list of hex frames; for each, decode it, describe the Python value,
// and encode it again with Python's msgpack.
const ROUND_TRIP_SCRIPT = `
import json, sys, msgpack
def describe(value):
    if isinstance(value, dict):
        return {"map": [[describe(k), describe(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return {"array": [describe(v) for v in value]}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, (bytes, str, bool, int)) or value is None:
        return {type(value).__name__: value.hex() if isinstance(value, bytes) else str(value)}
    raise TypeError(type(value))
out = []
for frame in json.load(sys.stdin):
    value = msgpack.unpackb(bytes.fromhex(frame), raw=False)
    out.append({"python": describe(value), "repacked": msgpack.packb(value, use_bin_type=True).hex()})
json.dump(out, sys.stdout)
`;

// Python-only shapes JS never produces but must read: float32, int map keys, invalid UTF-8.
const PYTHON_FIXTURES_SCRIPT = `
import json, sys, msgpack
cases = {
    "float32": msgpack.packb(1.5, use_single_float=True),
    "int keys": msgpack.packb({1: "a", -2: "b"}, strict_types=False),
    "invalid utf-8": b"\\xa3a\\xffb",
    "nested": msgpack.packb({"a": [{"b": {}}, [], b"\\x00\\x01"], "c": None}, use_bin_type=True),
}
json.dump({name: packed.hex() for name, packed in cases.items()}, sys.stdout)
`;

function runPython(script, input) {
  const run = spawnSync(python, ['-c', script], { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

const toHex = (bytes) => Buffer.from(bytes).toString('hex');
const fromHex = (hex) => new Uint8Array(Buffer.from(hex, 'hex'));

const ascii = (length) => 'a'.repeat(length);
const range = (length) => Array.from({ length }, (_, index) => index);

const CASES = [
  null, true, false,
  0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1,
  -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 53) + 1,
  2n ** 63n - 1n, 2n ** 64n - 1n, -(2n ** 63n), 2n ** 53n + 1n,
  1.5, -0.25, 1e300, -1e-300, Infinity, -Infinity, 0.1 + 0.2,
  '', 'a', ascii(31), ascii(32), ascii(63), ascii(64), ascii(255), ascii(256), ascii(65535), ascii(65536),
  ascii(30) + 'é', ascii(40) + '日', 'del\u007f', // short strings are written by hand while ASCII
  'héllo wörld', '✓ 日本語', '🎸 \u{1F600}', 'nul\u0000inside', 'é'.repeat(20), '日'.repeat(100),
  new Uint8Array(0), new Uint8Array([0, 1, 255]), new Uint8Array(range(256).map((n) => n)),
  new Uint8Array(70000).fill(7),
  [], {}, [[]], [{}], { '': {} }, range(15), range(16), range(65536),
  Object.fromEntries(range(15).map((n) => [`k${n}`, n])),
  Object.fromEntries(range(16).map((n) => [`k${n}`, n])),
  { a: { b: { c: [1, 'two', { d: null }] } }, unicode: { 'ключ': 'значение' } },
  { command: 'curl --max-time 60 https://open-data.canada.ca/', description: '1st', timeoutMs: 30000 },
];

test('JS encoding is byte-identical to Python encoding of what Python decoded, and JS reads it back', () => {
  const frames = CASES.map((value) => toHex(encode(value)));
  const results = runPython(ROUND_TRIP_SCRIPT, JSON.stringify(frames));
  results.forEach((result, index) => {
    const value = CASES[index];
    assert.equal(result.repacked, frames[index], `bytes differ for case ${index}`);
    assert.deepEqual(decode(fromHex(result.repacked)), value, `value differs for case ${index}`);
  });
});

test('Python sees the intended types', () => {
  const probe = [2n ** 63n - 1n, 2 ** 40, 1.5, new Uint8Array([1]), 'x', -0, 2 ** 64 + 2 ** 12];
  const [big, wide, float, bin, text, negativeZero, huge] = runPython(
    ROUND_TRIP_SCRIPT,
    JSON.stringify(probe.map((value) => toHex(encode(value)))),
  ).map((result) => result.python);
  assert.deepEqual(big, { int: String(2n ** 63n - 1n) });
  assert.deepEqual(wide, { int: String(2 ** 40) });
  assert.deepEqual(float, { float: '1.5' });
  assert.deepEqual(bin, { bytes: '01' });
  assert.deepEqual(text, { str: 'x' });
  assert.deepEqual(negativeZero, { float: '-0.0' });
  assert.deepEqual(huge, { float: '1.8446744073709556e+19' });
});

test('lone surrogates are replaced by U+FFFD instead of throwing', () => {
  const [lone] = runPython(ROUND_TRIP_SCRIPT, JSON.stringify([toHex(encode('a\uD800b\uDFFF'))]));
  assert.deepEqual(lone.python, { str: 'a\uFFFDb\uFFFD' });
  assert.equal(decode(encode('\uD83D')), '\uFFFD');
});

test('shapes only Python produces decode sensibly', () => {
  const fixtures = runPython(PYTHON_FIXTURES_SCRIPT, '');
  assert.equal(decode(fromHex(fixtures.float32)), 1.5);
  assert.deepEqual(decode(fromHex(fixtures['int keys'])), { 1: 'a', '-2': 'b' });
  assert.equal(decode(fromHex(fixtures['invalid utf-8'])), 'a\uFFFDb');
  assert.deepEqual(decode(fromHex(fixtures.nested)), { a: [{ b: {} }, [], new Uint8Array([0, 1])], c: null });
});

test('64-bit integers decode to Number when safe and to BigInt beyond', () => {
  assert.equal(decode(encode(2n ** 53n - 1n)), 2 ** 53 - 1);
  assert.equal(decode(encode(2n ** 60n)), 2n ** 60n);
  assert.equal(decode(encode(-(2n ** 60n))), -(2n ** 60n));
  assert.throws(() => encode(2n ** 64n), RangeError);
});

test('a "__proto__" key stays a key', () => {
  const decoded = decode(encode(JSON.parse('{"__proto__": {"polluted": true}}')));
  assert.equal(Object.getPrototypeOf(decoded), Object.prototype);
  assert.deepEqual(Object.keys(decoded), ['__proto__']);
  assert.equal({}.polluted, undefined);
});

test('truncated, trailing and unsupported input throws', () => {
  const whole = encode({ a: 'text' });
  assert.throws(() => decode(whole.subarray(0, whole.length - 1)), RangeError);
  assert.throws(() => decode(new Uint8Array([...whole, 0])), RangeError);
  assert.throws(() => decode(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff])), RangeError);
  assert.throws(() => decode(new Uint8Array([0xc1])), TypeError);
  assert.throws(() => encode(() => 1), TypeError);
});

test('encoding a large value owns its buffer (its speed is in bench/, not here)', () => {
  const big = { content: 'x'.repeat(10 * 1024 * 1024) };
  const bytes = encode(big);
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.buffer.byteLength, bytes.length);
  assert.deepEqual(decode(bytes), big);
});

test('frames appended to one buffer are the frames encodeFrame makes, one after another; the buffer is reused', () => {
  const frames = new Frames();
  const values = [{ id: 1, op: 'guard', args: { text: 'é'.repeat(40) } }, { id: 2, op: 'result', text: 'x'.repeat(3000) }, 7];
  const lengths = values.map((value) => frames.add(value));
  assert.deepEqual(lengths, values.map((value) => encodeFrame(value).length));
  const taken = frames.take();
  assert.deepEqual([...taken], values.flatMap((value) => [...encodeFrame(value)]));
  assert.equal(frames.length, 0, 'none wait once taken');
  assert.throws(() => frames.add({ bad: () => 1 }), TypeError);
  assert.equal(frames.length, 0, 'what could not be encoded leaves nothing behind');
  frames.add('again');
  assert.equal(frames.take().buffer, taken.buffer, 'the same buffer, written over');
  frames.add({ content: 'x'.repeat(2 * 1024 * 1024) });
  const large = frames.take();
  assert.deepEqual(decode(large.subarray(4)), { content: 'x'.repeat(2 * 1024 * 1024) });
  frames.add(1);
  assert.notEqual(frames.take().buffer, large.buffer, 'a buffer grown past 1 MB is not kept');
});

test('a request appended with its id and reply is the frame of {id, ...message, reply}, made without that object', () => {
  const frames = new Frames();
  const keys = Object.fromEntries(Array.from({ length: 15 }, (_, n) => [`k${n}`, n])); // 16 and 17 keys: a map16 head
  const requests = [
    [{ op: 'guard', agent: 3, call: 'c1', name: 'read', args: { path: '/w/a.js' } }, 7, undefined],
    [{ op: 'result', agent: 3, call: 'c1', text: 'ü'.repeat(50), outcome: { isError: false } }, 8, 'later'],
    [{ op: 'step', agent: 4 }, 2 ** 40, 'errors'],
    [keys, 9, undefined],
    [keys, 10, 'later'],
  ];
  const lengths = requests.map(([message, id, reply]) => frames.addRequest(message, id, reply));
  const objects = requests.map(([message, id, reply]) => (reply === undefined ? { id, ...message } : { id, ...message, reply }));
  assert.deepEqual(lengths, objects.map((object) => encodeFrame(object).length));
  assert.deepEqual([...frames.take()], objects.flatMap((object) => [...encodeFrame(object)]));
  assert.throws(() => frames.addRequest({ bad: () => 1 }, 11), TypeError);
  assert.equal(frames.length, 0, 'what could not be encoded leaves nothing behind');
});
