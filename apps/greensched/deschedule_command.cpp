// greensched deschedule: carry out greensched serve's defragmentation plan (GET v1/defrag) on a
// real cluster through the Kubernetes Eviction API, honouring PodDisruptionBudgets, the
// greensched.io/movable annotation and a budget of evictions (src/greensched/serve/
// deschedule.hpp; docs/SERVE.md, "Defragmentation").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/serve/deschedule.hpp"
#include "greensched/serve/kube_binder.hpp"

namespace greensched::app {
namespace {

using nlohmann::json;

struct DescheduleOptions {
  std::string server;
  int budget = -1;
  std::string token_file;
  std::string server_ca;
  std::string client_cert;
  std::string client_key;
  std::string kube_api;
  std::string kube_token_file;
  std::string kube_ca_file;
  std::string record;
  double timeout_s = 10;
  bool dry_run = false;
  bool json = false;
  bool quiet = false;
};

std::string gpus_text(const json& gpus) {
  std::string out;
  for (const json& g : gpus) out += (out.empty() ? "" : ",") + g.dump();
  return out.empty() ? "-" : out;
}

void print_plan(const json& plan) {
  const json& plans = plan["plans"];
  fmt::print("plan: {} move{} of a budget of {} (policy {}), {} pod{} planned for\n",
             plan.value("moves_planned", 0), plan.value("moves_planned", 0) == 1 ? "" : "s",
             plan.value("budget", 0), plan.value("policy", std::string("?")), plans.size(),
             plans.size() == 1 ? "" : "s");
  for (const json& p : plans) {
    const json& f = p["frees"];
    fmt::print(
        "  {} -> {} GPU {}, once {} pod{} move (frees on {}: {} whole GPU{}, {} GPU milli, "
        "{} CPU milli)\n",
        p.value("pod", ""), p.value("node", ""), gpus_text(p["gpus"]), p["moves"].size(),
        p["moves"].size() == 1 ? "" : "s", f.value("node", ""), f.value("whole_gpus", 0),
        f.value("whole_gpus", 0) == 1 ? "" : "s", f.value("gpu_milli", 0), f.value("cpu_milli", 0));
    for (const json& m : p["moves"]) {
      fmt::print("    move {}: {} GPU {} -> {} GPU {} ({} milli)\n", m.value("pod", ""),
                 m.value("from", ""), gpus_text(m["from_gpus"]), m.value("to", ""),
                 gpus_text(m["to_gpus"]), m.value("gpu_milli", 0));
    }
  }
  for (const json& u : plan["unplanned"]) {
    fmt::print("  {}: not planned: {}\n", u.value("pod", ""), u.value("reason", ""));
  }
}

int run_deschedule(const DescheduleOptions& o) {
  if (o.budget < 0) return fail("--budget: must be 0 or more", kExitUsage);
  if (!(o.timeout_s > 0)) return fail("--timeout: must be > 0", kExitUsage);
  if (o.client_cert.empty() != o.client_key.empty()) {
    return fail("--client-cert and --client-key go together", kExitUsage);
  }
  serve::ExtenderClient server;
  server.url = o.server;
  server.token_file = o.token_file;
  server.ca_file = o.server_ca;
  server.client_cert = o.client_cert;
  server.client_key = o.client_key;
  server.timeout_seconds = o.timeout_s;

  if (o.dry_run) {
    auto plan = serve::fetch_defrag_plan(server, o.budget, {});
    if (!plan.ok()) return fail(plan.error(), kExitIo);
    if (o.json) {
      fmt::print("{}\n", json{{"server", o.server},
                              {"budget", o.budget},
                              {"dry_run", true},
                              {"plans", json::array({plan.value()})}}
                             .dump(2));
    } else if (!o.quiet) {
      print_plan(plan.value());
      fmt::print("dry run: nothing evicted\n");
    }
    return 0;
  }

  serve::KubeApiOptions api;
  api.server = o.kube_api;
  api.token_file = o.kube_token_file;
  api.ca_file = o.kube_ca_file;
  api.timeout_seconds = std::max(1, static_cast<int>(std::ceil(o.timeout_s)));
  auto resolved = serve::resolve_kube_api(api);
  if (!resolved.ok()) return fail(resolved.error(), kExitUsage);

  std::unique_ptr<std::ofstream> record;
  if (!o.record.empty()) {
    record = std::make_unique<std::ofstream>(o.record, std::ios::app);
    if (!*record)
      return fail(fmt::format("--record {}: cannot open it for writing", o.record), kExitIo);
  }
  const auto on_attempt = [&](const serve::EvictionAttempt& a) {
    if (record) *record << a.to_json().dump() << '\n' << std::flush;
    if (o.quiet || o.json) return;
    if (a.outcome == "evicted") {
      fmt::print("evicted {} from {} (planned to {}, for {})\n", a.pod, a.from, a.to, a.for_pod);
    } else {
      fmt::print("{} {}{}: {}\n", a.outcome, a.pod,
                 a.http_status != 0 ? fmt::format(" (HTTP {})", a.http_status) : "", a.message);
    }
  };
  serve::DescheduleOptions options;
  options.budget = o.budget;
  auto report = serve::deschedule(server, resolved.value(), options, on_attempt);
  if (!report.ok()) return fail(report.error(), kExitIo);
  const serve::DescheduleReport& r = report.value();
  if (record && !*record) {
    return fail(fmt::format("--record {}: writing failed", o.record), kExitIo);
  }
  if (o.json) {
    json attempts = json::array();
    for (const serve::EvictionAttempt& a : r.attempts) attempts.push_back(a.to_json());
    fmt::print("{}\n", json{{"server", o.server},
                            {"budget", o.budget},
                            {"dry_run", false},
                            {"plans", r.plans},
                            {"attempts", std::move(attempts)},
                            {"notes", r.notes},
                            {"evicted", r.evicted},
                            {"refused", r.refused},
                            {"failure", r.failure}}
                           .dump(2));
  } else if (!o.quiet) {
    if (!r.plans.empty()) print_plan(r.plans.front());
    for (std::size_t i = 1; i < r.plans.size(); ++i) {
      fmt::print("asked again, leaving the pods that could not move:\n");
      print_plan(r.plans[i]);
    }
    for (const std::string& n : r.notes) fmt::print("{}\n", n);
    fmt::print(
        "{} pod{} evicted of a budget of {}; {} refused by the API server (disruption "
        "budget)\n",
        r.evicted, r.evicted == 1 ? "" : "s", o.budget, r.refused);
  }
  if (!r.failure.empty()) return fail(fmt::format("stopped: {}", r.failure), kExitIo);
  return 0;
}

}  // namespace

Action add_deschedule_command(CLI::App& app) {
  auto opts = std::make_shared<DescheduleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "deschedule",
      "Evict the pods greensched serve's defragmentation plan moves, within a budget");
  cmd->footer(
      "Pods move only when annotated greensched.io/movable: \"true\" (checked again on the live\n"
      "pod before each eviction). Evictions go through the Eviction API, so the API server\n"
      "refuses any that a PodDisruptionBudget forbids (HTTP 429): that pod stays, and serve is\n"
      "asked for a plan without it. Never more than --budget evictions. Exit codes: 2 usage;\n"
      "74 serve or the API server did not answer (nothing evicted when serve did not); else 0.\n\n"
      "Example: see the plan, then carry it out (in a cluster: the service account's API access)\n"
      "  greensched deschedule --server http://127.0.0.1:8888 --budget 4 --dry-run\n"
      "  greensched deschedule --server http://127.0.0.1:8888 --budget 4 --record evictions.jsonl\n"
      "Outside a cluster:\n"
      "  greensched deschedule --server https://greensched.example:8888 --server-ca ca.crt \\\n"
      "      --auth-token-file token --budget 2 --kube-api https://10.0.0.1:6443 \\\n"
      "      --kube-token-file kube-token --kube-ca-file kube-ca.crt");
  cmd->add_option("--server", opts->server,
                  "greensched serve's URL, with its --prefix if it has one "
                  "(http://127.0.0.1:8888)")
      ->type_name("URL")
      ->required();
  cmd->add_option("--budget", opts->budget, "evictions at most, in all (0: plan only)")
      ->required()
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--dry-run", opts->dry_run, "print the plan; evict nothing");
  cmd->add_option("--record", opts->record,
                  "append a JSON line per eviction attempt: time, pod, uid, from, to, for, "
                  "outcome, http_status, message");
  add_deprecated_alias(cmd, "--journal", "--record", opts->record);
  cmd->add_option("--auth-token-file", opts->token_file,
                  "bearer token serve asks for (its --auth-token-file)");
  cmd->add_option("--server-ca", opts->server_ca,
                  "PEM CA of serve's certificate (https; default: the system's)")
      ->type_name("FILE");
  cmd->add_option("--client-cert", opts->client_cert,
                  "PEM client certificate for serve's --client-ca (with --client-key)")
      ->type_name("FILE");
  cmd->add_option("--client-key", opts->client_key, "PEM private key of --client-cert")
      ->type_name("FILE");
  cmd->add_option("--kube-api", opts->kube_api, "API server URL (default: in-cluster)")
      ->type_name("URL");
  cmd->add_option("--kube-token-file", opts->kube_token_file,
                  "bearer token file (default: the service account's)");
  cmd->add_option("--kube-ca-file", opts->kube_ca_file,
                  "CA bundle of the API server (default: the service account's)");
  as_duration(cmd->add_option("--timeout", opts->timeout_s,
                              "time each request to serve or the API server may take")
                  ->capture_default_str(),
              {.bare_unit_s = 1, .whole = false});
  cmd->add_flag("--json", opts->json, "print the plans and attempts as JSON");
  cmd->add_flag("--quiet,-q", opts->quiet, "print nothing but errors");
  return [opts] { return run_deschedule(*opts); };
}

}  // namespace greensched::app
