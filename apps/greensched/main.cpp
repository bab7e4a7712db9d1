// greensched: schedule AI jobs onto GPU clusters with fewer stranded GPUs, less power and
// less carbon, and say why.
#include <cstdio>
#include <exception>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli_conventions.hpp"
#include "cli_docs.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/learn/register.hpp"

namespace {

int run(int argc, char** argv) {
  // fgd-online, learned:MODEL.json
  if (greensched::Status s = greensched::learn::register_learn_policies(); !s.ok()) {
    return greensched::app::fail(s.message(), greensched::app::kExitInternal);
  }
  CLI::App app{
      "greensched: GPU-sharing cluster scheduling that strands fewer GPUs.\n"
      "Simulate published and new scheduling policies on the Alibaba openb trace or a built-in\n"
      "workload with the same statistics.\n\n"
      "Start with:  greensched simulate            (built-in workload, all policies)\n"
      "             greensched multi               (built-in 4-region fleet, all agents)\n"
      "             greensched <command> --help"};
  app.require_subcommand(1);
  app.footer(greensched::app::kExitCodesHelp);
  app.set_version_flag("--version", "greensched 0.1.0");
  auto simulate = greensched::app::add_simulate_command(app);
  auto multi = greensched::app::add_multi_command(app);
  auto explain = greensched::app::add_explain_command(app);
  auto report = greensched::app::add_report_command(app);
  auto compare = greensched::app::add_compare_command(app);
  auto merge = greensched::app::add_merge_command(app);
  auto monitor = greensched::app::add_monitor_command(app);
  auto profile = greensched::app::add_profile_command(app);
  auto calibrate = greensched::app::add_calibrate_command(app);
  auto serve = greensched::app::add_serve_command(app);
  auto deschedule = greensched::app::add_deschedule_command(app);
  auto bound = greensched::app::add_bound_command(app);
  auto train = greensched::app::add_train_command(app);
  auto dispatch = greensched::app::add_dispatch_command(app);
  auto convert = greensched::app::add_convert_command(app);
  auto forecast = greensched::app::add_forecast_command(app);
  auto completion = greensched::app::add_completion_command(app);
  auto cli_docs = greensched::app::add_cli_docs_command(app);
  greensched::app::name_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return greensched::app::parse_error_exit(app, e, argc, argv);
  }
  greensched::app::command_name() = app.get_subcommands().front()->get_name();
  if (app.got_subcommand("simulate")) return simulate();
  if (app.got_subcommand("multi")) return multi();
  if (app.got_subcommand("explain")) return explain();
  if (app.got_subcommand("report")) return report();
  if (app.got_subcommand("compare")) return compare();
  if (app.got_subcommand("merge")) return merge();
  if (app.got_subcommand("monitor")) return monitor();
  if (app.got_subcommand("profile")) return profile();
  if (app.got_subcommand("calibrate")) return calibrate();
  if (app.got_subcommand("serve")) return serve();
  if (app.got_subcommand("deschedule")) return deschedule();
  if (app.got_subcommand("bound")) return bound();
  if (app.got_subcommand("train")) return train();
  if (app.got_subcommand("dispatch")) return dispatch();
  if (app.got_subcommand("convert")) return convert();
  if (app.got_subcommand("forecast")) return forecast();
  if (app.got_subcommand("completion")) return completion();
  if (app.got_subcommand("cli-docs")) return cli_docs();
  return greensched::app::kExitUsage;
}

}  // namespace

// Anything a command lets escape is a bug; it still ends as one line and an exit code, never
// an abort.
int main(int argc, char** argv) {
  using greensched::app::fail;
  using greensched::app::kExitInternal;
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fail(fmt::format("internal error: {}", e.what()), kExitInternal);
  } catch (...) {
    return fail("internal error: unknown exception", kExitInternal);
  }
}
