#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/json_fields.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/explain/narrator.hpp"

namespace greensched::app {
namespace {

struct ExplainOptions {
  std::string record;
  std::string pod;
  int64_t step = -1;
  int failed = 0;
  std::string policy;
  std::string seeds;                // --seeds: only records of these ("": any)
  std::vector<uint64_t> seed_list;  // parsed
  bool json = false;
  std::string narrator_url;
  std::string narrator_model;
};

// `r` passed check_decision_record, so its run fields have their types; numbers compare as
// JSON values (no float-to-integer cast).
bool run_matches(const nlohmann::json& r, const ExplainOptions& o) {
  const nlohmann::json* run = json_member(r, "run");
  if (run == nullptr) return o.policy.empty() && o.seed_list.empty();
  if (!o.policy.empty() && run->value("policy", std::string()) != o.policy &&
      run->value("agent", std::string()) != o.policy) {
    return false;
  }
  const nlohmann::json* seed = json_member(*run, "seed");
  if (o.seed_list.empty()) return true;
  if (seed == nullptr) return false;
  for (uint64_t s : o.seed_list) {
    if (*seed == s) return true;
  }
  return false;
}

int run_explain(ExplainOptions o) {
  if (!o.seeds.empty()) {
    auto seeds = parse_seeds(o.seeds);
    if (!seeds.ok()) return fail(seeds.status().message(), kExitUsage);
    o.seed_list = seeds.value();
  }
  const int selectors = (!o.pod.empty()) + (o.step >= 0) + (o.failed > 0);
  if (selectors != 1)
    return fail("give exactly one of --pod NAME, --step N, --failed N", kExitUsage);
  std::ifstream in(o.record, std::ios::binary);
  if (!in) return fail(fmt::format("{}: cannot open file", o.record));
  std::vector<nlohmann::json> chosen;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    auto parsed = explain::parse_decision_record(line, fmt::format("{}:{}", o.record, number));
    if (!parsed.ok()) return fail(parsed);
    nlohmann::json& r = parsed.value();
    if (!run_matches(r, o)) continue;
    const bool failed = explain::is_failed_placement(r);
    const nlohmann::json* step = json_member(r, "step");
    if ((!o.pod.empty() && r["pod"] == o.pod) ||
        (o.step >= 0 && step != nullptr && *step == o.step) || (o.failed > 0 && failed)) {
      chosen.push_back(std::move(r));
      if (o.failed == 0 || static_cast<int>(chosen.size()) >= o.failed) break;
    }
  }
  if (chosen.empty()) {
    return fail(fmt::format("{}: no matching record{}", o.record,
                            o.policy.empty() ? "" : fmt::format(" for {}", o.policy)));
  }

  explain::NarratorConfig narrator{
      o.narrator_url, o.narrator_model,
      std::getenv("OPENAI_API_KEY") ? std::getenv("OPENAI_API_KEY") : "", 30};
  nlohmann::json all = nlohmann::json::array();
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const nlohmann::json& r = chosen[i];
    const std::string text = explain::explain_text(r);
    nlohmann::json facts = explain::explain_facts(r);
    std::optional<std::string> prose;
    if (!o.narrator_url.empty()) {
      auto told = explain::narrate(narrator, facts, text);
      if (told.ok()) {
        prose = told.value();
      } else {
        fmt::print(stderr, "note: {}; showing the template text only\n", told.error());
      }
    }
    if (o.json) {
      if (prose) facts["narration"] = *prose;
      all.push_back(std::move(facts));
      continue;
    }
    if (i > 0) fmt::print("\n");
    fmt::print("{}", text);
    if (prose) fmt::print("\n{}\n", *prose);
  }
  if (o.json) std::cout << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
  return 0;
}

}  // namespace

Action add_explain_command(CLI::App& app) {
  auto o = std::make_shared<ExplainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Explain scheduling decisions in plain words from a decision record file");
  cmd->footer(
      "Explain scheduling decisions in plain words from a decision record file (written by\n"
      "simulate --record or multi --record): why this node and GPU, by how much it beat the\n"
      "runner-up, why the others could not take the pod; for a pod that could not be placed,\n"
      "the reasons node by node, whether fragmentation was the cause, and the smallest change\n"
      "that would have let it fit.\n\n"
      "Examples:\n"
      "  greensched simulate --policy fgd --seeds 42 --record decisions.jsonl\n"
      "  greensched explain --record decisions.jsonl --pod builtin-pod-0042\n"
      "  greensched explain --record decisions.jsonl --failed 3 --json");
  cmd->add_option("--record", o->record, "decision record file (JSON Lines)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pod", o->pod, "explain the first decision about this pod");
  cmd->add_option("--step", o->step, "explain the decision at this arrival step");
  cmd->add_option("--failed", o->failed, "explain the first N pods that could not be placed");
  cmd->add_option("--policy", o->policy, "only records of this policy (or agent)");
  cmd->add_option("--seeds", o->seeds,
                  "only records of these seeds: a list and/or ranges, e.g. 42 or 1,5,7-9 "
                  "(default: any)");
  add_deprecated_alias(cmd, "--seed", "--seeds", o->seeds);
  cmd->add_flag("--json", o->json, "print the facts as JSON");
  cmd->add_option("--narrator-url", o->narrator_url,
                  "OpenAI-compatible endpoint to narrate the facts (off by default; key from "
                  "OPENAI_API_KEY)");
  cmd->add_option("--narrator-model", o->narrator_model, "model name for the narrator");
  return [o] { return run_explain(*o); };
}

}  // namespace greensched::app
