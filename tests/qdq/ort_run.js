// ort_run.js: onnxruntime-node's outputs for tests/qdq (the reference the
// bundles are compared with). Usage: node ort_run.js MODULE_DIR MODEL.onnx IN.npy OUT.raw
// IN.npy holds N float32 samples stacked on the first axis; each runs alone
// (the models take batch 1) and OUT.raw gets the first output's float32
// values of all samples in order. MODULE_DIR is bench/codegen: its
// node_modules/onnxruntime-node (npm ci) and read_npy.js. A sixth argument
// --whole runs IN.npy as one input, as it is (tests/recurrent: sequences whose
// first axis is time). Exit 2 on any error.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [moduleDir, model, npy, outFile, mode] = process.argv.slice(2);
  const ort = require(path.join(moduleDir, 'node_modules', 'onnxruntime-node'));
  const { readNpy } = require(path.join(moduleDir, 'read_npy.js'));
  const session = await ort.InferenceSession.create(model, {
    executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const input = readNpy(npy);
  const whole = mode === '--whole';
  const n = whole ? 1 : input.shape[0];
  const per = input.data.length / n;
  const chunks = [];
  for (let i = 0; i < n; ++i) {
    const sample = input.data.slice(i * per, (i + 1) * per);
    const feeds = { [session.inputNames[0]]:
                      new ort.Tensor('float32', sample,
                                     whole ? input.shape : [1].concat(input.shape.slice(1))) };
    const out = await session.run(feeds);
    const r = out[session.outputNames[0]].data;
    chunks.push(Buffer.from(r.buffer, r.byteOffset, r.byteLength));
  }
  fs.writeFileSync(outFile, Buffer.concat(chunks));
}
main().catch((e) => { console.error(`ort_run: ${e.message || e}`); process.exit(2); });
