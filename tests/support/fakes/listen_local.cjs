// Preloaded into a node MCP server by the tests (NODE_OPTIONS=--require ...): every server it starts listens on
// 127.0.0.1 only (server-everything's express app listens on every interface and has no setting for it).
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const port = args[0];
    const rest = args.slice(1).filter((a) => typeof a === "function");
    return listen.call(this, { port: Number(port), host: "127.0.0.1" }, ...rest);
  }
  return listen.apply(this, args);
};
