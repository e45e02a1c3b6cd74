# The MCP packing proxy in workerd with its pages in a Workers KV namespace: workerd's own
# KV binding (`kvNamespace`) backed by an in-memory KV service (kv-backend.js), which the
# tests inspect on the `kv` socket.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .proxyWorker),
    (name = "kv", worker = .kvBackend),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:8787", http = (), service = "main"),
    (name = "kv", address = "127.0.0.1:8788", http = (), service = "kv"),
  ],
);

const proxyWorker :Workerd.Worker = (
  modules = [
    (name = "mcp/worker.js", esModule = embed "../node_modules/toolslice/mcp/worker.js"),
    (name = "mcp/proxy.js", esModule = embed "../node_modules/toolslice/mcp/proxy.js"),
    (name = "workerd.js", esModule = embed "../node_modules/toolslice/workerd.js"),
    (name = "toolslice.js", esModule = embed "../node_modules/toolslice/toolslice.js"),
    (name = "toolslice_bg.wasm", wasm = embed "../node_modules/toolslice/toolslice_bg.wasm"),
  ],
  bindings = [
    (name = "MCP_UPSTREAM", fromEnvironment = "MCP_UPSTREAM"),
    (name = "TOOLSLICE_MCP_CONFIG", fromEnvironment = "TOOLSLICE_MCP_CONFIG"),
    (name = "TOOLSLICE_PAGES", kvNamespace = "kv"),
  ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "internet",
);

const kvBackend :Workerd.Worker = (
  modules = [ (name = "kv-backend.js", esModule = embed "kv-backend.js") ],
  compatibilityDate = "2025-09-01",
);
