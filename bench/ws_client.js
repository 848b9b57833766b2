// The Node.js side of bench/streams.sh: the same work as sizeup's stream client with Debian's
// node-ws (NODE_PATH=/usr/share/nodejs): COUNT WebSockets opened evenly over RAMP seconds, every
// frame parsed for its "seq", frames and CPU counted over WINDOW seconds starting WARMUP seconds
// after the ramp. Prints one JSON line.
// Usage: node ws_client.js URL COUNT RAMP_S WARMUP_S WINDOW_S
'use strict';
const WebSocket = require('ws');
const [url, count, ramp, warmup, windowS] = [process.argv[2], +process.argv[3], +process.argv[4],
                                             +process.argv[5], +process.argv[6]];
let opened = 0, failed = 0, frames = 0, measuring = false, lastSeq = 0;
const socks = [];
const rss0 = process.memoryUsage().rss;
for (let i = 0; i < count; i++) {
  setTimeout(() => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on('open', () => { opened++; });
    ws.on('error', () => { failed++; });
    ws.on('message', (data) => {
      const m = JSON.parse(data);
      lastSeq = m.seq;
      if (measuring) frames++;
    });
    socks.push(ws);
  }, (ramp * 1000 * i) / count);
}
setTimeout(() => {
  if (global.gc) global.gc();
  const rssIdle = process.memoryUsage().rss;
  setTimeout(() => {
    const cpu0 = process.cpuUsage();
    measuring = true;
    setTimeout(() => {
      measuring = false;
      const cpu = process.cpuUsage(cpu0);
      const cpuS = (cpu.user + cpu.system) / 1e6;
      console.log(JSON.stringify({ opened, failed, frames, cpu_s: cpuS,
        frames_per_cpu_s: cpuS > 0 ? frames / cpuS : 0,
        memory_per_idle_stream_bytes: opened ? Math.round((rssIdle - rss0) / opened) : null,
        last_seq: lastSeq }));
      for (const ws of socks) ws.terminate();
      process.exit(0);
    }, windowS * 1000);
  }, warmup * 1000);
}, ramp * 1000 + 500);
