// The reference Socket.IO server headroom's tests load: a chat written the way socket.io's
// documentation shows one ("Rooms", "Emit cheatsheet"). A `join` event puts the socket in a
// room and is acknowledged; a `chat` event goes to everyone in the sender's rooms
// (`io.to(room).emit`, the sender included) and is acknowledged when the client asks.
//
//   node server.js PORT [PING_INTERVAL_MS] [PING_TIMEOUT_MS]
//
// Listens on 127.0.0.1 only. GET /healthz answers "ok"; GET /metrics gives the server's own
// counts in Prometheus' text format: the frames its broadcasts sent (one per socket in the
// room at the emit, the sender included), the chat events received, the sockets connected.
"use strict";

const http = require("node:http");
const { Server } = require("socket.io");

const port = Number(process.argv[2]);
const pingInterval = Number(process.argv[3] || 25000);
const pingTimeout = Number(process.argv[4] || 20000);

const counts = { framesSent: 0, chats: 0, joins: 0 };

const server = http.createServer((req, res) => {
  if (req.url === "/healthz") {
    res.end("ok");
  } else if (req.url === "/metrics") {
    res.setHeader("content-type", "text/plain; version=0.0.4");
    res.end(
      "# TYPE socketio_chat_frames_sent_total counter\n" +
        `socketio_chat_frames_sent_total ${counts.framesSent}\n` +
        "# TYPE socketio_chat_messages_received_total counter\n" +
        `socketio_chat_messages_received_total ${counts.chats}\n` +
        "# TYPE socketio_chat_joins_total counter\n" +
        `socketio_chat_joins_total ${counts.joins}\n` +
        "# TYPE socketio_chat_sockets gauge\n" +
        `socketio_chat_sockets ${io.engine.clientsCount}\n`
    );
  } else if (!req.url.startsWith("/socket.io/")) {
    res.statusCode = 404;
    res.end();
  }
});

const io = new Server(server, { pingInterval, pingTimeout });

io.on("connection", (socket) => {
  socket.on("join", (room, ack) => {
    socket.join(String(room));
    counts.joins += 1;
    if (typeof ack === "function") ack("joined");
  });
  socket.on("chat", (message, ack) => {
    counts.chats += 1;
    for (const room of socket.rooms) {
      if (room === socket.id) continue;
      counts.framesSent += io.sockets.adapter.rooms.get(room)?.size ?? 0;
      io.to(room).emit("chat", message);
    }
    if (typeof ack === "function") ack("ok");
  });
});

server.listen(port, "127.0.0.1", () => {
  console.log(`socket.io chat listening on 127.0.0.1:${port}`);
});

process.on("SIGTERM", () => {
  io.close();
  process.exit(0);
});
