// @ts-check
// A small msgpack codec: the subset the shim and the worker exchange (nil, bool, ints, float64,
// str, bin, array, map). Hand-written so the plugin keeps zero npm dependencies.
//
// Choices, all round-trip tested against Python's `msgpack`:
// - Text is UTF-8 through TextEncoder/TextDecoder, which replace a lone UTF-16 surrogate (or an
//   invalid byte sequence) with U+FFFD instead of throwing: odd text never breaks a frame.
// - A Number that is an integer (other than -0) is sent in the smallest int format, including
//   the 64-bit ones when it is beyond 32 bits; any other Number is a float64. A BigInt is sent as
//   a 64-bit int and must fit in one. A 64-bit int decodes to a Number when it is a safe integer,
//   else to a BigInt, so no precision is lost silently.
// - Maps decode to plain objects (keys as strings); bin decodes to a Uint8Array of its own.

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8');

const UINT64_LIMIT = 2 ** 64;
const INT64_MIN = -(2 ** 63);
const BIGINT_INT64_MIN = -(2n ** 63n);
const BIGINT_UINT64_MAX = 2n ** 64n - 1n;

class Writer {
  constructor() {
    this.bytes = new Uint8Array(1024);
    this.view = new DataView(this.bytes.buffer);
    this.length = 0;
  }

  // Geometric growth keeps a large message linear to encode.
  reserve(extra) {
    const needed = this.length + extra;
    if (needed <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(value) {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  head(tag, width, value) {
    this.reserve(1 + width);
    this.bytes[this.length] = tag;
    if (width === 1) this.view.setUint8(this.length + 1, value);
    else if (width === 2) this.view.setUint16(this.length + 1, value);
    else this.view.setUint32(this.length + 1, value);
    this.length += 1 + width;
  }

  raw(tag, width, value, setter) {
    this.reserve(1 + width);
    this.bytes[this.length] = tag;
    this.view[setter](this.length + 1, value);
    this.length += 1 + width;
  }
}

/** Scratch space reused across calls; one huge message does not keep a huge buffer alive. */
const SCRATCH_KEPT_BYTES = 1024 * 1024;
let scratch = new Writer();

function encodeAfter(headerBytes, value) {
  const writer = scratch;
  writer.length = headerBytes;
  try {
    writeValue(writer, value);
    return writer.bytes.slice(0, writer.length);
  } finally {
    if (writer.bytes.length > SCRATCH_KEPT_BYTES) scratch = new Writer();
  }
}

/** Encode one value; returns a fresh Uint8Array that owns its whole ArrayBuffer (transferable). */
export function encode(value) {
  return encodeAfter(0, value);
}

/** `value` preceded by its 4-byte big-endian length (one frame), without a second copy. */
export function encodeFrame(value) {
  const frame = encodeAfter(4, value);
  new DataView(frame.buffer).setUint32(0, frame.length - 4);
  return frame;
}

/**
 * Frames (as encodeFrame makes them) encoded one after another into one buffer of their own,
 * reused once they are taken: a frame costs no buffer of its own, nor a copy.
 */
export class Frames {
  constructor() {
    this.writer = new Writer();
  }

  /** How many bytes are waiting. */
  get length() {
    return this.writer.length;
  }

  /** Append `value` as one frame; returns its length in bytes. */
  add(value) {
    return this.framed(writeValue, value);
  }

  /**
   * Append `{id, ...message, reply}` as one frame (without `reply` when it is undefined), encoded
   * as that object would be but without making it; `message` holds neither key. Returns its length.
   */
  addRequest(message, id, reply = undefined) {
    return this.framed(writeRequest, message, id, reply);
  }

  // One frame, its body written by `write(writer, ...values)`; what could not be encoded leaves
  // nothing behind.
  framed(write, value, id = undefined, reply = undefined) {
    const writer = this.writer;
    const start = writer.length;
    writer.reserve(4);
    writer.length += 4;
    try {
      write(writer, value, id, reply);
    } catch (error) {
      writer.length = start;
      throw error;
    }
    writer.view.setUint32(start, writer.length - start - 4);
    return writer.length - start;
  }

  /** The frames waiting, oldest first, as a view valid until the next `add`; none wait after. */
  take() {
    const frames = this.writer.bytes.subarray(0, this.writer.length);
    this.writer.length = 0;
    if (this.writer.bytes.length > SCRATCH_KEPT_BYTES) this.writer = new Writer(); // the view keeps the old one
    return frames;
  }
}

function writeValue(writer, value) {
  switch (typeof value) {
    case 'string':
      return writeString(writer, value);
    case 'number':
      return Number.isInteger(value) && !Object.is(value, -0) && value >= INT64_MIN && value < UINT64_LIMIT
        ? writeInteger(writer, value)
        : writer.raw(0xcb, 8, value, 'setFloat64');
    case 'boolean':
      return writer.byte(value ? 0xc3 : 0xc2);
    case 'bigint':
      return writeBigInt(writer, value);
    case 'undefined':
      return writer.byte(0xc0);
    case 'object':
      if (value === null) return writer.byte(0xc0);
      if (Array.isArray(value)) return writeArray(writer, value);
      if (ArrayBuffer.isView(value)) {
        return writeBinary(writer, new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      }
      if (value instanceof ArrayBuffer) return writeBinary(writer, new Uint8Array(value));
      return writeMap(writer, value);
    default:
      throw new TypeError(`msgpack cannot encode a ${typeof value}`);
  }
}

/** Shorter strings are tried as ASCII by hand first: cheaper than a call into the encoder. */
const SHORT_STRING = 64;

function writeString(writer, text) {
  if (text.length < SHORT_STRING && writeAscii(writer, text)) return;
  // UTF-8 needs at most 3 bytes per UTF-16 unit. Encode after a header sized for that bound,
  // then slide the bytes left if the real length fits a shorter header (canonical output).
  const bound = text.length * 3;
  const reserved = bound < 32 ? 1 : bound < 0x100 ? 2 : bound < 0x10000 ? 3 : 5;
  writer.reserve(reserved + bound);
  const start = writer.length;
  const { written } = textEncoder.encodeInto(text, writer.bytes.subarray(start + reserved));
  const header = written < 32 ? 1 : written < 0x100 ? 2 : written < 0x10000 ? 3 : 5;
  if (header !== reserved) {
    writer.bytes.copyWithin(start + header, start + reserved, start + reserved + written);
  }
  if (header === 1) writer.bytes[start] = 0xa0 | written;
  else if (header === 2) writer.head(0xd9, 1, written);
  else if (header === 3) writer.head(0xda, 2, written);
  else writer.head(0xdb, 4, written);
  writer.length = start + header + written;
}

// A short string whose every unit is ASCII, written byte for byte; false (nothing written) when
// some unit is not.
function writeAscii(writer, text) {
  const header = text.length < 32 ? 1 : 2;
  writer.reserve(header + text.length);
  const { bytes } = writer;
  const start = writer.length + header;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit > 0x7f) return false;
    bytes[start + index] = unit;
  }
  if (header === 1) bytes[writer.length] = 0xa0 | text.length;
  else writer.head(0xd9, 1, text.length);
  writer.length = start + text.length;
  return true;
}

function writeInteger(writer, value) {
  if (value >= 0) {
    if (value < 0x80) return writer.byte(value);
    if (value < 0x100) return writer.head(0xcc, 1, value);
    if (value < 0x10000) return writer.head(0xcd, 2, value);
    if (value < 0x100000000) return writer.head(0xce, 4, value);
    return writer.raw(0xcf, 8, BigInt(value), 'setBigUint64');
  }
  if (value >= -32) return writer.byte(value & 0xff);
  if (value >= -0x80) return writer.raw(0xd0, 1, value, 'setInt8');
  if (value >= -0x8000) return writer.raw(0xd1, 2, value, 'setInt16');
  if (value >= -0x80000000) return writer.raw(0xd2, 4, value, 'setInt32');
  return writer.raw(0xd3, 8, BigInt(value), 'setBigInt64');
}

function writeBigInt(writer, value) {
  if (value < BIGINT_INT64_MIN || value > BIGINT_UINT64_MAX) {
    throw new RangeError(`msgpack cannot encode ${value}: beyond 64 bits`);
  }
  if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return writeInteger(writer, Number(value));
  }
  return value < 0n ? writer.raw(0xd3, 8, value, 'setBigInt64') : writer.raw(0xcf, 8, value, 'setBigUint64');
}

function writeBinary(writer, bytes) {
  const size = bytes.length;
  if (size < 0x100) writer.head(0xc4, 1, size);
  else if (size < 0x10000) writer.head(0xc5, 2, size);
  else writer.head(0xc6, 4, size);
  writer.reserve(size);
  writer.bytes.set(bytes, writer.length);
  writer.length += size;
}

function writeRequest(writer, message, id, reply) {
  const keys = Object.keys(message);
  writeContainerHead(writer, keys.length + (reply === undefined ? 1 : 2), 0x80, 0xde, 0xdf);
  writeString(writer, 'id');
  writeValue(writer, id);
  for (const key of keys) {
    writeString(writer, key);
    writeValue(writer, message[key]);
  }
  if (reply !== undefined) {
    writeString(writer, 'reply');
    writeValue(writer, reply);
  }
}

function writeArray(writer, items) {
  writeContainerHead(writer, items.length, 0x90, 0xdc, 0xdd);
  for (const item of items) writeValue(writer, item);
}

function writeMap(writer, object) {
  const keys = Object.keys(object);
  writeContainerHead(writer, keys.length, 0x80, 0xde, 0xdf);
  for (const key of keys) {
    writeString(writer, key);
    writeValue(writer, object[key]);
  }
}

function writeContainerHead(writer, size, fixTag, tag16, tag32) {
  if (size < 16) writer.byte(fixTag | size);
  else if (size < 0x10000) writer.head(tag16, 2, size);
  else writer.head(tag32, 4, size);
}

/**
 * Decode exactly one value from `bytes` (a Uint8Array), or from its bytes `start` to `end` (a
 * frame read among others: no view of it made); throws on truncation or trailing bytes.
 */
export function decode(bytes, start = 0, end = bytes.length) {
  /** @type {Reader} */
  const reader = { bytes, view: null, offset: start, end };
  const value = readValue(reader);
  if (reader.offset !== end) {
    throw new RangeError(`msgpack: ${end - reader.offset} bytes after the value`);
  }
  return value;
}

/** @typedef {{bytes: Uint8Array, view: DataView | null, offset: number, end: number}} Reader */

function take(reader, size) {
  const at = reader.offset;
  if (at + size > reader.end) throw new RangeError('msgpack: truncated input');
  reader.offset = at + size;
  return at;
}

// Big-endian unsigned ints read from the bytes themselves; a DataView (an object to make per
// decode) only for what they cannot give (floats, signed and 64-bit ints past the safe ones).
function uint16(bytes, at) {
  return (bytes[at] << 8) | bytes[at + 1];
}

function uint32(bytes, at) {
  return bytes[at] * 0x1000000 + ((bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]);
}

/** @param {Reader} reader */
function viewOf(reader) {
  const { bytes } = reader;
  reader.view ??= new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return reader.view;
}

function readValue(reader) {
  const tag = reader.bytes[take(reader, 1)];
  if (tag < 0x80) return tag;
  if (tag < 0x90) return readMap(reader, tag & 0x0f);
  if (tag < 0xa0) return readArray(reader, tag & 0x0f);
  if (tag < 0xc0) return readString(reader, tag & 0x1f);
  if (tag >= 0xe0) return tag - 0x100;
  const { bytes } = reader;
  switch (tag) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xc4: return readBinary(reader, bytes[take(reader, 1)]);
    case 0xc5: return readBinary(reader, uint16(bytes, take(reader, 2)));
    case 0xc6: return readBinary(reader, uint32(bytes, take(reader, 4)));
    case 0xca: return viewOf(reader).getFloat32(take(reader, 4));
    case 0xcb: return viewOf(reader).getFloat64(take(reader, 8));
    case 0xcc: return bytes[take(reader, 1)];
    case 0xcd: return uint16(bytes, take(reader, 2));
    case 0xce: return uint32(bytes, take(reader, 4));
    case 0xcf: return readInt64(reader, take(reader, 8), false);
    case 0xd0: return viewOf(reader).getInt8(take(reader, 1));
    case 0xd1: return viewOf(reader).getInt16(take(reader, 2));
    case 0xd2: return viewOf(reader).getInt32(take(reader, 4));
    case 0xd3: return readInt64(reader, take(reader, 8), true);
    case 0xd9: return readString(reader, bytes[take(reader, 1)]);
    case 0xda: return readString(reader, uint16(bytes, take(reader, 2)));
    case 0xdb: return readString(reader, uint32(bytes, take(reader, 4)));
    case 0xdc: return readArray(reader, uint16(bytes, take(reader, 2)));
    case 0xdd: return readArray(reader, uint32(bytes, take(reader, 4)));
    case 0xde: return readMap(reader, uint16(bytes, take(reader, 2)));
    case 0xdf: return readMap(reader, uint32(bytes, take(reader, 4)));
    default: throw new TypeError(`msgpack: unsupported type byte 0x${tag.toString(16)}`);
  }
}

function safeNumber(big) {
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

// A 64-bit int at `at`: a Number made of its two halves when it is a safe integer (no BigInt
// made on the way, as for a digest), else as the BigInt path gives it.
function readInt64(reader, at, signed) {
  const { bytes } = reader;
  const unsignedHigh = uint32(bytes, at);
  const high = signed && unsignedHigh >= 0x80000000 ? unsignedHigh - 0x100000000 : unsignedHigh;
  if (high >= -0x200000 && high < 0x200000) {
    const value = high * 0x100000000 + uint32(bytes, at + 4);
    if (Number.isSafeInteger(value)) return value;
  }
  const view = viewOf(reader);
  return safeNumber(signed ? view.getBigInt64(at) : view.getBigUint64(at));
}

/** Short ASCII strings decoded before (a reply's keys, mostly), by a hash of their bytes: the same
 * bytes again give the same string, made once. Bounded: emptied once it holds KEPT_STRINGS. */
const KEPT_STRINGS = 512;
const KEPT_STRING_BYTES = 16;
const keptStrings = new Map();

function readString(reader, size) {
  const at = take(reader, size);
  if (size < SHORT_STRING) {
    // A short ASCII string is read by hand: cheaper than a call into the decoder.
    const { bytes } = reader;
    let hash = size;
    for (let index = at; index < at + size; index++) {
      if (bytes[index] > 0x7f) return textDecoder.decode(bytes.subarray(at, at + size));
      hash = (Math.imul(hash, 31) + bytes[index]) | 0;
    }
    if (size > KEPT_STRING_BYTES) return String.fromCharCode.apply(null, bytes.subarray(at, at + size));
    const kept = keptStrings.get(hash);
    if (kept !== undefined && sameAscii(kept, bytes, at, size)) return kept;
    const text = String.fromCharCode.apply(null, bytes.subarray(at, at + size));
    if (keptStrings.size >= KEPT_STRINGS) keptStrings.clear();
    keptStrings.set(hash, text);
    return text;
  }
  return textDecoder.decode(reader.bytes.subarray(at, at + size));
}

function sameAscii(text, bytes, at, size) {
  if (text.length !== size) return false;
  for (let index = 0; index < size; index++) if (text.charCodeAt(index) !== bytes[at + index]) return false;
  return true;
}

function readBinary(reader, size) {
  const at = take(reader, size);
  return reader.bytes.slice(at, at + size);
}

// A hostile count must not allocate before the bytes behind it exist: each entry takes >= 1 byte.
function checkCount(reader, size) {
  if (size > reader.end - reader.offset) throw new RangeError('msgpack: truncated input');
}

function readArray(reader, size) {
  checkCount(reader, size);
  const items = new Array(size);
  for (let index = 0; index < size; index++) items[index] = readValue(reader);
  return items;
}

function readMap(reader, size) {
  checkCount(reader, size);
  const object = {};
  for (let index = 0; index < size; index++) {
    const key = String(readValue(reader));
    const value = readValue(reader);
    // A plain assignment to "__proto__" would replace the prototype instead of adding a key.
    if (key === '__proto__') {
      Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    } else {
      object[key] = value;
    }
  }
  return object;
}
