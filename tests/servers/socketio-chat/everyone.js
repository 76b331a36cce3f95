// A Socket.IO chat that leaks its rooms: a `join` event is acknowledged (the socket joins the
// room), but a `chat` event is sent to every socket the server holds (`io.emit`), in every
// room, the sender included. A fan-out test must catch it: each message reaches its room,
// and every other room gets a copy it should not.
//
//   node everyone.js PORT
//
// Listens on 127.0.0.1 only. GET /healthz answers "ok"; GET /metrics gives the frames its
// broadcasts sent (one per socket connected at the emit) and the chat events received.
"use strict";

const http = require("node:http");
const { Server } = require("socket.io");

const port = Number(process.argv[2]);
const counts = { framesSent: 0, chats: 0 };

const server = http.createServer((req, res) => {
  if (req.url === "/healthz") {
    res.end("ok");
  } else if (req.url === "/metrics") {
    res.setHeader("content-type", "text/plain; version=0.0.4");
    res.end(
      "# TYPE leaky_frames_sent_total counter\n" +
        `leaky_frames_sent_total ${counts.framesSent}\n` +
        "# TYPE leaky_messages_received_total counter\n" +
        `leaky_messages_received_total ${counts.chats}\n`
    );
  } else if (!req.url.startsWith("/socket.io/")) {
    res.statusCode = 404;
    res.end();
  }
});

const io = new Server(server);

io.on("connection", (socket) => {
  socket.on("join", (room, ack) => {
    socket.join(String(room));
    if (typeof ack === "function") ack("joined");
  });
  socket.on("chat", (message) => {
    counts.chats += 1;
    counts.framesSent += io.engine.clientsCount;
    io.emit("chat", message);
  });
});

server.listen(port, "127.0.0.1", () => {
  console.log(`leaky socket.io chat listening on 127.0.0.1:${port}`);
});

process.on("SIGTERM", () => {
  io.close();
  process.exit(0);
});
