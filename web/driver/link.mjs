#!/usr/bin/env node
// An emulated link for quick figures without namespaces: a TCP relay on
// loopback that delivers each direction's bytes after a one-way delay
// (half the round trip), serialised at a bottleneck rate. It works on the
// byte stream, not on packets (the kernel's TCP on loopback sees neither
// the delay nor the rate), so it approximates what `webproof bench` does
// with TUN devices in namespaces; use the harness for published figures.
//
//   node web/driver/link.mjs --to HOST:PORT --rtt-ms 20 --mbps 20 [--listen 127.0.0.1:0]
//
// Prints {"event":"listening","addr":"127.0.0.1:PORT"} when ready.

import { connect, createServer } from "node:net";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const [toHost, toPort] = opt("to", "").split(/:(?=\d+$)/);
const oneWayMs = Number(opt("rtt-ms", "0")) / 2;
const bytesPerMs = (Number(opt("mbps", "0")) * 1e6) / 8 / 1000; // 0: no rate limit
const [host, port] = opt("listen", "127.0.0.1:0").split(/:(?=\d+$)/);
if (!toHost || !toPort) {
  console.error("link: --to HOST:PORT is required");
  process.exit(2);
}

// One direction: chunks leave the bottleneck back to back at the link's
// rate and arrive a one-way delay later, in order.
function direction(from, to) {
  const queue = []; // {at, data}
  let free = 0; // when the bottleneck is next idle
  let timer = null;
  let ended = false;
  const pump = () => {
    timer = null;
    const now = performance.now();
    while (queue.length && queue[0].at <= now + 0.05) to.write(queue.shift().data);
    if (queue.length) timer = setTimeout(pump, queue[0].at - now);
    else if (ended) to.end();
  };
  from.on("data", (data) => {
    const now = performance.now();
    const start = Math.max(now, free);
    free = start + (bytesPerMs > 0 ? data.length / bytesPerMs : 0);
    queue.push({ at: free + oneWayMs, data });
    if (!timer) timer = setTimeout(pump, queue[0].at - now);
  });
  from.on("end", () => {
    ended = true;
    if (!timer && !queue.length) to.end();
  });
}

// Half-open sockets: an end in one direction is delivered after the
// bytes queued before it, and the other direction goes on.
const server = createServer({ allowHalfOpen: true }, (client) => {
  client.setNoDelay(true);
  const upstream = connect({ host: toHost, port: Number(toPort), allowHalfOpen: true });
  upstream.setNoDelay(true);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", close);
  upstream.on("error", close);
  direction(client, upstream);
  direction(upstream, client);
});
server.listen(Number(port), host, () => {
  const a = server.address();
  console.log(JSON.stringify({ event: "listening", addr: `${a.address}:${a.port}` }));
});
