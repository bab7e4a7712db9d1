#include "greensched/serve/service.hpp"

#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/openb_reader.hpp"

namespace greensched::serve {
namespace {

Result<std::vector<NodeSpec>> read_node_list_json(const std::string& path,
                                                  GpuModelRegistry& models) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  nlohmann::json j = parse_json_or_discarded(text.value());
  if (j.is_discarded()) return Error{fmt::format("{}: not JSON", path)};
  auto infos = parse_node_list(j);
  if (!infos.ok()) return Error{fmt::format("{}: {}", path, infos.error())};
  std::vector<NodeSpec> nodes;
  for (const NodeInfo& info : infos.value()) {
    auto spec = to_node_spec(info, models, path);  // errors about its GPU model name the file
    if (!spec.ok()) return Error{fmt::format("{}: {}", path, spec.error())};
    nodes.push_back(std::move(spec.value()));
  }
  return nodes;
}

}  // namespace

Result<std::unique_ptr<Extender>> open_extender(const ServiceInputs& inputs,
                                                StartupReport* report) {
  StartupReport local;
  StartupReport& r = report != nullptr ? *report : local;
  const ServeConfig& config = inputs.config;

  GpuModelRegistry models;
  std::vector<NodeSpec> nodes;
  if (!inputs.nodes_csv.empty()) {
    auto csv = trace::read_openb_nodes(inputs.nodes_csv, models);
    if (!csv.ok()) return Error{csv.error()};
    nodes = std::move(csv.value());
  }
  if (!inputs.nodes_json.empty()) {
    auto list = read_node_list_json(inputs.nodes_json, models);
    if (!list.ok()) return Error{list.error()};
    for (NodeSpec& n : list.value()) nodes.push_back(std::move(n));
  }

  StateOptions options;
  options.policy = config.policy;
  options.gpu_select = config.gpu_select;
  options.seed = config.seed;
  if (!config.target_pods.empty()) {
    auto pods = trace::read_openb_pods(config.target_pods, models);
    if (!pods.ok()) return Error{pods.error()};
    options.target = frag::build_target_workload(pods.value(), config.target_coverage);
    r.target = config.target_pods;
  } else {
    const trace::Workload builtin = trace::builtin_openb_workload();
    options.target = frag::build_target_workload(builtin.pods, config.target_coverage);
    r.target = builtin.pods_source;
  }
  if (!config.power_model.empty()) {
    auto model = power::PowerModel::load(config.power_model);
    if (!model.ok()) return Error{model.error()};
    options.power_model = std::move(model.value());
  }
  if (config.pue > 0) options.power_model.set_pue(config.pue);

  auto state = ClusterState::create(std::move(models), std::move(nodes), std::move(options));
  if (!state.ok()) return Error{state.error()};
  auto journal = Journal::open(inputs.state_dir);
  if (!journal.ok()) return Error{journal.error()};

  ClusterState& s = *state.value();
  Status replayed = journal.value()->replay([&](const std::string& entry) {
    ++r.replayed;
    if (Status a = s.apply_entry(entry); !a.ok()) {
      r.warnings.push_back(fmt::format("journal entry {} skipped: {}", r.replayed, a.message()));
    }
    return Status::Ok();
  });
  if (!replayed.ok()) return Error{replayed.message()};
  // Keep restarts fast: a long tail is folded into a snapshot now.
  if (journal.value()->stats().since_snapshot >=
      std::min<uint64_t>(1000, config.extender.compact_every)) {
    if (Status c = journal.value()->compact(s.snapshot_entry()); !c.ok()) {
      r.warnings.push_back("journal compaction failed: " + c.message());
    }
  }
  r.nodes = s.cluster().size();
  r.pods = s.pods().size();
  ExtenderOptions options_with_log = config.extender;
  if (options_with_log.decision_log.empty()) {
    options_with_log.decision_log = inputs.state_dir + "/decisions.jsonl";
  }
  return std::make_unique<Extender>(std::move(state.value()), std::move(journal.value()),
                                    options_with_log);
}

}  // namespace greensched::serve
