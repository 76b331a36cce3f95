// A Server-Sent Events hub that gets fan-out wrong twice over: each event POSTed to
// /sse/ROOM goes to every open stream of every room, and to each stream twice. A fan-out
// test must catch both: the copies outside the room and the second copy at each stream.
//
//   node server.js PORT
//
// Node's own http module, no packages. Listens on 127.0.0.1 only. GET /sse/ROOM opens a
// stream (`text/event-stream`); POST /sse/ROOM publishes its body as one event; GET /healthz
// answers "ok"; GET /metrics gives the events written to streams and the posts received.
"use strict";

const http = require("node:http");

const port = Number(process.argv[2]);
const streams = new Set();
const counts = { written: 0, posts: 0 };
let id = 0;

const server = http.createServer((req, res) => {
  if (req.url === "/healthz") {
    res.end("ok");
  } else if (req.url === "/metrics") {
    res.setHeader("content-type", "text/plain; version=0.0.4");
    res.end(
      "# TYPE twice_events_written_total counter\n" +
        `twice_events_written_total ${counts.written}\n` +
        "# TYPE twice_posts_received_total counter\n" +
        `twice_posts_received_total ${counts.posts}\n`
    );
  } else if (req.url.startsWith("/sse/") && req.method === "GET") {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
    res.write(": open\n\n");
    streams.add(res);
    req.on("close", () => streams.delete(res));
  } else if (req.url.startsWith("/sse/") && req.method === "POST") {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      counts.posts += 1;
      const data = Buffer.concat(chunks).toString("utf8").replace(/\n/g, " ");
      for (const stream of streams) {
        for (let copy = 0; copy < 2; copy += 1) {
          id += 1;
          stream.write(`id: ${id}\ndata: ${data}\n\n`);
          counts.written += 1;
        }
      }
      res.statusCode = 204;
      res.end();
    });
  } else {
    res.statusCode = 404;
    res.end();
  }
});

server.listen(port, "127.0.0.1", () => {
  console.log(`twice-over SSE hub listening on 127.0.0.1:${port}`);
});

process.on("SIGTERM", () => {
  for (const stream of streams) stream.end();
  server.close();
  process.exit(0);
});
