// ort_timer.js: time one ONNX model under onnxruntime-node on one thread.
// Usage: node ort_timer.js MODEL.onnx IN.npy OUTPUT_NAME OUT.raw BUDGET_S MIN_ITERS MAX_ITERS [cpu|wall]
// (cpu: each run timed by the process's CPU time, process.cpuUsage(); the budget is wall time)
// Same protocol as bundle_timer.c: 3 warm-up runs, then single timed runs until the
// budget is spent; writes the named output (float32) to OUT.raw and prints one JSON line.
'use strict';
const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const { readNpy } = require(path.join(__dirname, 'read_npy.js'));

async function main() {
  const [model, npy, outName, outFile, budgetS, minIters, maxIters, clock] = process.argv.slice(2);
  const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
  const wallMs = () => performance.now();
  const timed = clock === 'cpu' ? cpuMs : wallMs;
  const session = await ort.InferenceSession.create(model, {
    executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const input = readNpy(npy);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input.data, input.shape) };
  const name = session.outputNames.includes(outName) ? outName : session.outputNames[0];
  let out;
  for (let i = 0; i < 3; ++i) out = await session.run(feeds);
  const times = [];
  const budgetNs = BigInt(Math.round(Number(budgetS) * 1e9));
  const t0 = process.hrtime.bigint();
  while (times.length < Number(maxIters) &&
         (times.length < Number(minIters) || process.hrtime.bigint() - t0 < budgetNs)) {
    const a = timed();
    out = await session.run(feeds);
    times.push(timed() - a);
  }
  const r = out[name].data;
  fs.writeFileSync(outFile, Buffer.from(r.buffer, r.byteOffset, r.byteLength));
  const sum = times.reduce((s, x) => s + x, 0);
  times.sort((x, y) => x - y);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  console.log(JSON.stringify({ iters: n, median_ms: median, min_ms: times[0], mean_ms: sum / n,
                               ort_version: ort.env.versions ? ort.env.versions.common : undefined }));
}
main().catch((e) => { console.error(`ort_timer: ${e.message || e}`); process.exit(2); });
