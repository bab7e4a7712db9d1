// greensched dispatch: the multi-cluster dispatch service (src/greensched/dispatch/): which
// worker cluster a Kueue Workload should run on, and from when, by a fleet agent of
// `greensched multi` on the clusters' live state (see docs/MULTICLUSTER.md). Serves until
// SIGINT or SIGTERM.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/dispatch/dispatch_server.hpp"
#include "greensched/dispatch/dispatch_service.hpp"
#include "greensched/dispatch/workload_request.hpp"
#include "greensched/multi/agent.hpp"
#include "greensched/serve/listener_security.hpp"
#include "listener_options.hpp"

namespace greensched::app {
namespace {

struct DispatchOptions {
  std::string config;
  std::string data_dir;  // add_data_dir_option: default_data_dir() unless given
  std::string listen = "127.0.0.1:8090";
  std::string agent = "green-plan";
  std::string journal;
  bool journal_repair = false;
  uint64_t journal_compact_bytes = uint64_t{64} << 20;
  std::string journal_compact_age = "24h";
  bool standby = false;
  std::string slack = "4h";
  std::string duration = "1h";
  std::string signal_start;
  std::string signal_origin;
  double signal_speed = 1.0;
  int refresh_seconds = 5;
  double cluster_timeout_s = 1.0;
  int commit_seconds = 120;
  int ls_bound_s = 600;
  std::string seeds = kDefaultSeeds;
  std::string port_file;
  bool quiet = false;
  serve::ListenerSecurity security;
};

int run_dispatch(const DispatchOptions& o) {
  std::string host;
  int port = 0;
  if (int code =
          check_listen(o.listen, "127.0.0.1:8090", o.security, "docs/MULTICLUSTER.md", host, port);
      code != 0)
    return code;
  auto seed = parse_one_seed(o.seeds);
  if (!seed.ok()) return fail(seed.status().message(), kExitUsage);
  auto config = dispatch::load_dispatch_config(o.config, o.data_dir);
  if (!config.ok()) return fail(config);
  dispatch::DispatchConfig c = std::move(config.value());
  c.agent = o.agent;
  c.journal_path = o.journal;
  c.journal_repair = o.journal_repair;
  c.journal_compact_bytes = o.journal_compact_bytes;
  auto compact_age = dispatch::parse_duration_s(o.journal_compact_age);
  if (!compact_age.ok()) {
    return fail(fmt::format("--record-compact-age: {}", compact_age.error()), kExitUsage);
  }
  c.journal_compact_age_s = compact_age.value();
  c.refresh_seconds = o.refresh_seconds;
  if (!(o.cluster_timeout_s > 0)) return fail("--cluster-timeout: must be > 0", kExitUsage);
  c.cluster_timeout_seconds = o.cluster_timeout_s;
  c.commit_seconds = o.commit_seconds;
  c.live.ls_bound_s = o.ls_bound_s;
  c.seed = seed.value();
  for (const auto& [text, field, name] :
       {std::tuple{o.slack, &c.default_slack_s, "--slack"},
        std::tuple{o.duration, &c.default_duration_s, "--duration"}}) {
    auto s = dispatch::parse_duration_s(text);
    if (!s.ok()) return fail(fmt::format("{}: {}", name, s.error()), kExitUsage);
    *field = s.value();
  }
  const int64_t now = dispatch::wall_clock_s();
  if (!o.signal_start.empty()) {
    auto start = parse_utc_time(o.signal_start);
    if (!start.ok()) return fail(fmt::format("--signal-start: {}", start.error()), kExitUsage);
    if (!(o.signal_speed > 0)) return fail("--signal-speed: must be > 0", kExitUsage);
    int64_t origin = now;
    if (!o.signal_origin.empty()) {
      auto t = parse_utc_time(o.signal_origin);
      if (!t.ok()) return fail(fmt::format("--signal-origin: {}", t.error()), kExitUsage);
      origin = t.value();
    }
    c.clock = dispatch::SignalClock(start.value(), o.signal_speed, origin);
  } else if (!o.signal_origin.empty()) {
    return fail("--signal-origin: needs --signal-start", kExitUsage);
  }

  const sigset_t signals = block_stop_signals();

  // A standby neither reads nor listens until the journal's writer is gone: it polls the
  // lock, so that SIGTERM still stops it at once.
  if (o.standby) {
    if (o.journal.empty())
      return fail("--standby: needs --journal (the one it takes over)", kExitUsage);
    bool said = false;
    while (!c.journal_lock) {
      std::string held;
      auto lock = dispatch::JournalLock::try_acquire(o.journal, &held);
      if (!lock.ok()) return fail(lock.error(), exit_code(lock.code()));
      if (lock.value()) {
        c.journal_lock = std::move(lock.value());
        if (said && !o.quiet)
          fmt::print(stderr, "greensched dispatch: taking over {}\n", o.journal);
        break;
      }
      if (!said && !o.quiet) fmt::print(stderr, "greensched dispatch: standby: {}\n", held);
      said = true;
      const timespec poll{0, 100 * 1000 * 1000};
      if (const int sig = sigtimedwait(&signals, nullptr, &poll); sig > 0) {
        if (!o.quiet) fmt::print(stderr, "greensched dispatch: signal {}, stopping\n", sig);
        return 0;
      }
    }
  }
  auto service = dispatch::DispatchService::create(std::move(c), dispatch::wall_clock_s());
  if (!service.ok()) return fail(service);
  dispatch::DispatchServer server(*service.value(), o.security);
  auto bound = server.start(host, port);
  if (!bound.ok()) return fail(bound);
  if (int code = write_port_file(o.port_file, bound.value()); code != 0) {
    server.stop();
    return code;
  }
  if (!o.quiet) {
    const nlohmann::json clusters = service.value()->clusters(dispatch::wall_clock_s());
    std::string states;
    for (const nlohmann::json& cl : clusters["clusters"]) {
      states += fmt::format("{}{} {}", states.empty() ? "" : ", ", cl["name"].get<std::string>(),
                            cl.value("up", false) ? "up" : "DOWN");
    }
    fmt::print(stderr,
               "greensched dispatch: {}://{}:{} agent {} | clusters: {} | signal time {}{}{}\n",
               o.security.tls() ? "https" : "http", host, bound.value(), o.agent, states,
               clusters["signal_time"].get<std::string>(),
               o.security.token_file.empty() ? "" : " | bearer token",
               o.security.client_ca.empty() ? "" : " | client certificates");
  }
  wait_for_stop_signal(signals, "greensched dispatch", o.quiet);
  server.stop();
  return 0;
}

}  // namespace

Action add_dispatch_command(CLI::App& app) {
  auto opts = std::make_shared<DispatchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dispatch", "Serve multi-cluster dispatch decisions over HTTP, for Kueue MultiKueue");
  cmd->footer(
      "Serves which cluster a Workload should run on, from when, and why.\n"
      "Answers POST /v1/dispatch {\"workload\": <Kueue Workload>, \"clusters\": [...]} with the\n"
      "cluster(s) to nominate, the earliest start and the reasons; GET /v1/clusters, /healthz,\n"
      "/metrics. Workload annotations: greensched.io/qos (LS|BE), greensched.io/slack (4h),\n"
      "greensched.io/duration, greensched.io/data-gb, greensched.io/home.\n\n"
      "Example: sites of the fleet file without an API server are its node lists, idle\n"
      "  greensched dispatch --config examples/dispatch-4-regions.json --record dispatch.jsonl\n"
      "  curl -s localhost:8090/v1/dispatch -d @examples/workload-be.json\n"
      "  greensched explain --record dispatch.jsonl --pod default/train-1\n\n" +
      listener_help("docs/MULTICLUSTER.md") +
      "\n/metrics needs the token too (it names the clusters and their load); scrape it with\n"
      "the token (Prometheus: authorization.credentials_file).\n"
      "  greensched dispatch --config dispatch.json --listen 0.0.0.0:8090 \\\n"
      "      --tls-cert tls.crt --tls-key tls.key --auth-token-file token\n"
      "  curl --cacert ca.crt -H \"Authorization: Bearer $(cat token)\" "
      "https://HOST:8090/v1/clusters");
  cmd->add_option("--config", opts->config,
                  "JSON: {\"fleet\": fleet file or object, \"clusters\": {name: {\"api\": "
                  "{server, token_file, ca_file}, \"carbon_forecast\": {url, format}}}}")
      ->required();
  add_data_dir_option(cmd, opts->data_dir);
  cmd->add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--agent", opts->agent,
                  fmt::format("the fleet agent that decides: one of {}",
                              fmt::join(multi::known_agent_names(), ", ")))
      ->capture_default_str();
  cmd->add_option("--record", opts->journal,
                  "JSON Lines of every decision, replayed at start (explain --record reads it)")
      ->type_name("FILE");
  add_deprecated_alias(cmd, "--journal", "--record", opts->journal);
  cmd->add_flag("--record-repair", opts->journal_repair,
                "move bad lines of --record to RECORD.rejected and start without them (else a "
                "bad line before the last refuses the start)");
  add_deprecated_flag_alias(cmd, "--journal-repair", "--record-repair", opts->journal_repair);
  cmd->add_flag("--standby", opts->standby,
                "wait until no other service holds --record, then take over from it (replay it, "
                "then listen); without it a second service on one record is refused");
  cmd->add_option("--record-compact-bytes", opts->journal_compact_bytes,
                  "rewrite --record to the decisions still standing once it is larger (0: "
                  "never by size)")
      ->capture_default_str();
  add_deprecated_alias(cmd, "--journal-compact-bytes", "--record-compact-bytes",
                       opts->journal_compact_bytes);
  as_duration(cmd->add_option("--record-compact-age", opts->journal_compact_age,
                              "rewrite --record to the decisions still standing this long after "
                              "its last rewrite (0: never by age)")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  add_deprecated_alias(cmd, "--journal-compact-age", "--record-compact-age",
                       opts->journal_compact_age);
  as_duration(
      cmd->add_option("--slack", opts->slack, "slack of a BE workload without the annotation")
          ->capture_default_str(),
      {.bare_unit_s = 1});
  as_duration(cmd->add_option("--duration", opts->duration,
                              "expected run time of a workload that states none")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  cmd->add_option("--signal-start", opts->signal_start,
                  "replay the carbon series from this UTC time (default: now)");
  cmd->add_option("--signal-origin", opts->signal_origin,
                  "the UTC wall time at which the replay is at --signal-start (default: when the "
                  "service starts; give it so that a restarted service resumes the same clock)");
  cmd->add_option("--signal-speed", opts->signal_speed,
                  "signal seconds per wall second with --signal-start (3600: an hour a second)")
      ->capture_default_str();
  as_duration(cmd->add_option("--refresh", opts->refresh_seconds,
                              "time between reads of the clusters and forecasts")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  as_duration(cmd->add_option("--cluster-timeout", opts->cluster_timeout_s,
                              "time a read of a cluster (or its forecast) may take; decisions "
                              "never wait for one: they use the last state read")
                  ->capture_default_str(),
              {.bare_unit_s = 1, .whole = false});
  as_duration(cmd->add_option("--commit", opts->commit_seconds,
                              "time after its start that a dispatched workload counts at its "
                              "cluster before its pods show")
                  ->capture_default_str(),
              {.bare_unit_s = 1});
  as_duration(
      cmd->add_option("--ls-bound", opts->ls_bound_s, "time within which LS workloads start")
          ->capture_default_str(),
      {.bare_unit_s = 1});
  add_seeds_option(cmd, opts->seeds,
                   "orders each cluster's equal nodes as `multi --seeds` orders its sites'", true);
  add_port_file_option(cmd, opts->port_file);
  cmd->add_flag("--quiet,-q", opts->quiet, "no startup line on stderr");
  add_listener_options(cmd, opts->security,
                       "file holding the bearer token every request but GET /healthz must carry "
                       "(re-read when it changes)");
  return [opts] { return run_dispatch(*opts); };
}

}  // namespace greensched::app
