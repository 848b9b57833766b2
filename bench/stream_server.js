// A WebSocket fan-out server for bench/streams.sh, on Debian's node-ws (NODE_PATH=/usr/share/nodejs).
// POST /cmd with a JSON body {"seq": N} sends the frame {"seq":N,"pad":"..."} to every open
// WebSocket on /ws. Runs WORKERS processes (node's cluster module) so that more connections than
// one process may open files for can be held; a command reaching one worker is relayed to all.
// Usage: node stream_server.js PORT_FILE [WORKERS] [FRAME_BYTES] [deflate]
'use strict';
const cluster = require('cluster');
const http = require('http');
const fs = require('fs');
const { WebSocketServer } = require('ws');

const portFile = process.argv[2];
const workers = parseInt(process.argv[3] || '2', 10);
const frameBytes = parseInt(process.argv[4] || '64', 10);
const deflate = process.argv[5] === 'deflate';

if (cluster.isPrimary) {
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    const w = cluster.fork();
    w.on('message', (m) => {
      if (m.cmd !== undefined) for (const id in cluster.workers) cluster.workers[id].send(m);
      if (m.port !== undefined && ++ready === workers) {
        fs.writeFileSync(portFile + '.tmp', String(m.port) + '\n');
        fs.renameSync(portFile + '.tmp', portFile);
      }
    });
  }
  process.on('SIGTERM', () => { for (const id in cluster.workers) cluster.workers[id].kill(); process.exit(0); });
} else {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: deflate });
  const pad = 'p'.repeat(Math.max(0, frameBytes - 20));
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/cmd') { res.writeHead(404); res.end(); return; }
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      let seq;
      try { seq = JSON.parse(body).seq; } catch (e) { seq = undefined; }
      if (typeof seq !== 'number') { res.writeHead(400); res.end(); return; }
      process.send({ cmd: seq });
      res.writeHead(202, { 'Content-Length': '0' });
      res.end();
    });
  });
  server.on('upgrade', (req, sock, head) => {
    wss.handleUpgrade(req, sock, head, (ws) => { ws.on('error', () => {}); });
  });
  process.on('message', (m) => {
    const frame = '{"seq":' + m.cmd + ',"pad":"' + pad + '"}';
    for (const ws of wss.clients) ws.send(frame);
  });
  server.listen(parseInt(process.env.STREAM_PORT || '0', 10), '127.0.0.1', () => {
    process.send({ port: server.address().port });
  });
}
