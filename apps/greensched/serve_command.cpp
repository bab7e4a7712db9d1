// greensched serve: run the scheduling policies for real, as a kube-scheduler extender beside
// Kubernetes (see docs/SERVE.md). Listens first (answering 503 while the journal replays),
// then serves until SIGINT or SIGTERM, and commits anything queued before it exits.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/serve/http_server.hpp"
#include "greensched/serve/kube_binder.hpp"
#include "greensched/serve/listener_security.hpp"
#include "greensched/serve/pod_watcher.hpp"
#include "greensched/serve/serve_config.hpp"
#include "greensched/serve/service.hpp"
#include "listener_options.hpp"

namespace greensched::app {
namespace {

struct ServeOptions {
  std::string listen = "127.0.0.1:8888";
  std::string nodes;
  std::string nodes_json;
  std::string state;
  std::string record;  // the decision records; default: STATE/decisions.jsonl
  std::string config;
  std::string prefix = "/";
  std::string policy;
  std::string port_file;
  bool kube_bind = false;
  bool kube_watch = false;
  std::string kube_api;
  std::string kube_token_file;
  std::string kube_ca_file;
  bool quiet = false;
  serve::ListenerSecurity security;
};

int run_serve(const ServeOptions& o) {
  std::string host;
  int port = 0;
  if (int code = check_listen(o.listen, "127.0.0.1:8888", o.security, "docs/SERVE.md", host, port);
      code != 0)
    return code;
  serve::ServiceInputs inputs;
  inputs.nodes_csv = o.nodes;
  inputs.nodes_json = o.nodes_json;
  inputs.state_dir = o.state;
  if (!o.config.empty()) {
    auto config = serve::load_serve_config(o.config);
    if (!config.ok()) return fail(config);
    inputs.config = std::move(config.value());
  }
  if (!o.policy.empty()) inputs.config.policy = o.policy;
  if (!o.record.empty()) inputs.config.extender.decision_log = o.record;
  inputs.config.server.prefix = o.prefix;
  inputs.config.server.security = o.security;

  serve::KubeApiOptions api;
  api.server = o.kube_api;
  api.token_file = o.kube_token_file;
  api.ca_file = o.kube_ca_file;
  serve::Binder binder;
  if (o.kube_bind) {
    auto made = serve::make_kube_binder(api);
    if (!made.ok()) return fail(made);
    binder = std::move(made.value());
  }

  // Signals are taken by wait_for_stop_signal below, so block them before any thread starts.
  const sigset_t signals = block_stop_signals();

  serve::ExtenderServer server(inputs.config.server);
  auto bound = server.start(host, port);
  if (!bound.ok()) return fail(bound);
  if (int code = write_port_file(o.port_file, bound.value()); code != 0) {
    server.stop();
    return code;
  }

  serve::StartupReport report;
  auto extender = serve::open_extender(inputs, &report);
  if (!extender.ok()) {
    server.stop();
    return fail(extender);
  }
  for (const std::string& w : report.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (binder) extender.value()->set_binder(binder);
  // With --kube-watch: resync with the cluster's pods before answering any verb, then follow.
  std::unique_ptr<serve::PodWatcher> watcher;
  if (o.kube_watch) {
    auto resolved = serve::resolve_kube_api(api);
    if (!resolved.ok()) {
      server.stop();
      return fail(fmt::format("--kube-watch: {}", resolved.error()));
    }
    watcher = std::make_unique<serve::PodWatcher>(*extender.value(), resolved.value());
    auto synced = watcher->initial_sync();
    if (!synced.ok()) {
      server.stop();
      return fail(fmt::format("--kube-watch: {}", synced.error()));
    }
    if (!o.quiet) {
      fmt::print(stderr,
                 "greensched serve: resynced with the API server: {} added, {} released, {} "
                 "unchanged, {} not placed\n",
                 synced.value().added, synced.value().removed, synced.value().unchanged,
                 synced.value().errors.size());
    }
    for (const auto& [pod, why] : synced.value().errors) {
      fmt::print(stderr, "warning: resync: {}: {}\n", pod, why);
    }
  }
  server.attach(extender.value().get());
  if (watcher) watcher->start();
  if (!o.quiet) {
    fmt::print(stderr,
               "greensched serve: {}://{}:{}{} policy {} | {} nodes, {} pods bound ({} journal "
               "entries replayed) | FGD target: {} | state {}{}{}{}\n",
               o.security.tls() ? "https" : "http", host, bound.value(), server.prefix(),
               inputs.config.policy, report.nodes, report.pods, report.replayed, report.target,
               o.state, o.kube_bind ? " | binds through the API server" : "",
               o.security.client_ca.empty() ? "" : " | client certificates",
               o.security.token_file.empty() ? "" : " | bearer token");
  }

  wait_for_stop_signal(signals, "greensched serve", o.quiet);
  if (watcher) watcher->stop();
  server.stop();
  server.attach(nullptr);
  watcher.reset();
  extender.value().reset();  // commits what is queued
  return 0;
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto opts = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Run as a Kubernetes scheduler extender (filter, prioritize, bind) with durable state");
  cmd->add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--nodes", opts->nodes,
                  "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)");
  cmd->add_option("--nodes-json", opts->nodes_json,
                  "Kubernetes NodeList JSON (kubectl get nodes -o json)");
  cmd->add_option("--state", opts->state,
                  "folder of the durable journal of binds and releases (created if absent)")
      ->required();
  cmd->add_option("--record", opts->record,
                  "write a decision record per filter that left a pod no node or split its GPU "
                  "(JSON Lines); read it with greensched explain (default: STATE/decisions.jsonl)");
  cmd->add_option("--config", opts->config, "JSON config: policy, target_pods, power model, ...");
  cmd->add_option("--prefix", opts->prefix, "URL prefix of the extender verbs")
      ->capture_default_str();
  cmd->add_option("--policy", opts->policy,
                  fmt::format("the policy, overriding the config's: one of {}, or a mix such as "
                              "pwr:200+fgd:800",
                              policy_names()));
  add_port_file_option(cmd, opts->port_file);
  cmd->add_flag("--kube-bind", opts->kube_bind,
                "bind pods through the API server (with the gpu-index annotation)");
  cmd->add_flag("--kube-watch", opts->kube_watch,
                "follow the cluster's pods: resync at start, release GPU pods that are deleted "
                "or finish");
  cmd->add_option("--kube-api", opts->kube_api, "API server URL (default: in-cluster)");
  cmd->add_option("--kube-token-file", opts->kube_token_file,
                  "bearer token file (default: the service account's)");
  cmd->add_option("--kube-ca-file", opts->kube_ca_file,
                  "CA bundle of the API server (default: the service account's)");
  cmd->add_flag("--quiet,-q", opts->quiet, "no startup line on stderr");
  add_listener_options(cmd, opts->security,
                       "file holding a bearer token every request but GET /healthz must carry "
                       "(kube-scheduler sends none: authenticate it with --client-ca)");
  cmd->footer(
      "Example: an extender for kube-scheduler on this machine (docs/SERVE.md)\n"
      "  greensched serve --nodes nodes.csv --state state/ --policy fgd\n"
      "  curl -s 127.0.0.1:8888/healthz\n"
      "  greensched explain --record state/decisions.jsonl --pod default/train-1\n\n" +
      listener_help("docs/SERVE.md") +
      "\nkube-scheduler's extender client sends no bearer token: give it a client certificate\n"
      "(tlsConfig certFile/keyFile) and --client-ca here, with enableHTTPS: true and\n"
      "tlsConfig.caFile naming the CA of --tls-cert.\n"
      "  greensched serve --listen 0.0.0.0:8888 --state state --nodes nodes.csv \\\n"
      "      --tls-cert tls.crt --tls-key tls.key --client-ca clients-ca.crt");
  return [opts] { return run_serve(*opts); };
}

}  // namespace greensched::app
