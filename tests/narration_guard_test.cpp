// The guard on a narrator's reply (explain/narration_guard.hpp): unfaithful replies (changed
// counts, invented percentages, wrong or invented names, misattributed values, cut-off replies,
// numbers in the wrong unit) are all refused, each for its reason; faithful paraphrases
// (other words, the template's rounding, a fact at the precision written, number words) are
// all accepted. The facts are explain_facts' of a placed pod, a failed pod and a dispatch
// decision of the built-in workload and the 4-region example fleet.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "greensched/explain/narration_guard.hpp"
#include "greensched/explain/placeholders.hpp"

namespace greensched::explain {
namespace {

using nlohmann::json;

const json& placed() {
  static const json facts = json::parse(R"({
    "chosen_gpus": [0], "chosen_node": "builtin-node-0817", "feasible_nodes": 1071,
    "frag_delta_milli": -135.97733711048159, "margin": 7, "nodes_total": 1213, "placed": true,
    "pod": "builtin-pod-4522", "policy": "fgd", "power_delta_watts": 165.0,
    "reason_counts": {"insufficient cpu": 140, "insufficient fully free GPUs": 2},
    "request": {"cpu_milli": 18708, "gpu_milli": 1000, "gpu_spec": [], "memory_mib": 64512, "num_gpu": 1},
    "runner_up": "builtin-node-1071", "runner_up_score": 80, "score": 87,
    "sentences": [
      "Pod builtin-pod-4522 (18.71 vCPU, 63 GiB memory, 1 whole GPU) was placed on builtin-node-0817, GPU 0, by fgd.",
      "It beat the runner-up builtin-node-1071 by 7 points: 87 against 80.",
      "Score terms on builtin-node-0817: fgd raw score 87, normalised 87.",
      "The placement changes the node's GPU fragmentation by -136 milli-GPU; on the runner-up it would have changed by -136.",
      "It adds 165 W to the node's power (the runner-up: 455 W).",
      "1071 of 1213 nodes could host it; the other 142 could not: 140 insufficient cpu, 2 insufficient fully free GPUs."
    ],
    "step": 100, "tie_broken": false, "time_s": null})");
  return facts;
}

const json& failed() {
  static const json facts = json::parse(R"({
    "chosen_gpus": [], "chosen_node": null,
    "diagnosis": {"move": {"frees_cpu_milli": 12500, "frees_gpu_milli": 0, "frees_memory_mib": 57344,
                           "node": "builtin-node-1212", "pod": "builtin-pod-3389"},
                  "shrink": {"cut_pct": 13.808917197452232, "dimension": "cpu_milli", "from": 15700,
                             "node": "builtin-node-1212", "to": 13532},
                  "split_gpu_examples": [], "split_gpu_nodes": 0},
    "feasible_nodes": 0, "nodes_total": 1213, "placed": false, "pod": "builtin-pod-5439", "policy": "fgd",
    "reason_counts": {"insufficient cpu": 882, "insufficient fully free GPUs": 323, "insufficient memory": 8},
    "request": {"cpu_milli": 15700, "gpu_milli": 1000, "gpu_spec": [], "memory_mib": 58368, "num_gpu": 1},
    "sentences": [
      "Pod builtin-pod-5439 (15.7 vCPU, 57 GiB memory, 1 whole GPU) could not be placed.",
      "0/1213 nodes are available: 882 insufficient cpu, 323 insufficient fully free GPUs, 8 insufficient memory.",
      "No node has the GPU share it asks for split across GPUs: fragmentation is not the cause.",
      "Smallest change: it would fit on builtin-node-1212 if it asked for 13.53 vCPU instead of 15.7 vCPU (13.8% less).",
      "Or moving pod builtin-pod-3389 (12.5 vCPU, no GPU) off builtin-node-1212 would make room there."
    ],
    "step": 7883, "time_s": null})");
  return facts;
}

const json& dispatched() {
  static const json facts = json::parse(R"({
    "agent": "green",
    "alternatives": [
      {"expected_g": 141.7398952, "forecast_ci": 61.612547222222226, "site": "gb", "start_offset_s": 21},
      {"expected_g": 288.68537599999996, "forecast_ci": 143.1971111111111, "site": "de-lu", "start_offset_s": 0},
      {"expected_g": 917.8113144000001, "forecast_ci": 227.3706916666667, "site": "us-cal", "start_offset_s": 21}],
    "carbon_now": {"de-lu": 191.27, "gb": 116.86, "us-cal": 191.43},
    "deferred_s": 21, "home_site": "de-lu", "kind": "dispatch", "placed": true, "pod": "default/train-1",
    "request": {"cpu_milli": 8000, "gpu_milli": 1000, "gpu_spec": [], "memory_mib": 65536, "num_gpu": 2},
    "sentences": [
      "Job default/train-1 (BE, 8 vCPU, 64 GiB memory, 2 whole GPUs) was submitted at de-lu and went to gb.",
      "The green agent's reason: moves to gb: 142 g expected (0.67 kW at 62 gCO2/kWh) vs 289 g (143 gCO2/kWh) at home now; deferred 21 s.",
      "Grid carbon intensity at submission (gCO2/kWh): de-lu 191, gb 117, us-cal 191.",
      "Best option per site: gb from +21 s: 62 gCO2/kWh forecast, 142 g expected; de-lu from +0 s: 143 gCO2/kWh forecast, 289 g expected; us-cal from +21 s: 227 gCO2/kWh forecast, 918 g expected.",
      "It used 21 s of its 14400 s slack."
    ],
    "site": "gb", "slack_s": 14400, "step": 0})");
  return facts;
}

struct Case {
  const json* facts;
  std::string reply;
  std::string reason;  // the refusal's reason; "" for a faithful reply
};

TEST(NarrationGuard, UnfaithfulRepliesAreRefusedEachForItsReason) {
  const std::vector<Case> cases = {
      // Invented numbers.
      {&placed(), "Power was reduced by 25% when the pod was placed.", "25% is not in the facts"},
      {&placed(), "The placement increased power by 11.5 percent.", "11.5 is not in the facts"},
      {&placed(), "The pod went to builtin-node-0817 and saved 300 W.", "300 is not in the facts"},
      {&placed(), "About 1100 nodes could host it.", "1100 is not in the facts"},
      {&failed(), "It would fit if it asked for 12 vCPU.", "12 is not in the facts"},
      {&failed(), "About 45% of the nodes lacked cpu.", "45% is not in the facts"},
      {&dispatched(), "Moving to gb saves 60 percent of the carbon.", "60 is not in the facts"},
      {&dispatched(), "It waits 30 s for a cleaner hour.", "30 is not in the facts"},
      // Changed counts.
      {&placed(), "Of 1213 nodes, 1072 could host the pod.", "1072 is not in the facts"},
      {&failed(), "883 nodes had too little cpu.", "883 is not in the facts"},
      {&failed(), "Nine nodes lacked memory.", "Nine is not in the facts"},
      {&placed(), "Three nodes had no fully free GPU.", "Three is not in the facts"},
      // Wrong or invented names.
      {&placed(), "The pod was placed on builtin-node-0818.",
       "builtin-node-0818 is not a name in the facts"},
      {&placed(), "It runs on an A100 in builtin-node-0817.", "A100 is not a name in the facts"},
      {&failed(), "Moving builtin-pod-3390 would make room.",
       "builtin-pod-3390 is not a name in the facts"},
      {&dispatched(), "The job went to eu-west2 instead of de-lu.",
       "eu-west2 is not a name in the facts"},
      {&dispatched(), "Job default/train-2 moved to gb.",
       "default/train-2 is not a name in the facts"},
      // Misattributed values.
      {&placed(), "The runner-up scored 87.", "87 is not the runner-up's score in the facts"},
      {&placed(), "builtin-node-1071 had a score of 87, just behind.",
       "87 is not the runner-up's score in the facts"},
      {&placed(), "The chosen node scored 80.", "80 is not the score in the facts"},
      {&placed(), "It adds 165 GiB to the node.", "165 GiB is not a value the facts give in GiB"},
      {&failed(), "The pod asks for 57 vCPU.", "57 vCPU is not a value the facts give in vCPU"},
      {&dispatched(), "At gb it emits 62 g.", "62 g is not a value the facts give in g"},
      {&dispatched(), "Its slack is 21 s.", "21 is not the slack in the facts"},
      {&dispatched(), "It waited 14400 W.", "14400 W is not a value the facts give in W"},
      // Numbers beside the wrong quantity, or rounded past what the facts say.
      {&placed(), "The pod was placed on builtin-node-0817 with a margin of 9 points.",
       "9 is not in the facts"},
      {&placed(), "The margin over the runner-up was 80 points.",
       "80 is not the margin in the facts"},
      {&failed(), "Shrinking it by 14.2% would let it fit.", "14.2% is not in the facts"},
      {&failed(), "Shrinking to 13.5 vCPU lets it fit on builtin-node-1211.",
       "builtin-node-1211 is not a name in the facts"},
      {&dispatched(), "The forecast at gb was 61.7 gCO2/kWh.", "61.7 is not in the facts"},
      {&dispatched(), "gb's grid was at 117 g.", "117 g is not a value the facts give in g"},
  };
  int refused = 0;
  for (const Case& c : cases) {
    const GuardVerdict v = check_narration(c.reply, *c.facts, "stop");
    EXPECT_FALSE(v.accepted) << c.reply;
    EXPECT_EQ(v.reason, c.reason) << c.reply;
    refused += v.accepted ? 0 : 1;
  }
  EXPECT_GE(refused, 30);
}

TEST(NarrationGuard, ACutOffUnfinishedOrEmptyReplyIsRefused) {
  const std::string reply = "The pod was placed on builtin-node-0817 because";
  EXPECT_EQ(check_narration(reply, placed(), "length").reason,
            "the reply was cut off (finish_reason length)");
  EXPECT_EQ(check_narration(reply, placed(), "").reason,
            "the reply does not say that the model finished (no finish_reason)");
  // Ended by the model itself, halfway through a sentence.
  EXPECT_EQ(check_narration(reply, placed(), "stop").reason, "the reply stops mid-sentence");
  EXPECT_EQ(check_narration("87 80 7.", placed(), "stop").reason, "the reply has no words");
  EXPECT_EQ(check_narration("", placed(), "stop").reason, "the reply has no words");
}

TEST(NarrationGuard, FaithfulParaphrasesAreAccepted) {
  const std::vector<Case> cases = {
      {&placed(),
       "builtin-pod-4522 went to builtin-node-0817 (GPU 0): its score of 87 beat the runner-up, "
       "builtin-node-1071, which scored 80.",
       ""},
      {&placed(), "FGD put the pod on builtin-node-0817, 7 points ahead of builtin-node-1071.", ""},
      {&placed(),
       "The pod asks for 18.71 vCPU, 63 GiB of memory and one whole GPU; placing it adds 165 W.",
       ""},
      {&placed(),
       "Of the 1,213 nodes, 1071 could host it; 140 lacked cpu and two lacked a fully free GPU.",
       ""},
      {&placed(), "On the runner-up it would have added 455 W instead of 165 W.", ""},
      {&placed(), "It lowers the node's GPU fragmentation by 136 milli-GPU.", ""},
      {&failed(),
       "No node could take builtin-pod-5439: 882 nodes lacked cpu, 323 lacked fully free GPUs and "
       "8 lacked memory.",
       ""},
      {&failed(),
       "Fragmentation is not the cause. Asking for 13.53 vCPU instead of 15.7 (about 14% less) "
       "would fit it on builtin-node-1212.",
       ""},
      {&failed(),
       "Moving builtin-pod-3389, which uses 12.5 vCPU, off builtin-node-1212 would also make room.",
       ""},
      {&dispatched(),
       "default/train-1 left de-lu for gb, where it is expected to emit 142 g instead of 289 g, at "
       "62 gCO2/kWh rather than 143.",
       ""},
      {&dispatched(),
       "It waits 21 s of its 14,400 s slack for gb; us-cal would have emitted 918 g.", ""},
      {&dispatched(), "At submission the grid was at 191 gCO2/kWh in de-lu and 117 in gb.", ""},
  };
  for (const Case& c : cases) {
    const GuardVerdict v = check_narration(c.reply, *c.facts, "stop");
    EXPECT_TRUE(v.accepted) << c.reply << " | refused: " << v.reason;
    EXPECT_FALSE(v.used.empty()) << c.reply;
  }
  EXPECT_GE(cases.size(), 10U);
}

// Replies of a real model (SmolLM2-135M-Instruct through llama.cpp's server, captured by the
// narrator test from explain --json), each with the verdict it must get: two stop halfway
// through a sentence, one says nothing checkable ("The server is a server of the server.": no
// number, no name). Each reply cut at its last full sentence is accepted (they retell the
// template), and that text with its first number changed is refused.
TEST(NarrationGuard, ARealModelsRepliesAndTheirAlteredCopies) {
  std::ifstream in(std::string(GREENSCHED_SOURCE_DIR) + "/tests/narrator/smollm2_replies.jsonl");
  ASSERT_TRUE(in) << "tests/narrator/smollm2_replies.jsonl";
  int altered_refused = 0;
  for (std::string line; std::getline(in, line);) {
    const json r = json::parse(line);
    const std::string reply = r["reply"];
    const GuardVerdict v = check_narration(reply, r["facts"], "stop");
    EXPECT_EQ(v.accepted ? "accepted" : v.reason, r["verdict"].get<std::string>()) << reply;
    const std::string whole = reply.substr(0, reply.find_last_of('.') + 1);
    const GuardVerdict w = check_narration(whole, r["facts"], "stop");
    EXPECT_TRUE(w.accepted) << whole << " | refused: " << w.reason;
    std::smatch m;
    if (!std::regex_search(whole, m, std::regex(R"((^|[ (])(\d+)([ ,.)]))"))) continue;
    const std::string altered = m.prefix().str() + m[1].str() +
                                std::to_string(std::stoll(m[2].str()) + 1) + m[3].str() +
                                m.suffix().str();
    const GuardVerdict a = check_narration(altered, r["facts"], "stop");
    EXPECT_FALSE(a.accepted) << altered;
    altered_refused += a.accepted ? 0 : 1;
  }
  EXPECT_GE(altered_refused, 2);
}

// The facts a reply cites are listed in order, with their units.
TEST(NarrationGuard, TheFactsUsedAreListed) {
  const GuardVerdict v = check_narration(
      "builtin-pod-4522 went to builtin-node-0817, adding 165 W.", placed(), "stop");
  ASSERT_TRUE(v.accepted) << v.reason;
  EXPECT_EQ(v.used, (std::vector<std::string>{"builtin-pod-4522", "builtin-node-0817", "165 W"}));
}

// The placeholder values are the facts as the template writes them, by key path.
TEST(Placeholders, ValuesAreTheFactsInTheTemplatesFormat) {
  const json values = placeholder_values(placed());
  EXPECT_EQ(values["pod"], "builtin-pod-4522");
  EXPECT_EQ(values["request.cpu_milli"], "18.71 vCPU");
  EXPECT_EQ(values["request.memory_mib"], "63 GiB");
  EXPECT_EQ(values["request.gpu_milli"], "1 whole GPU");
  EXPECT_EQ(values["power_delta_watts"], "165 W");
  EXPECT_EQ(values["frag_delta_milli"], "-136 milli-GPU");
  EXPECT_EQ(values["chosen_gpus[0]"], "0");
  EXPECT_EQ(values["runner_up_score"], "80");
  EXPECT_FALSE(values.contains("sentences[0]"));
  EXPECT_FALSE(values.contains("tie_broken"));
  const json dispatch = placeholder_values(dispatched());
  EXPECT_EQ(dispatch["alternatives[0].expected_g"], "142 g");
  EXPECT_EQ(dispatch["alternatives[0].forecast_ci"], "62 gCO2/kWh");
  EXPECT_EQ(dispatch["carbon_now.gb"], "117 gCO2/kWh");
  EXPECT_EQ(dispatch["slack_s"], "14400 s");
  // The template with its values as placeholders: longest first, whole tokens only.
  EXPECT_EQ(with_placeholders("It beat the runner-up builtin-node-1071 by 7 points: 87 against "
                              "80; it asks 18.71 vCPU, not 187.",
                              values),
            "It beat the runner-up {runner_up} by {margin} points: {score} against "
            "{runner_up_score}; it asks {request.cpu_milli}, not 187.");
  auto filled = fill_placeholders("{pod} scored {score}.", values);
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled.value(), "builtin-pod-4522 scored 87.");
  EXPECT_EQ(fill_placeholders("{nosuch} scored.", values).error(), "{nosuch} names no fact");
  EXPECT_EQ(fill_placeholders("a { brace", values).error(),
            "a brace that is not a placeholder: '{ brace'");
}

// Replies in the placeholder JSON (or what came back instead of it) go through the same guard
// after their values are filled in: broken JSON, unknown placeholders and cited keys, a
// misattributed placeholder and prose with unasked-for placeholders are refused; faithful ones
// are accepted with their text filled in.
TEST(Placeholders, RepliesInTheJsonAskedForAreFilledAndChecked) {
  const std::vector<Case> refused = {
      {&placed(), R"({"text": "{pod} went to {chosen_node}.", "facts": ["pod"])",
       "the reply is broken JSON"},
      {&placed(), "```json\n{\"text\": \"{pod} went to {chosen_node}.\"}\n```",
       "the reply is broken JSON"},
      {&placed(), R"({"facts": ["pod"]})", "the reply is JSON without a \"text\" string"},
      {&placed(), R"({"text": "{pod} went to {best_node}.", "facts": ["pod"]})",
       "{best_node} names no fact"},
      {&placed(), R"({"text": "{pod} went to {chosen_node}.", "facts": ["pod", "winner"]})",
       "the reply cites \"winner\", which is not a fact"},
      {&placed(), R"({"text": "The runner-up scored {score}.", "facts": ["score"]})",
       "87 is not the runner-up's score in the facts"},
      {&placed(), R"({"text": "{pod} saved 25% of the power.", "facts": ["pod"]})",
       "25% is not in the facts"},
      {&placed(), R"({"text": "{pod} went to {chosen_node}", "facts": []})",
       "the reply stops mid-sentence"},
      {&dispatched(), R"({"text": "Its slack was {deferred_s}.", "facts": []})",
       "21 is not the slack in the facts"},
  };
  for (const Case& c : refused) {
    const GuardVerdict v = check_reply(c.reply, "stop", *c.facts, true);
    EXPECT_FALSE(v.accepted) << c.reply;
    EXPECT_EQ(v.reason, c.reason) << c.reply;
  }
  // Placeholders in prose that was asked as prose: the model invented the syntax.
  EXPECT_EQ(check_reply("{pod} went to {chosen_node}.", "stop", placed(), false).reason,
            "the reply holds placeholders in prose");

  const GuardVerdict v = check_reply(
      R"({"text": "{pod} went to {chosen_node}: {score} against {runner_up_score} for {runner_up}.", "facts": ["pod", "chosen_node", "score"]})",
      "stop", placed(), true);
  ASSERT_TRUE(v.accepted) << v.reason;
  EXPECT_EQ(v.text,
            "builtin-pod-4522 went to builtin-node-0817: 87 against 80 for "
            "builtin-node-1071.");
  EXPECT_EQ(v.used.front(), "pod");
  // Prose where JSON was asked: its placeholders filled, or as it is; the same guard.
  EXPECT_TRUE(check_reply("{pod} went to {chosen_node}.", "stop", placed(), true).accepted);
  const GuardVerdict prose = check_reply("It went to builtin-node-0817.", "stop", placed(), true);
  EXPECT_TRUE(prose.accepted) << prose.reason;
  EXPECT_EQ(prose.text, "It went to builtin-node-0817.");
  EXPECT_EQ(check_reply(R"({"text": "It went on.", "facts": []})", "length", placed(), true).reason,
            "the reply was cut off (finish_reason length)");
}

}  // namespace
}  // namespace greensched::explain
