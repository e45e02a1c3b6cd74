# workerd configuration of the OTLP endpoint worker, as the tests run it: the worker, its two
# Durable Object namespaces (stored on disk under the directory given with
# --directory-path=do-storage=DIR), and the upstream as an external service whose address the
# test sets with --external-addr=upstream=127.0.0.1:PORT. The package's files are listed as
# the modules wrangler would bundle.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .otlpWorker),
    (name = "upstream", external = (address = "127.0.0.1:9", http = ())),
    (name = "do-storage", disk = (writable = true)),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:8787", http = (), service = "main") ],
);

const otlpWorker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "toolslice", esModule = embed "../node_modules/toolslice/workerd.js"),
    (name = "toolslice_bg.wasm", wasm = embed "../node_modules/toolslice/toolslice_bg.wasm"),
    (name = "toolslice.js", esModule = embed "../node_modules/toolslice/toolslice.js"),
    (name = "toolslice/otlp/endpoint.js", esModule = embed "../node_modules/toolslice/otlp/endpoint.js"),
    (name = "toolslice/otlp/keeper.js", esModule = embed "../node_modules/toolslice/otlp/keeper.js"),
  ],
  compatibilityDate = "2025-09-01",
  bindings = [
    (name = "TRACES", durableObjectNamespace = "TraceObject"),
    (name = "STATS", durableObjectNamespace = "StatsObject"),
    (name = "UPSTREAM", service = "upstream"),
    (name = "UPSTREAM_URL", text = "http://upstream/v1/traces"),
    (name = "DEADLINE_SECONDS", text = "2"),
  ],
  durableObjectNamespaces = [
    (className = "TraceObject", uniqueKey = "toolslice-otlp-traces"),
    (className = "StatsObject", uniqueKey = "toolslice-otlp-stats"),
  ],
  durableObjectStorage = (localDisk = "do-storage"),
);
