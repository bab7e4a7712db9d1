#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/json_fields.hpp"
#include "greensched/explain/checked_narration.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/explain/narrator.hpp"
#include "greensched/explain/question.hpp"
#include "greensched/report/decision_chart.hpp"
#include "greensched/report/png.hpp"
#include "narrator_options.hpp"
#include "progress.hpp"

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
  NarratorOptions narrator;
  std::string narrator_log;
  std::string ask;
  std::string chart;  // --chart FILE.png|FILE.svg ("": none)
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

constexpr std::size_t kAskMost = 6;  // decisions an answer to --ask may draw on

// The decision's chart as PNG for a model that takes images ("" for one that does not, or a
// record without a chart): the same chart --chart and the report draw.
std::string chart_for_model(const explain::NarratorInfo& info, const nlohmann::json& record) {
  if (!info.vision) return "";
  const std::string svg = report::decision_chart_svg(record);
  if (svg.empty()) return "";
  auto png = report::svg_to_png(svg);
  return png.ok() ? png.value() : "";
}

// One narration's line in --narrator-log.
void log_narration(std::optional<std::ofstream>& log, const nlohmann::json& facts,
                   const explain::NarratorInfo& info, const explain::CheckedNarration& told) {
  if (!log) return;
  nlohmann::json line = {{"pod", facts.value("pod", std::string())},
                         {"model", info.model},
                         {"placeholders", info.placeholders},
                         {"reply", told.reply},
                         {"finish_reason", told.finish_reason}};
  if (facts.contains("question")) line["question"] = facts["question"];
  if (told.verdict) {
    line["verdict"] = told.accepted() ? "accepted" : told.verdict->reason;
  } else {
    line["error"] = told.notes.empty() ? "" : told.notes.back();
  }
  *log << line.dump() << "\n";
}

// --ask: the decisions the question names, then the narrator's answer where the guard accepts
// it (checked against the facts of all of them and the question's own words).
int answer_question(const ExplainOptions& o, const std::vector<nlohmann::json>& records,
                    const explain::NarratorConfig& narrator, const explain::NarratorInfo& info,
                    std::optional<std::ofstream>& log) {
  nlohmann::json facts = explain::question_facts(o.ask, records);
  std::string text;
  for (const nlohmann::json& r : records) text += explain::explain_text(r);
  explain::CheckedNarration told;
  if (!narrator.url.empty()) {
    told = explain::narrate_checked(narrator, info, facts, text,
                                    chart_for_model(info, records.front()));
    for (const std::string& note : told.notes) fmt::print(stderr, "note: {}\n", note);
    log_narration(log, facts, info, told);
  }
  if (o.json) {
    explain::add_narration(facts, told);
    std::cout << facts.dump(2) << "\n";
    return 0;
  }
  fmt::print("Question: {}\nWhat the record says ({} decision{}):\n{}", o.ask, records.size(),
             records.size() == 1 ? "" : "s", text);
  if (told.accepted()) {
    fmt::print("\nAnswer: {}\n(narrated by {}, checked against {} facts)\n", told.verdict->text,
               model_name(info.model), told.verdict->used.size());
  } else {
    fmt::print("\nNo checked answer: the record's own words are above.\n");
  }
  return 0;
}

// --chart: "png" or "svg" from the file's extension (any case); "" for another.
std::string chart_format(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "png" || ext == "svg" ? ext : "";
}

// Writes the chart of each decision to `path`, or to PATH-1.EXT, PATH-2.EXT, ... when there are
// several, saying "chart: FILE" on stderr for each; returns the file of each decision ("" for
// a record without a chart, said on stderr too). An unwritable file is an error.
Result<std::vector<std::string>> write_charts(const std::vector<nlohmann::json>& decisions,
                                              const std::string& path) {
  const bool png = chart_format(path) == "png";
  const std::size_t dot = path.rfind('.');
  std::vector<std::string> files;
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    const std::string file = decisions.size() == 1 ? path
                                                   : fmt::format("{}-{}{}", path.substr(0, dot),
                                                                 i + 1, path.substr(dot));
    const std::string svg = report::decision_chart_svg(decisions[i]);
    if (svg.empty()) {
      fmt::print(stderr, "no chart for this record: {}\n",
                 report::decision_chart_missing(decisions[i]));
      files.emplace_back();
      continue;
    }
    std::string bytes = svg;
    if (png) {
      auto drawn = report::svg_to_png(svg);
      if (!drawn.ok()) return Error{fmt::format("{}: {}", file, drawn.error())};
      bytes = std::move(drawn.value());
    }
    if (Status s = write_text_file(file, bytes); !s.ok()) {
      return Error{fmt::format("cannot write the chart: {}", s.message())};
    }
    fmt::print(stderr, "chart: {}\n", file);
    files.push_back(file);
  }
  return files;
}

int run_explain(ExplainOptions o) {
  if (!o.seeds.empty()) {
    auto seeds = parse_seeds(o.seeds);
    if (!seeds.ok()) return fail(seeds.status().message(), kExitUsage);
    o.seed_list = seeds.value();
  }
  if (std::string why = narrator_usage_problem(o.narrator); !why.empty()) {
    return fail(why, kExitUsage);
  }
  const int selectors = (!o.pod.empty()) + (o.step >= 0) + (o.failed > 0) + (!o.ask.empty());
  if (selectors != 1) {
    return fail("give exactly one of --pod NAME, --step N, --failed N, --ask QUESTION", kExitUsage);
  }
  if (!o.ask.empty() && o.narrator.url.empty()) {
    return fail(
        "--ask needs a narrator to answer: give --narrator-url (a llama-server, Ollama, vLLM "
        "or a hosted API; see docs/EXPLAIN.md)",
        kExitUsage);
  }
  const std::set<std::string> asked = explain::question_names(o.ask);
  std::vector<nlohmann::json> nearby;  // --ask: records that name a node or site asked about
  std::ifstream in(o.record, std::ios::binary);
  if (!in) return fail(fmt::format("{}: cannot open file", o.record));
  // --pod: every decision about the pod, in order (it may have waited or failed before it
  // was placed); --step: the one at that step; --failed: the first N pods that failed.
  std::vector<nlohmann::json> chosen;
  std::string line, example_pod;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    auto parsed = explain::parse_decision_record(line, fmt::format("{}:{}", o.record, number));
    if (!parsed.ok()) return fail(parsed);
    nlohmann::json& r = parsed.value();
    if (!run_matches(r, o)) continue;
    if (const nlohmann::json* pod = json_member(r, "pod");
        example_pod.empty() && pod != nullptr && pod->is_string()) {
      example_pod = pod->get<std::string>();
    }
    const bool failed = explain::is_failed_placement(r);
    const nlohmann::json* step = json_member(r, "step");
    if (!o.ask.empty()) {
      // The pods asked about, every decision; else the first few that weighed a node or site
      // asked about.
      const int match = explain::question_match(r, asked);
      if (match == 2 && chosen.size() < kAskMost) chosen.push_back(std::move(r));
      if (match == 1 && nearby.size() < 3) nearby.push_back(std::move(r));
      continue;
    }
    if ((!o.pod.empty() && explain::record_about_pod(r, o.pod)) ||
        (o.step >= 0 && step != nullptr && *step == o.step) || (o.failed > 0 && failed)) {
      chosen.push_back(std::move(r));
      if (o.step >= 0 || (o.failed > 0 && static_cast<int>(chosen.size()) >= o.failed)) break;
    }
  }
  if (!o.ask.empty() && chosen.empty()) chosen = std::move(nearby);
  if (chosen.empty()) {
    const std::string of = o.policy.empty() ? "" : fmt::format(" of {}", o.policy);
    if (example_pod.empty())
      return fail(fmt::format("{}: no decision{} in this record", o.record, of));
    if (!o.ask.empty()) {
      return fail(
          fmt::format("{}: the question names no pod, node or site{} in this record; "
                      "names look like {}",
                      o.record, of, example_pod));
    }
    if (!o.pod.empty()) {
      return fail(fmt::format("{}: no pod named {}{}; names look like {}", o.record, o.pod, of,
                              example_pod));
    }
    if (o.failed > 0) return fail(fmt::format("{}: no pod failed{} in this record", o.record, of));
    return fail(fmt::format("{}: no decision{} at step {}", o.record, of, o.step));
  }

  std::vector<std::string> charts;
  if (!o.chart.empty()) {
    auto written = write_charts(chosen, o.chart);
    if (!written.ok()) return fail(written.error());
    charts = std::move(written.value());
  }

  const OpenNarrator opened = open_narrator(o.narrator);
  const explain::NarratorConfig& narrator = opened.config;
  const explain::NarratorInfo& info = opened.info;
  std::optional<std::ofstream> log;
  if (!o.narrator_log.empty()) {
    log.emplace(o.narrator_log, std::ios::binary | std::ios::trunc);
    if (!*log) return fail(fmt::format("{}: cannot write file", o.narrator_log));
  }
  if (!o.ask.empty()) return answer_question(o, chosen, narrator, info, log);
  nlohmann::json all = nlohmann::json::array();
  // Narrated decisions take seconds each; the text shows them as they come, --json only at the
  // end: a bar on a terminal meanwhile.
  ProgressBar bar(!narrator.url.empty() && o.json && chosen.size() > 1 && stderr_is_terminal());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    bar.update(i, chosen.size(), "narrating");
    const nlohmann::json& r = chosen[i];
    const std::string text = explain::explain_text(r);
    nlohmann::json facts = explain::explain_facts(r);
    // The narration, shown only once the guard has checked it against these facts.
    explain::CheckedNarration told;
    if (!narrator.url.empty()) {
      told = explain::narrate_checked(narrator, info, facts, text, chart_for_model(info, r));
      for (const std::string& note : told.notes) fmt::print(stderr, "note: {}\n", note);
      log_narration(log, facts, info, told);
    }
    if (o.json) {
      explain::add_narration(facts, told);
      if (i < charts.size() && !charts[i].empty()) facts["chart"] = charts[i];
      all.push_back(std::move(facts));
      continue;
    }
    if (i > 0) fmt::print("\n");
    if (!o.pod.empty() && chosen.size() > 1) {
      // One pod's story: say which of its decisions this is.
      const nlohmann::json* step = json_member(r, "step");
      fmt::print(
          "Decision {} of {} about {}{}:\n", i + 1, chosen.size(), o.pod,
          step != nullptr && step->is_number() ? fmt::format(" (step {})", step->dump()) : "");
    }
    fmt::print("{}", text);
    if (told.accepted()) {
      fmt::print("\n{}\n(narrated by {}, checked against {} facts)\n", told.verdict->text,
                 model_name(info.model), told.verdict->used.size());
    }
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
      "  greensched explain --record decisions.jsonl --failed 3 --json\n\n"
      "A narrator (--narrator-url) may word the facts anew: a local llama-server\n"
      "(http://127.0.0.1:8080), Ollama (http://127.0.0.1:11434/v1), vLLM or a hosted API.\n"
      "Its reply is shown under the template's text only when the model finished, and every\n"
      "number and name in it is in the facts (numbers in their units, and beside the right\n"
      "quantity); else it is refused with the reason on stderr (\"narration_rejected\" in\n"
      "--json) and the template's text stands. llama.cpp's server and vLLM are asked, through\n"
      "a JSON schema, for placeholders that greensched fills in (--narrator-mode); a model\n"
      "that takes images also gets the decision's chart. --narrator-log keeps every reply.\n\n"
      "  greensched explain --record decisions.jsonl --failed 1 --chart why.png \\\n"
      "      --narrator-url http://127.0.0.1:8080\n"
      "  greensched explain --record decisions.jsonl --narrator-url http://127.0.0.1:8080 \\\n"
      "      --ask \"why was builtin-pod-0042 not put on builtin-node-0007?\"\n\n"
      "See docs/EXPLAIN.md.");
  cmd->add_option("--record", o->record, "decision record file (JSON Lines)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pod", o->pod,
                  "explain every decision about this pod, in order (it may have waited or "
                  "failed before it was placed, or been moved to make room for another)");
  cmd->add_option("--step", o->step, "explain the decision at this arrival step");
  cmd->add_option("--failed", o->failed, "explain the first N pods that could not be placed");
  cmd->add_option("--ask", o->ask,
                  "answer a question about the record, e.g. \"why was builtin-pod-0042 not put "
                  "on builtin-node-7?\": the decisions about the pods it names (else those that "
                  "weighed the nodes or sites it names) are shown, and the narrator's answer "
                  "under them once the guard has checked it (needs --narrator-url)");
  cmd->add_option("--policy", o->policy, "only records of this policy (or agent)");
  cmd->add_option("--seeds", o->seeds,
                  "only records of these seeds: a list and/or ranges, e.g. 42 or 1,5,7-9 "
                  "(default: any)");
  add_deprecated_alias(cmd, "--seed", "--seeds", o->seeds);
  cmd->add_flag("--json", o->json, "print the facts as JSON");
  add_narrator_options(cmd, o->narrator);
  cmd->add_option("--narrator-log", o->narrator_log,
                  "write each narrator reply, as the server gave it, with the guard's verdict "
                  "to this file (JSON Lines)");
  cmd->add_option("--chart", o->chart,
                  "write the chart of the explained decision to FILE.png (or FILE.svg); with "
                  "several decisions (--pod, --failed N) to FILE-1.png, FILE-2.png, ... Each "
                  "file written is named on stderr (\"chart\" in --json)")
      ->check(CLI::Validator(
          [](std::string& path) {
            return chart_format(path).empty() ? std::string("must end in .png or .svg")
                                              : std::string();
          },
          "FILE.png|FILE.svg"));
  return [o] { return run_explain(*o); };
}

}  // namespace greensched::app
