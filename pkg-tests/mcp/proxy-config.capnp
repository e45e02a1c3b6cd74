# workerd configuration for the MCP packing proxy (the package's mcp/worker.js), as the
# tests run it: the package's files as the modules a bundler (wrangler) would produce, the
# upstream, packing configuration and span sink from the environment, and outbound access
# to 127.0.0.1 (workerd's default network allows public addresses only).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .proxyWorker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
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
    (name = "TOOLSLICE_SPAN_SINK", fromEnvironment = "TOOLSLICE_SPAN_SINK"),
  ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "internet",
);
