// The least a call back to back can wait for a worker process: node bench/fifo_floor.mjs [round trips]
//
// A frame of 200 bytes written to a FIFO, a Python process that writes it straight back on a
// second FIFO (polling its input for 0.3 ms before it sleeps, as the worker does), and the answer
// read on the event loop, as the shim reads the answers that bring passes: the round trip with no
// decoding, no deciding and no encoding on either side. Prints its p10 and p50 in microseconds.
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const trips = Number(process.argv[2] ?? 3000);
const WARM_UP = 200;
const python = process.env.RTB_PYTHON || 'python3';
const folder = mkdtempSync(join(tmpdir(), 'rtb-fifo-floor-'));
const [requests, answers] = [join(folder, 'requests'), join(folder, 'answers')];
execFileSync('mkfifo', ['-m', '600', requests, answers]);
const ECHO = `
import os, select, sys, time
requests = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
answers = os.open(sys.argv[2], os.O_WRONLY)
while True:
    until = time.perf_counter() + 0.0003
    while True:
        try:
            data = os.read(requests, 65536)
            break
        except BlockingIOError:
            if time.perf_counter() > until:
                select.select([requests], [], [])
                until = time.perf_counter() + 0.0003
    if not data:
        break
    os.write(answers, data)
`;
const echo = spawn(python, ['-c', ECHO, requests, answers], { stdio: 'inherit' });
try {
  const writer = openSync(requests, 'w');
  const reader = createReadStream(answers, { highWaterMark: 65536 });
  let answered = () => {};
  reader.on('data', () => answered());
  const frame = Buffer.alloc(200, 7);
  const samples = [];
  for (let trip = 0; trip < trips + WARM_UP; trip++) {
    const started = performance.now();
    const answer = new Promise((resolve) => (answered = resolve));
    writeSync(writer, frame);
    await answer;
    if (trip >= WARM_UP) samples.push((performance.now() - started) * 1000);
  }
  samples.sort((a, b) => a - b);
  const at = (fraction) => samples[Math.floor(samples.length * fraction)].toFixed(1);
  console.log(`bare FIFO round trip, back to back, answer read on the event loop (${trips} trips): p10 ${at(0.1)} µs, p50 ${at(0.5)} µs`);
  reader.destroy();
} finally {
  echo.kill();
  rmSync(folder, { recursive: true, force: true });
}
