// Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
// run_suite_apart): its length (8 bytes, little-endian), then the value as V8 serializes it (structured clone: plain
// data only; functions and other host objects cannot be sent, class instances arrive as plain objects). Synchronous:
// a test's call waits for its reply.
const fs = require('node:fs');
const v8 = require('node:v8');

const MESSAGE_LIMIT = 1 << 30;

function writeAll(fd, buffer) {
  for (let at = 0; at < buffer.length; ) at += fs.writeSync(fd, buffer, at);
}

function send(fd, value) {
  const body = v8.serialize(value);
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(body.length));
  writeAll(fd, Buffer.concat([head, body]));
}

function readExactly(fd, size) {
  const buffer = Buffer.alloc(size);
  for (let at = 0; at < size; ) {
    const got = fs.readSync(fd, buffer, at, size - at, null);
    if (got === 0) return null;
    at += got;
  }
  return buffer;
}

// The next message, or null when the other side closed its end (or sent something cut or too big).
function receive(fd) {
  const head = readExactly(fd, 8);
  if (head === null) return null;
  const size = head.readBigUInt64LE();
  if (size > BigInt(MESSAGE_LIMIT)) return null;
  const body = readExactly(fd, Number(size));
  return body === null ? null : v8.deserialize(body);
}
