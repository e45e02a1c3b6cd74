# workerd configuration for the benchmark's pass-through worker (passthrough-worker.js).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .passthroughWorker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const passthroughWorker :Workerd.Worker = (
  modules = [ (name = "passthrough-worker.js", esModule = embed "passthrough-worker.js") ],
  bindings = [ (name = "MCP_UPSTREAM", fromEnvironment = "MCP_UPSTREAM") ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "internet",
);
