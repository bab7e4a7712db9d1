// Subcommands of the greensched CLI. Each registers its options on the app and returns the
// action to run once parsing succeeded.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace greensched::app {

using Action = std::function<int()>;

Action add_simulate_command(CLI::App& app);
Action add_multi_command(CLI::App& app);
Action add_explain_command(CLI::App& app);
Action add_report_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
Action add_merge_command(CLI::App& app);
Action add_monitor_command(CLI::App& app);
Action add_profile_command(CLI::App& app);
Action add_calibrate_command(CLI::App& app);
Action add_serve_command(CLI::App& app);
Action add_deschedule_command(CLI::App& app);
Action add_bound_command(CLI::App& app);
Action add_train_command(CLI::App& app);
Action add_dispatch_command(CLI::App& app);
Action add_convert_command(CLI::App& app);
Action add_forecast_command(CLI::App& app);

}  // namespace greensched::app
