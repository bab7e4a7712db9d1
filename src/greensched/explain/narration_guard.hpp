// The guard on a narrator's reply: a generative model may phrase an explanation, never invent
// one. A reply is shown only when all of these hold (else it is refused, with the first reason
// found, and the template's text stands):
//
//   finished    the model stopped by itself (finish_reason "stop"), at the end of a
//               sentence: a reply cut off at max_tokens, or ended early by the model, may
//               stop halfway through a claim;
//   numbers     every number in it is one of the facts': printed in the template's sentences
//               (so the template's rounding and units hold), or a value of the facts at the
//               precision the reply writes it (14 % for a cut_pct of 13.81; never 14.2 %).
//               Number words (two to twelve) count as numbers;
//   names       every name-like token (letters and digits together, as pod and node names,
//               GPU models and zones are) is a string of the facts or a word of the template;
//   units       a number written with a unit (W, kW, GiB, vCPU, GPUs, g, gCO2/kWh, %, s, h,
//               nodes ...) is one the facts give in that unit;
//   quantities  a number written after a quantity's name (score, power, carbon, slack ...)
//               within the same clause is a value of that quantity, and of the role the clause
//               names when the facts have one (the runner-up's score, not the chosen node's).
//
// What it cannot guarantee: that the sentence around the numbers says what the facts say
// (a true number in a false claim: "it saved 289 g" where 289 g is what it emits), or that
// a name without digits (a made-up zone "us-east") is in the facts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace greensched::explain {

struct GuardVerdict {
  bool accepted = false;
  std::string reason;             // why it was refused ("" when accepted)
  std::vector<std::string> used;  // the facts' numbers and names the reply cites, in order
  std::string text;               // what may be shown: the reply (placeholders filled in)
};

// `facts` as explain_facts gives them (its "sentences" are the template's text);
// `finish_reason` as the chat completion's choice says (empty: not given, refused).
GuardVerdict check_narration(std::string_view reply, const nlohmann::json& facts,
                             std::string_view finish_reason);

}  // namespace greensched::explain
