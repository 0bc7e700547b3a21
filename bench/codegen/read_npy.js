// read_npy.js: a float32 little-endian .npy file as {shape, data: Float32Array};
// shared by ort_timer.js and tests/qdq/ort_run.js.
'use strict';
const fs = require('fs');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  if (!header.includes("'<f4'")) throw new Error(`${file}: input must be little-endian float32`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim())
                      .filter((s) => s.length).map(Number);
  const data = buf.subarray(start + hlen);
  const f32 = new Float32Array(data.length / 4);
  Buffer.from(f32.buffer).set(data);
  return { shape, data: f32 };
}

module.exports = { readNpy };
