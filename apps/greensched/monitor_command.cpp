// greensched monitor: the node agent. Samples CPU, memory, RAPL and NVML every interval and
// serves Prometheus /metrics and/or appends JSON lines.
#include <signal.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/monitor/agent.hpp"

namespace greensched::app {
namespace {

struct MonitorCliOptions {
  std::string interval = "1s";
  std::string listen;
  std::string jsonl;
  int64_t count = -1;
  std::string nvml_library;
  bool no_gpu = false;
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  bool quiet = false;
};

// "1s", "500ms", "2m", or a bare number of seconds.
Result<double> parse_interval(const std::string& text) {
  double value = 0;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(b, e, value);
  if (ec != std::errc() || ptr == b) {
    return Error{fmt::format("--interval '{}': expected e.g. 1s, 500ms, 2m", text)};
  }
  const std::string unit(ptr, e);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "m") {
    scale = 60;
  } else {
    return Error{fmt::format("--interval '{}': unit must be ms, s or m", text)};
  }
  const double seconds = value * scale;
  if (!(seconds >= 0.01) || seconds > 86400) {
    return Error{fmt::format("--interval '{}': must be between 10ms and 1 day", text)};
  }
  return seconds;
}

int run_monitor(const MonitorCliOptions& o) {
  auto interval = parse_interval(o.interval);
  if (!interval.ok()) return fail(interval.error(), kExitUsage);
  monitor::MonitorOptions opts;
  opts.interval_s = interval.value();
  opts.listen = o.listen;
  opts.jsonl = o.jsonl;
  opts.count = o.count;
  // Neither output asked for: JSON lines on stdout.
  if (opts.listen.empty() && opts.jsonl.empty()) opts.jsonl = "-";
  opts.sampler.proc_root = o.proc_root;
  opts.sampler.sys_root = o.sys_root;
  opts.sampler.nvml = !o.no_gpu;
  opts.sampler.nvml_library = o.nvml_library;

  // SIGINT/SIGTERM end the run cleanly; block them before any thread starts so that only
  // this thread receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const bool quiet = o.quiet;
  monitor::MonitorAgent agent(opts, [quiet](const std::string& note) {
    if (!quiet) fmt::print(stderr, "monitor: {}\n", note);
  });
  const double cpu_before = monitor::process_cpu_seconds();
  const auto wall_start = std::chrono::steady_clock::now();
  if (Status s = agent.start(); !s.ok()) return fail(s);
  if (!quiet) {
    std::string where;
    if (agent.port() >= 0) {
      const std::size_t colon = opts.listen.rfind(':');
      where += fmt::format("http://{}:{}/metrics", opts.listen.substr(0, colon), agent.port());
    }
    if (!opts.jsonl.empty()) {
      where += fmt::format("{}JSON lines to {}", where.empty() ? "" : " and ",
                           opts.jsonl == "-" ? "stdout" : opts.jsonl);
    }
    fmt::print(stderr, "monitor: every {} s, {}\n", opts.interval_s, where);
  }
  timespec wait{0, 250'000'000};
  while (!agent.finished()) {
    siginfo_t info;
    if (sigtimedwait(&signals, &info, &wait) > 0) break;
  }
  agent.stop();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu = monitor::process_cpu_seconds() - cpu_before;
  if (!quiet) {
    fmt::print(stderr,
               "monitor: {} readings in {:.1f} s; own CPU {:.3f} s = {:.3f} % of one core\n",
               agent.samples(), wall, cpu, wall > 0 ? 100.0 * cpu / wall : 0.0);
  }
  return 0;
}

}  // namespace

Action add_monitor_command(CLI::App& app) {
  auto o = std::make_shared<MonitorCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "monitor", "Node agent: sample CPU, memory, RAPL energy and GPUs; serve /metrics");
  cmd->footer(
      "Node agent: sample CPU use per core, memory, CPU package energy (RAPL) and NVIDIA GPUs\n"
      "(NVML, loaded at run time) every interval; serve Prometheus /metrics and/or append JSON\n"
      "lines. Absent sources are reported once and skipped.\n\n"
      "Examples:\n"
      "  greensched monitor --listen 0.0.0.0:9400            (scrape http://HOST:9400/metrics)\n"
      "  greensched monitor --interval 1s --jsonl monitor.jsonl --count 600\n"
      "  greensched monitor --count 3                        (JSON lines on stdout)");
  cmd->add_option("--interval", o->interval, "sampling interval: 1s, 500ms, 2m")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd->add_option("--listen", o->listen, "serve GET /metrics on HOST:PORT (port 0: any free)");
  cmd->add_option("--jsonl", o->jsonl, "append a JSON line per reading to FILE (- for stdout)");
  cmd->add_option("--count", o->count, "stop after N readings (default: run until interrupted)");
  cmd->add_option("--nvml-library", o->nvml_library,
                  "NVML library to load (default: $GREENSCHED_NVML_LIBRARY or libnvidia-ml.so.1)");
  cmd->add_flag("--no-gpu", o->no_gpu, "do not load NVML");
  cmd->add_option("--proc-root", o->proc_root, "where /proc is")->capture_default_str();
  cmd->add_option("--sys-root", o->sys_root, "where /sys is")->capture_default_str();
  cmd->add_flag("--quiet,-q", o->quiet, "no notes on stderr");
  return [o] { return run_monitor(*o); };
}

}  // namespace greensched::app
