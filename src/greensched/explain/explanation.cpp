#include "greensched/explain/explanation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"

namespace greensched::explain {
namespace {

using nlohmann::json;

// 2.50 -> "2.5", 3.00 -> "3", 0.81 -> "0.81".
std::string number(double v, int decimals = 2) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string signed_number(double v, int decimals = 0) {
  const std::string s = number(v, decimals);
  return v > 0 && s != "0" ? "+" + s : s;
}

// A whole number from any JSON number; 0 for a non-number or one out of int64 range (a
// float cast beyond it is undefined).
int64_t to_int(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (!v.is_number_float()) return 0;
  const double d = v.get<double>();
  return std::fabs(d) < 9.2e18 ? static_cast<int64_t>(d) : 0;
}

int64_t as_int(const json& j, const char* key) {
  const json* v = json_member(j, key);
  return v == nullptr ? 0 : to_int(*v);
}

bool has_runner_up(const json& r) {
  return json_member(r, "runner_up") != nullptr;
}

const json& member_or_empty(const json& j, const char* key) {
  static const json empty = json::object();
  const json* v = json_member(j, key);
  return v == nullptr ? empty : *v;
}

std::string gpu_share(int64_t milli) {
  return milli >= 1000 ? "1 whole GPU" : fmt::format("{} of one GPU", number(milli / 1000.0));
}

std::string describe_request(const json& req) {
  const int64_t ngpu = as_int(req, "num_gpu");
  const int64_t milli = as_int(req, "gpu_milli");
  std::string gpu;
  if (ngpu == 0) {
    gpu = "no GPU";
  } else if (ngpu == 1) {
    gpu = gpu_share(milli);
  } else {
    gpu = fmt::format("{} whole GPUs", ngpu);
  }
  std::string out =
      fmt::format("{} vCPU, {} GiB memory, {}", number(as_int(req, "cpu_milli") / 1000.0),
                  number(as_int(req, "memory_mib") / 1024.0, 1), gpu);
  if (req.contains("gpu_spec") && req["gpu_spec"].is_array() && !req["gpu_spec"].empty()) {
    std::vector<std::string> models;
    for (const json& m : req["gpu_spec"]) models.push_back(m.get<std::string>());
    out += fmt::format(", GPU model {}", fmt::join(models, " or "));
  }
  return out;
}

std::string gpu_indices(const json& gpus) {
  if (!gpus.is_array() || gpus.empty()) return "";
  std::vector<std::string> ids;
  for (const json& g : gpus) ids.push_back(std::to_string(to_int(g)));
  return fmt::format("{} {}", ids.size() == 1 ? "GPU" : "GPUs", fmt::join(ids, ", "));
}

// "702 insufficient GPU share on any single GPU, 311 gpu model not in spec", largest first.
std::string reason_list(const json& counts) {
  std::vector<std::pair<int64_t, std::string>> items;
  for (const auto& [reason, n] : counts.items()) items.emplace_back(to_int(n), reason);
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> parts;
  for (const auto& [n, reason] : items) parts.push_back(fmt::format("{} {}", n, reason));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string describe_amount(const std::string& dimension, int64_t value) {
  if (dimension == "gpu_milli") {
    return value >= 1000 ? std::string("a whole GPU")
                         : fmt::format("{} of a GPU", number(value / 1000.0));
  }
  if (dimension == "num_gpu") return fmt::format("{} GPU{}", value, value == 1 ? "" : "s");
  if (dimension == "cpu_milli") return fmt::format("{} vCPU", number(value / 1000.0));
  if (dimension == "memory_mib") return fmt::format("{} GiB memory", number(value / 1024.0, 1));
  return std::to_string(value);
}

std::vector<std::string> placed_sentences(const json& r) {
  std::vector<std::string> s;
  const std::string gpus = gpu_indices(member_or_empty(r, "chosen_gpus"));
  s.push_back(fmt::format("Pod {} ({}) was placed on {}{} by {}.", r["pod"].get<std::string>(),
                          describe_request(r["request"]), r["chosen_node"].get<std::string>(),
                          gpus.empty() ? "" : ", " + gpus + ",", r["policy"].get<std::string>()));
  const int64_t score = as_int(r, "score");
  if (!has_runner_up(r)) {
    s.push_back(fmt::format("It scored {} and was the only node that could host it.", score));
  } else if (r["tie_broken"].get<bool>()) {
    s.push_back(
        fmt::format("It tied with the runner-up {} at {}; the run's fixed tie order put {} first.",
                    r["runner_up"].get<std::string>(), score, r["chosen_node"].get<std::string>()));
  } else {
    const int64_t margin = as_int(r, "margin");
    s.push_back(fmt::format("It scored {}, {} point{} above the runner-up {} ({}).", score, margin,
                            margin == 1 ? "" : "s", r["runner_up"].get<std::string>(),
                            as_int(r, "runner_up_score")));
  }
  const json& cands = member_or_empty(r, "candidates");
  const json* chosen = nullptr;
  const json* runner = nullptr;
  for (const json& c : cands) {
    const json& node = member_or_empty(c, "node");
    if (node == r["chosen_node"]) chosen = &c;
    if (has_runner_up(r) && node == r["runner_up"]) runner = &c;
  }
  if (chosen != nullptr && chosen->contains("terms")) {
    std::vector<std::string> terms;
    for (const json& t : (*chosen)["terms"]) {
      if ((*chosen)["terms"].size() == 1) {
        terms.push_back(fmt::format("{} raw score {}, normalised {}",
                                    t["policy"].get<std::string>(), as_int(t, "raw"),
                                    as_int(t, "score")));
      } else {
        terms.push_back(fmt::format("{} {} (raw {}) x weight {}", t["policy"].get<std::string>(),
                                    as_int(t, "score"), as_int(t, "raw"), as_int(t, "weight")));
      }
    }
    s.push_back(fmt::format("Score terms on {}: {}.", r["chosen_node"].get<std::string>(),
                            fmt::join(terms, " + ")));
  }
  if (r.contains("frag_delta_milli") && r["frag_delta_milli"].is_number()) {
    std::string sentence =
        fmt::format("The placement changes the node's GPU fragmentation by {} milli-GPU",
                    signed_number(r["frag_delta_milli"].get<double>(), 1));
    if (runner != nullptr && json_member(*runner, "frag_delta_milli") != nullptr) {
      sentence += fmt::format("; on the runner-up it would have changed by {}",
                              signed_number((*runner)["frag_delta_milli"].get<double>(), 1));
    }
    s.push_back(sentence + ".");
  }
  if (r.contains("power_delta_watts") && r["power_delta_watts"].is_number()) {
    std::string sentence = fmt::format("It adds {} W to the node's power",
                                       number(r["power_delta_watts"].get<double>(), 1));
    if (runner != nullptr && json_member(*runner, "power_delta_watts") != nullptr) {
      sentence += fmt::format(" (the runner-up: {} W)",
                              number((*runner)["power_delta_watts"].get<double>(), 1));
    }
    s.push_back(sentence + ".");
  }
  const int64_t total = as_int(r, "nodes_total");
  const int64_t feasible = as_int(r, "feasible_nodes");
  const json& counts = member_or_empty(r, "reason_counts");
  if (feasible < total && !counts.empty()) {
    s.push_back(fmt::format("{} of {} nodes could host it; the other {} could not: {}.", feasible,
                            total, total - feasible, reason_list(counts)));
  } else {
    s.push_back(fmt::format("All {} nodes could host it.", total));
  }
  return s;
}

// `suggestions`, where given, gets each suggestion's kind ("shrink", "move"), the sentence
// that makes it (its index) and the diagnosis it comes from, so that a reader of several
// failed pods can say a repeated one once.
std::vector<std::string> failed_sentences(const json& r, json* suggestions = nullptr) {
  std::vector<std::string> s;
  s.push_back(fmt::format("Pod {} ({}) could not be placed.", r["pod"].get<std::string>(),
                          describe_request(r["request"])));
  s.push_back(fmt::format("0/{} nodes are available: {}.", as_int(r, "nodes_total"),
                          reason_list(member_or_empty(r, "reason_counts"))));
  const json& d = member_or_empty(r, "diagnosis");
  const int64_t split = as_int(d, "split_gpu_nodes");
  if (split > 0) {
    std::vector<std::string> ex;
    for (const json& e : member_or_empty(d, "split_gpu_examples")) {
      ex.push_back(e.get<std::string>());
    }
    s.push_back(fmt::format(
        "{} node{} enough free GPU in total but split across GPUs (fragmentation), e.g. {}.", split,
        split == 1 ? " has" : "s have", fmt::join(ex, ", ")));
  } else if (as_int(r["request"], "num_gpu") > 0) {
    s.push_back(
        "No node has the GPU share it asks for split across GPUs: fragmentation is not "
        "the cause.");
  }
  bool any = false;
  if (d.contains("shrink") && d["shrink"].is_object()) {
    const json& k = d["shrink"];
    const std::string dim = k["dimension"].get<std::string>();
    s.push_back(fmt::format(
        "Smallest change: it would fit on {} if it asked for {} instead of {} "
        "({}% less).",
        k["node"].get<std::string>(), describe_amount(dim, as_int(k, "to")),
        describe_amount(dim, as_int(k, "from")), number(k["cut_pct"].get<double>(), 1)));
    if (suggestions != nullptr) {
      suggestions->push_back({{"kind", "shrink"}, {"sentence", s.size() - 1}, {"of", k}});
    }
    any = true;
  }
  if (d.contains("move") && d["move"].is_object()) {
    const json& m = d["move"];
    const int64_t gpu = as_int(m, "frees_gpu_milli");
    s.push_back(fmt::format(
        "{} pod {} ({} vCPU, {}) off {} would make room there.", any ? "Or moving" : "Moving",
        m["pod"].get<std::string>(), number(as_int(m, "frees_cpu_milli") / 1000.0),
        gpu == 0 ? std::string("no GPU")
                 : (gpu > 1000 ? fmt::format("{} GPUs", number(gpu / 1000.0)) : gpu_share(gpu)),
        m["node"].get<std::string>()));
    if (suggestions != nullptr) {
      suggestions->push_back({{"kind", "move"}, {"sentence", s.size() - 1}, {"of", m}});
    }
    any = true;
  }
  if (!any && d.value("searched", true)) {
    s.push_back("Neither a single smaller request nor moving a single pod would have let it fit.");
  }
  return s;
}

// A fleet option's figures: "12 g expected at 157 gCO2/kWh" (or the intensity alone where
// the agent estimated no grams).
bool has_grams(const json& option) {
  const json* g = json_member(option, "expected_g");
  return g != nullptr && g->is_number();
}

std::string option_figures(const json& option) {
  const std::string ci = number(option["forecast_ci"].get<double>(), 0);
  if (!has_grams(option)) return fmt::format("{} gCO2/kWh forecast", ci);
  return fmt::format("{} g at {} gCO2/kWh forecast", number(option["expected_g"].get<double>(), 0),
                     ci);
}

// The record's derived figures, one function for the sentences and the facts: what the
// choice expected to save against staying home and starting now, and against the best start
// without waiting; how long it waited. Absent where the record cannot say.
struct FleetFigures {
  const json* chosen = nullptr;    // the chosen option among the alternatives
  std::string first_site;          // where the first decision sent it
  std::optional<double> home_g;    // vs home now: what it saves (positive: less)
  std::optional<double> home_pct;  // ... as a share of home's
  std::optional<double> now_g;     // vs the best start without waiting
  std::optional<double> now_pct;
  std::optional<int64_t> waited_s;  // from submission to its start
  bool in_grams = false;            // home_g in grams (else in gCO2/kWh)
  bool now_in_grams = false;
};

// How much less the chosen option expects than `other`, and that share of other's: in grams
// where both estimate grams, else in forecast intensity (gCO2/kWh).
std::pair<double, double> saving(const json& chosen, const json& other) {
  const char* key = has_grams(chosen) && has_grams(other) ? "expected_g" : "forecast_ci";
  const double a = chosen[key].get<double>();
  const double b = other[key].get<double>();
  return {b - a, b > 0 ? 100.0 * (b - a) / b : 0.0};
}

FleetFigures fleet_figures(const json& r) {
  FleetFigures f;
  const json& redispatch = member_or_empty(r, "redispatch");
  f.first_site = redispatch.contains("from_site") ? redispatch["from_site"].get<std::string>()
                                                  : r["site"].get<std::string>();
  for (const json& a : member_or_empty(r, "alternatives")) {
    if (a["site"] == f.first_site) f.chosen = &a;
  }
  if (f.chosen != nullptr) {
    const bool same_as_home_now =
        f.first_site == r["home_site"].get<std::string>() && as_int(r, "deferred_s") == 0;
    if (const json* home = json_member(r, "home_now"); home != nullptr && !same_as_home_now) {
      std::tie(f.home_g, f.home_pct) = saving(*f.chosen, *home);
      f.in_grams = has_grams(*f.chosen) && has_grams(*home);
    }
    // Against starting at once: shown where the best such option is not the choice itself.
    if (const json* now = json_member(r, "now_best");
        now != nullptr && ((*now)["site"] != f.first_site ||
                           as_int(*now, "start_offset_s") != as_int(*f.chosen, "start_offset_s"))) {
      std::tie(f.now_g, f.now_pct) = saving(*f.chosen, *now);
      f.now_in_grams = has_grams(*f.chosen) && has_grams(*now);
    }
  }
  const json* start = json_member(r, "start_s");
  const json* submit = json_member(r, "submit_s");
  if (start != nullptr && submit != nullptr && start->is_number() && submit->is_number()) {
    f.waited_s = to_int(*start) - to_int(*submit);
  }
  return f;
}

std::string saved_words(double v, double pct, bool grams) {
  if (std::fabs(v) < 0.5) return grams ? "the same expected carbon" : "the same forecast";
  if (!grams) {
    return fmt::format("a forecast {} gCO2/kWh ({}%) {}", number(std::fabs(v), 0),
                       number(std::fabs(pct), 0), v > 0 ? "lower" : "higher");
  }
  return fmt::format("{} g ({}%) {} expected", number(std::fabs(v), 0), number(std::fabs(pct), 0),
                     v > 0 ? "less" : "more");
}

std::vector<std::string> dispatch_sentences(const json& r) {
  std::vector<std::string> s;
  const std::string qos = r.value("qos", "BE");
  const std::string agent = r.value("agent", std::string("dispatch"));
  const std::string home = r["home_site"].get<std::string>();
  const FleetFigures f = fleet_figures(r);
  const int64_t deferred = as_int(r, "deferred_s");
  // Its data moves at once: a wait no longer than the move is the move's (the agent counts
  // whole seconds of it, the move rounds up), a longer one a deferral.
  const int64_t transfer = as_int(r, "transfer_s");
  std::string when;
  if (deferred > transfer) {
    when = fmt::format(", deferred {} s", deferred);
  } else if (transfer > 0) {
    when = fmt::format(", to start once its data has moved ({} s)", transfer);
  }
  const json* utc = json_member(r, "submit_utc");
  s.push_back(fmt::format("Job {} ({}, {}) was submitted at {}{} and went to {}{}.",
                          r["pod"].get<std::string>(), qos, describe_request(r["request"]), home,
                          utc != nullptr && utc->is_string()
                              ? fmt::format(" on {} UTC", utc->get<std::string>())
                              : std::string(),
                          f.first_site, when));
  if (r.contains("reason") && r["reason"].is_string()) {
    s.push_back(fmt::format("The {} agent's reason: {}.", agent, r["reason"].get<std::string>()));
  }
  // Why this site and start: what it expected there, against home now and against now.
  if (f.chosen != nullptr) {
    std::string why = fmt::format("At {} from +{} s it expected {}", f.first_site,
                                  as_int(*f.chosen, "start_offset_s"), option_figures(*f.chosen));
    const std::size_t priced = member_or_empty(r, "alternatives").size();
    if (priced > 1) {
      why += has_grams(*f.chosen)
                 ? fmt::format(", the best by the {} agent's measure of the {} sites it priced",
                               agent, priced)
                 : fmt::format(", the lowest forecast of the {} sites it priced", priced);
    }
    s.push_back(why + ".");
  }
  if (f.home_g) {
    s.push_back(fmt::format("Against staying at {} and starting now ({}), that is {}.", home,
                            option_figures(r["home_now"]),
                            saved_words(*f.home_g, *f.home_pct, f.in_grams)));
  }
  if (f.now_g) {
    const json& now = r["now_best"];
    s.push_back(
        fmt::format("Against the best start without waiting ({} from +{} s: {}), that is {}.",
                    now["site"].get<std::string>(), as_int(now, "start_offset_s"),
                    option_figures(now), saved_words(*f.now_g, *f.now_pct, f.now_in_grams)));
  }
  if (r.contains("carbon_now") && r["carbon_now"].is_object()) {
    std::vector<std::string> parts;
    for (const auto& [site, ci] : r["carbon_now"].items()) {
      parts.push_back(fmt::format("{} {}", site, number(ci.get<double>(), 0)));
    }
    s.push_back(
        fmt::format("Grid carbon intensity at submission (gCO2/kWh): {}.", fmt::join(parts, ", ")));
  }
  if (r.contains("alternatives") && r["alternatives"].is_array() && !r["alternatives"].empty()) {
    std::vector<std::string> parts;
    for (const json& a : r["alternatives"]) {
      parts.push_back(fmt::format("{} from +{} s: {}", a["site"].get<std::string>(),
                                  as_int(a, "start_offset_s"), option_figures(a)));
    }
    s.push_back(fmt::format("Best option per site: {}.", fmt::join(parts, "; ")));
  }
  if (qos == "BE" && r.contains("slack_s")) {
    s.push_back(fmt::format("It used {} s of its {} s slack.", deferred, as_int(r, "slack_s")));
  }
  // What then happened (in simulation; the live journal has no start), counted from its
  // submission.
  if (const json* again = json_member(r, "redispatch")) {
    s.push_back(fmt::format(
        "It had not started at {} by its latest start, {} s after its "
        "submission, and was sent again, to {}: {}.",
        (*again)["from_site"].get<std::string>(), as_int(*again, "at_s") - as_int(r, "submit_s"),
        (*again)["site"].get<std::string>(), (*again)["reason"].get<std::string>()));
  }
  const json* start = json_member(r, "start_s");
  if (start != nullptr && start->is_number() && f.waited_s) {
    std::string then = fmt::format("It started on {} {} s after its submission",
                                   r.value("chosen_node", std::string("a node")), *f.waited_s);
    const json* run_ci = json_member(r, "run_ci");
    const json* end = json_member(r, "end_s");
    if (run_ci != nullptr && end != nullptr && run_ci->is_number()) {
      then += fmt::format("; over its run of {} s the grid at {} averaged {} gCO2/kWh",
                          to_int(*end) - to_int(*start), r["site"].get<std::string>(),
                          number(run_ci->get<double>(), 0));
      const json* chosen = f.chosen;
      if (chosen != nullptr && !r.contains("redispatch")) {
        then +=
            fmt::format(" against {} forecast", number((*chosen)["forecast_ci"].get<double>(), 0));
      }
    }
    s.push_back(then + ".");
  } else if (r.contains("start_s") && r["start_s"].is_null() && r.contains("submit_s")) {
    s.push_back("It had not started when the run ended.");
  }
  return s;
}

// A GPU amount in words: "no GPU", "0.5 of a GPU", "a whole GPU", "2 GPUs".
std::string gpu_amount(int64_t milli) {
  if (milli <= 0) return "no GPU";
  if (milli > 1000) return fmt::format("{} GPUs", number(milli / 1000.0));
  return gpu_share(milli);
}

// One move of a record ("Pod P (... ) moved from A (GPU 0) to B (GPU 1)"), then `tail`.
std::string move_sentence(const json& mv, const std::string& tail) {
  const std::string from_gpus = gpu_indices(member_or_empty(mv, "from_gpus"));
  const std::string to_gpus = gpu_indices(member_or_empty(mv, "to_gpus"));
  return fmt::format("Pod {} ({} vCPU, {}) moved from {}{} to {}{}{}.",
                     mv["pod"].get<std::string>(), number(as_int(mv, "cpu_milli") / 1000.0),
                     gpu_amount(as_int(mv, "gpu_milli")), mv["from"].get<std::string>(),
                     from_gpus.empty() ? "" : " (" + from_gpus + ")", mv["to"].get<std::string>(),
                     to_gpus.empty() ? "" : " (" + to_gpus + ")", tail);
}

// A pod that fit nowhere, placed after moving others (rescued_by_moves).
std::vector<std::string> rescued_sentences(const json& r) {
  const json& m = r["rescued_by_moves"];
  const json& moves = member_or_empty(m, "moves");
  std::vector<std::string> s;
  const std::string gpus = gpu_indices(member_or_empty(m, "gpus"));
  s.push_back(fmt::format(
      "Pod {} ({}) fit no node as the cluster stood ({}); {} moved to make room, and it was "
      "placed on {}{} by {}.",
      r["pod"].get<std::string>(), describe_request(r["request"]),
      reason_list(member_or_empty(r, "reason_counts")),
      moves.size() == 1 ? std::string("one running pod was")
                        : fmt::format("{} running pods were", moves.size()),
      m["node"].get<std::string>(), gpus.empty() ? "" : ", " + gpus + ",",
      r.value("policy", std::string("the policy"))));
  for (const json& mv : moves) s.push_back(move_sentence(mv, ""));
  const json& freed = member_or_empty(m, "freed");
  s.push_back(fmt::format("On {} the moves freed {} on the GPUs it took, and {} vCPU.",
                          m["node"].get<std::string>(), gpu_amount(as_int(freed, "gpu_milli")),
                          number(as_int(freed, "cpu_milli") / 1000.0)));
  return s;
}

// A node emptied so that it sleeps (kind "drain").
std::vector<std::string> drain_sentences(const json& r) {
  const json& moves = member_or_empty(r, "moves");
  const json& e = member_or_empty(r, "estimate");
  std::vector<std::string> s;
  s.push_back(fmt::format(
      "At {} s, node {} was emptied so that it could sleep: {} would have kept it awake until "
      "{} s.",
      number(r["time_s"].get<double>(), 1), r["node"].get<std::string>(),
      moves.size() == 1 ? std::string("its one pod") : fmt::format("its {} pods", moves.size()),
      number(r["busy_until_s"].get<double>(), 1)));
  for (const json& mv : moves) {
    const int64_t lost = as_int(mv, "lost_s");
    s.push_back(move_sentence(
        mv, lost > 0 ? fmt::format(", losing {} s of run since its last checkpoint", lost)
                     : std::string(", losing no run time")));
  }
  const auto kwh = [&](const char* key) {
    return number(e.contains(key) && e[key].is_number() ? e[key].get<double>() : 0.0);
  };
  s.push_back(fmt::format(
      "Estimated: {} kWh of idle power spared, {} kWh saved by running the pods beside others, "
      "{} kWh of lost run time and {} kWh for nodes kept awake longer; {} kWh saved in all.",
      kwh("spared_kwh"), kwh("moved_saving_kwh"), kwh("lost_kwh"), kwh("kept_awake_kwh"),
      kwh("net_kwh")));
  return s;
}

std::vector<std::string> sentences(const json& r) {
  if (r.value("kind", std::string()) == "dispatch") return dispatch_sentences(r);
  if (r.value("kind", std::string()) == "drain") return drain_sentences(r);
  if (r.contains("rescued_by_moves") && r["rescued_by_moves"].is_object()) {
    std::vector<std::string> s = rescued_sentences(r);
    if (r.contains("time_s") && r["time_s"].is_number()) {
      s.front() = fmt::format("At {} s, {}", number(r["time_s"].get<double>(), 1), s.front());
    }
    return s;
  }
  std::vector<std::string> s = !r.contains("chosen_node") || r["chosen_node"].is_null()
                                   ? failed_sentences(r)
                                   : placed_sentences(r);
  if (r.contains("time_s") && r["time_s"].is_number()) {
    s.front() = fmt::format("At {} s, {}", number(r["time_s"].get<double>(), 1), s.front());
  }
  return s;
}

// Each record field the sentences read, with its type; `required` where they read it
// unguarded. Null is the writer's "none"; fields read through nlohmann's value(), which
// throws on null, are not `nullable`.
struct FieldRule {
  const char* key;
  JsonKind kind;
  bool required = false;
  bool nullable = true;
};

Status check_fields(const json& object, std::string_view where,
                    std::initializer_list<FieldRule> rules) {
  if (!object.is_object()) return Error{fmt::format("{}: expected an object", where)};
  for (const FieldRule& f : rules) {
    if (Status s = check_member(object, f.key, f.kind, where, f.required); !s.ok()) return s;
    if (!f.nullable && object.contains(f.key) && object[f.key].is_null()) {
      return Error{fmt::format("{}: null", member_path(where, f.key))};
    }
  }
  return Status::Ok();
}

// Every element of array `key` (when present) is an object obeying `rules`.
Status check_objects(const json& object, const char* key, std::string_view where,
                     std::initializer_list<FieldRule> rules) {
  if (Status s = check_elements(object, key, JsonKind::kObject, where); !s.ok()) return s;
  const json* array = json_member(object, key);
  if (array == nullptr) return Status::Ok();
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string item = fmt::format("{}[{}]", member_path(where, key), i);
    if (Status s = check_fields((*array)[i], item, rules); !s.ok()) return s;
  }
  return Status::Ok();
}

// The moves of a record (rescued_by_moves.moves, a drain's moves), as move_sentence reads them.
Status check_moves(const json& object, std::string_view where) {
  return check_objects(object, "moves", where,
                       {{"pod", JsonKind::kString, true, false},
                        {"from", JsonKind::kString, true, false},
                        {"to", JsonKind::kString, true, false},
                        {"from_gpus", JsonKind::kArray},
                        {"to_gpus", JsonKind::kArray},
                        {"gpu_milli", JsonKind::kNumber},
                        {"cpu_milli", JsonKind::kNumber}});
}

// Every value of object `key` (when present) has `kind`.
Status check_values(const json& object, const char* key, JsonKind kind, std::string_view where) {
  if (Status s = check_member(object, key, JsonKind::kObject, where); !s.ok()) return s;
  const json* map = json_member(object, key);
  if (map == nullptr) return Status::Ok();
  for (const auto& [name, value] : map->items()) {
    if (Status s = check_member(*map, name, kind, member_path(where, key)); !s.ok()) return s;
    if (value.is_null()) return Error{fmt::format("{}.{}: missing", member_path(where, key), name)};
  }
  return Status::Ok();
}

Status check_dispatch(const json& r) {
  if (Status s = check_fields(r, "",
                              {{"home_site", JsonKind::kString, true},
                               {"site", JsonKind::kString, true},
                               {"qos", JsonKind::kString, false, false},
                               {"agent", JsonKind::kString, false, false},
                               {"deferred_s", JsonKind::kNumber},
                               {"slack_s", JsonKind::kNumber},
                               {"reason", JsonKind::kString},
                               {"submit_s", JsonKind::kNumber},
                               {"submit_utc", JsonKind::kString},
                               {"start_s", JsonKind::kNumber},
                               {"end_s", JsonKind::kNumber},
                               {"run_ci", JsonKind::kNumber},
                               {"chosen_node", JsonKind::kString},
                               {"home_now", JsonKind::kObject},
                               {"now_best", JsonKind::kObject},
                               {"redispatch", JsonKind::kObject},
                               {"forecast", JsonKind::kObject},
                               {"actual", JsonKind::kObject}});
      !s.ok()) {
    return s;
  }
  if (Status s = check_values(r, "carbon_now", JsonKind::kNumber, ""); !s.ok()) return s;
  const std::initializer_list<FieldRule> option = {{"site", JsonKind::kString, true},
                                                   {"start_offset_s", JsonKind::kNumber},
                                                   {"forecast_ci", JsonKind::kNumber, true},
                                                   {"expected_g", JsonKind::kNumber},
                                                   {"cost", JsonKind::kNumber},
                                                   {"kw", JsonKind::kNumber}};
  for (const char* key : {"home_now", "now_best"}) {
    if (const json* o = json_member(r, key)) {
      if (Status s = check_fields(*o, key, option); !s.ok()) return s;
    }
  }
  if (const json* o = json_member(r, "redispatch")) {
    if (Status s = check_fields(*o, "redispatch",
                                {{"at_s", JsonKind::kNumber, true},
                                 {"from_site", JsonKind::kString, true},
                                 {"site", JsonKind::kString, true},
                                 {"reason", JsonKind::kString, true}});
        !s.ok()) {
      return s;
    }
  }
  for (const char* key : {"forecast", "actual"}) {
    if (const json* o = json_member(r, key)) {
      if (Status s = check_fields(*o, key,
                                  {{"step_s", JsonKind::kNumber, true},
                                   {"from_s", JsonKind::kNumber, true},
                                   {"sites", JsonKind::kObject, true}});
          !s.ok()) {
        return s;
      }
      for (const auto& [site, values] : (*o)["sites"].items()) {
        if (Status s = check_elements((*o)["sites"], site.c_str(), JsonKind::kNumber,
                                      member_path(key, "sites"));
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return check_objects(r, "alternatives", "", option);
}

Status check_placement(const json& r) {
  const bool placed = json_member(r, "chosen_node") != nullptr;
  if (Status s = check_fields(r, "",
                              {{"chosen_node", JsonKind::kString},
                               {"policy", JsonKind::kString, placed},
                               {"runner_up", JsonKind::kString},
                               {"tie_broken", JsonKind::kBool, has_runner_up(r)},
                               {"candidates", JsonKind::kArray},
                               {"diagnosis", JsonKind::kObject}});
      !s.ok()) {
    return s;
  }
  if (Status s = check_elements(r, "chosen_gpus", JsonKind::kInteger, ""); !s.ok()) return s;
  if (Status s = check_values(r, "reason_counts", JsonKind::kNumber, ""); !s.ok()) return s;
  if (Status s = check_elements(r, "chosen_gpus_before", JsonKind::kNumber, ""); !s.ok()) return s;
  if (Status s = check_values(r, "reason_counts_by_type", JsonKind::kObject, ""); !s.ok()) return s;
  if (const json* by_type = json_member(r, "reason_counts_by_type")) {
    for (const auto& [type, counts] : by_type->items()) {
      if (Status s =
              check_values(*by_type, type.c_str(), JsonKind::kNumber, "reason_counts_by_type");
          !s.ok()) {
        return s;
      }
    }
  }
  if (Status s = check_objects(r, "candidates", "",
                               {{"terms", JsonKind::kArray},
                                {"frag_delta_milli", JsonKind::kNumber},
                                {"power_delta_watts", JsonKind::kNumber}});
      !s.ok()) {
    return s;
  }
  if (const json* cands = json_member(r, "candidates")) {
    for (std::size_t i = 0; i < cands->size(); ++i) {
      if (Status s = check_objects((*cands)[i], "terms", fmt::format("candidates[{}]", i),
                                   {{"policy", JsonKind::kString, true}});
          !s.ok()) {
        return s;
      }
    }
  }
  if (const json* m = json_member(r, "rescued_by_moves")) {
    if (Status s = check_fields(*m, "rescued_by_moves",
                                {{"node", JsonKind::kString, true, false},
                                 {"gpus", JsonKind::kArray},
                                 {"moves", JsonKind::kArray, true, false},
                                 {"freed", JsonKind::kObject}});
        !s.ok()) {
      return s;
    }
    if (Status s = check_moves(*m, "rescued_by_moves"); !s.ok()) {
      return s;
    }
    if (const json* f = json_member(*m, "freed")) {
      if (Status s =
              check_fields(*f, "rescued_by_moves.freed",
                           {{"gpu_milli", JsonKind::kNumber}, {"cpu_milli", JsonKind::kNumber}});
          !s.ok()) {
        return s;
      }
    }
  }
  const json* d = json_member(r, "diagnosis");
  if (d == nullptr) return Status::Ok();
  if (Status s = check_fields(*d, "diagnosis",
                              {{"searched", JsonKind::kBool, false, false},
                               {"shrink", JsonKind::kObject},
                               {"move", JsonKind::kObject}});
      !s.ok()) {
    return s;
  }
  if (Status s = check_elements(*d, "split_gpu_examples", JsonKind::kString, "diagnosis");
      !s.ok()) {
    return s;
  }
  if (const json* k = json_member(*d, "shrink")) {
    if (Status s = check_fields(*k, "diagnosis.shrink",
                                {{"dimension", JsonKind::kString, true},
                                 {"node", JsonKind::kString, true},
                                 {"cut_pct", JsonKind::kNumber, true}});
        !s.ok()) {
      return s;
    }
  }
  if (const json* m = json_member(*d, "move")) {
    return check_fields(*m, "diagnosis.move",
                        {{"pod", JsonKind::kString, true}, {"node", JsonKind::kString, true}});
  }
  return Status::Ok();
}

Status check_drain(const json& r) {
  if (Status s = check_fields(r, "",
                              {{"node", JsonKind::kString, true, false},
                               {"time_s", JsonKind::kNumber, true, false},
                               {"busy_until_s", JsonKind::kNumber, true, false},
                               {"policy", JsonKind::kString},
                               {"moves", JsonKind::kArray, true, false},
                               {"estimate", JsonKind::kObject}});
      !s.ok()) {
    return s;
  }
  if (Status s = check_moves(r, ""); !s.ok()) return s;
  if (Status s = check_objects(r, "moves", "", {{"lost_s", JsonKind::kNumber}}); !s.ok()) {
    return s;
  }
  if (const json* e = json_member(r, "estimate")) {
    return check_fields(*e, "estimate",
                        {{"spared_kwh", JsonKind::kNumber},
                         {"moved_saving_kwh", JsonKind::kNumber},
                         {"lost_kwh", JsonKind::kNumber},
                         {"kept_awake_kwh", JsonKind::kNumber},
                         {"net_kwh", JsonKind::kNumber}});
  }
  return Status::Ok();
}

}  // namespace

Status check_decision_record(const json& r) {
  if (!r.is_object()) return Error{"not a JSON object"};
  if (const json* kind = json_member(r, "kind"); kind != nullptr && *kind == "drain") {
    return check_drain(r);
  }
  if (Status s = check_fields(r, "",
                              {{"pod", JsonKind::kString, true},
                               {"kind", JsonKind::kString, false, false},
                               {"request", JsonKind::kObject, true},
                               {"step", JsonKind::kNumber},
                               {"time_s", JsonKind::kNumber},
                               {"run", JsonKind::kObject}});
      !s.ok()) {
    return s;
  }
  if (Status s = check_elements(r["request"], "gpu_spec", JsonKind::kString, "request"); !s.ok()) {
    return s;
  }
  if (const json* run = json_member(r, "run")) {
    if (Status s = check_fields(*run, "run",
                                {{"policy", JsonKind::kString, false, false},
                                 {"agent", JsonKind::kString, false, false},
                                 {"seed", JsonKind::kNumber}});
        !s.ok()) {
      return s;
    }
  }
  const json* kind = json_member(r, "kind");
  return kind != nullptr && *kind == "dispatch" ? check_dispatch(r) : check_placement(r);
}

Result<json> parse_decision_record(std::string_view line, std::string_view where) {
  json r = parse_json_or_discarded(line);
  if (r.is_discarded()) return Error{fmt::format("{}: not a JSON record", where)};
  if (Status s = check_decision_record(r); !s.ok()) {
    return Error{fmt::format("{}: {}", where, s.message())};
  }
  return r;
}

bool is_failed_placement(const json& record) {
  const json* kind = json_member(record, "kind");
  const bool dispatch = kind != nullptr && *kind == "dispatch";
  const bool drain = kind != nullptr && *kind == "drain";
  return !dispatch && !drain && json_member(record, "chosen_node") == nullptr &&
         json_member(record, "rescued_by_moves") == nullptr;
}

bool record_about_pod(const json& record, std::string_view pod) {
  const json* own = json_member(record, "pod");
  if (own != nullptr && own->is_string() && own->get<std::string>() == pod) return true;
  const json* m = json_member(record, "rescued_by_moves");
  const json* moves = m != nullptr ? json_member(*m, "moves") : json_member(record, "moves");
  if (moves == nullptr || !moves->is_array()) return false;
  for (const json& mv : *moves) {
    const json* p = json_member(mv, "pod");
    if (p != nullptr && p->is_string() && p->get<std::string>() == pod) return true;
  }
  return false;
}

std::string sentence_number(double v, int decimals) {
  return number(v, decimals);
}

std::string explain_text(const json& record) {
  std::string out;
  for (const std::string& s : sentences(record)) {
    out += s;
    out += "\n";
  }
  return out;
}

json explain_facts(const json& record) {
  json facts;
  facts["pod"] = record.value("pod", std::string());
  const bool dispatch = record.value("kind", std::string()) == "dispatch";
  facts["placed"] =
      dispatch || (record.contains("chosen_node") && !record["chosen_node"].is_null());
  for (const char* key : {"step",
                          "time_s",
                          "policy",
                          "request",
                          "nodes_total",
                          "feasible_nodes",
                          "reason_counts",
                          "chosen_node",
                          "chosen_gpus",
                          "score",
                          "runner_up",
                          "runner_up_score",
                          "margin",
                          "tie_broken",
                          "frag_delta_milli",
                          "power_delta_watts",
                          "diagnosis",
                          "rescued_by_moves",
                          "node",
                          "busy_until_s",
                          "moves",
                          "estimate",
                          "kind",
                          "agent",
                          "home_site",
                          "site",
                          "deferred_s",
                          "slack_s",
                          "alternatives",
                          "carbon_now",
                          "qos",
                          "reason",
                          "submit_s",
                          "start_s",
                          "end_s",
                          "run_ci",
                          "home_now",
                          "now_best",
                          "redispatch"}) {
    if (record.contains(key)) facts[key] = record[key];
  }
  if (dispatch) {
    // The figures the sentences derive; the forecast curves stay out (they are the chart's).
    const FleetFigures f = fleet_figures(record);
    if (f.home_g) {
      facts[f.in_grams ? "saving_vs_home_g" : "saving_vs_home_gco2_per_kwh"] = *f.home_g;
      facts["saving_vs_home_pct"] = *f.home_pct;
    }
    if (f.now_g) {
      facts[f.now_in_grams ? "saving_vs_now_g" : "saving_vs_now_gco2_per_kwh"] = *f.now_g;
      facts["saving_vs_now_pct"] = *f.now_pct;
    }
    if (f.waited_s) facts["waited_s"] = *f.waited_s;
  }
  facts["sentences"] = sentences(record);
  if (is_failed_placement(record)) {
    json suggestions = json::array();
    failed_sentences(record, &suggestions);
    facts["suggestions"] = std::move(suggestions);
  }
  return facts;
}

}  // namespace greensched::explain
