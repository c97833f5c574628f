// @ts-check
// Reading the worker's reply frames (a 4-byte big-endian length, then one msgpack map): from the
// stdout FIFO with blocking reads into one reused buffer (`Inbox`), and from its fd 3 on the
// event loop (`frameReader`). Only a frame larger than the buffer, or cut between two reads, is
// copied.
import { readSync } from 'node:fs';
import { Socket } from 'node:net';

import { decode } from './msgpack.js';

const READ_SIZE = 64 * 1024;

/** Reply bytes read from a blocking fd, and the frames in them, oldest first. */
export class Inbox {
  constructor() {
    this.bytes = Buffer.allocUnsafe(READ_SIZE);
    this.start = 0;
    this.end = 0;
  }

  /** One blocking read from `fd`, room made first; 0 at the end of the stream (or an unusable fd). */
  fill(fd) {
    const buffered = this.end - this.start;
    const needed = buffered >= 4 ? 4 + this.bytes.readUInt32BE(this.start) : 4;
    if (this.bytes.length - this.end < Math.min(needed - buffered, READ_SIZE)) {
      const room = this.bytes.length >= needed + READ_SIZE ? this.bytes : Buffer.allocUnsafe(needed + READ_SIZE);
      this.bytes.copy(room, 0, this.start, this.end); // overlapping copies are fine
      this.bytes = room;
      this.start = 0;
      this.end = buffered;
    }
    try {
      const count = readSync(fd, this.bytes, this.end, this.bytes.length - this.end, null);
      this.end += count;
      return count;
    } catch {
      return 0; // the fd is unusable: treated as the worker's end
    }
  }

  /** The next whole frame, decoded, or undefined while none is complete. */
  next() {
    if (this.end - this.start < 4) return undefined;
    const end = this.start + 4 + this.bytes.readUInt32BE(this.start);
    if (end > this.end) return undefined;
    const frame = decode(this.bytes, this.start + 4, end);
    this.start = end;
    if (this.start === this.end) this.start = this.end = 0;
    return frame;
  }
}

/**
 * The non-blocking read end `fd` read on the event loop, each whole frame decoded and given to
 * `onFrame`; the socket is unreferenced (an idle dsh must be able to exit) and its errors are
 * left to its end ('close'), which the caller watches.
 */
export function frameReader(fd, onFrame) {
  let partial = null;
  const reader = new Socket({
    fd,
    readable: true,
    writable: false,
    // @ts-expect-error Node takes `onread` here too; @types/node lists it for net.connect only
    onread: {
      buffer: Buffer.allocUnsafe(READ_SIZE),
      callback: (count, buffer) => {
        let bytes = buffer;
        let length = count; // the bytes read are the buffer's first: no view of them is made
        if (partial) {
          bytes = Buffer.concat([partial, buffer.subarray(0, count)]);
          length = bytes.length;
          partial = null;
        }
        let start = 0;
        while (length - start >= 4) {
          const end = start + 4 + bytes.readUInt32BE(start);
          if (end > length) break;
          onFrame(decode(bytes, start + 4, end));
          start = end;
        }
        if (start < length) partial = Buffer.from(bytes.subarray(start, length));
      },
    },
  });
  reader.on('error', () => {}); // its end is what matters
  reader.unref();
  return reader;
}
