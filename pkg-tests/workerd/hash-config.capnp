# workerd configuration for the hash worker (hash-worker.js). The package's files are listed as the
# modules a bundler (wrangler) would produce: its `workerd` export entry, the wasm-bindgen
# glue, and the .wasm as a compiled module.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .hashWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const hashWorker :Workerd.Worker = (
  modules = [
    (name = "hash-worker.js", esModule = embed "hash-worker.js"),
    (name = "toolslice", esModule = embed "../node_modules/toolslice/workerd.js"),
    (name = "toolslice_bg.wasm", wasm = embed "../node_modules/toolslice/toolslice_bg.wasm"),
    (name = "toolslice.js", esModule = embed "../node_modules/toolslice/toolslice.js"),
  ],
  compatibilityDate = "2025-09-01",
);
