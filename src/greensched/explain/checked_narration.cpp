#include "greensched/explain/checked_narration.hpp"

#include <fmt/format.h>

#include "greensched/explain/placeholders.hpp"

namespace greensched::explain {

CheckedNarration narrate_checked(const NarratorConfig& config, const NarratorInfo& info,
                                 const nlohmann::json& facts, const std::string& template_text,
                                 const std::string& png) {
  CheckedNarration out;
  auto told = narrate(config, info, facts, template_text, png);
  if (!told.ok()) {
    out.notes.push_back(fmt::format("{}; showing the template text only", told.error()));
    return out;
  }
  out.notes = told.value().notes;
  out.reply = told.value().text;
  out.finish_reason = told.value().finish_reason;
  out.verdict =
      check_reply(told.value().text, told.value().finish_reason, facts, told.value().asked_json);
  if (!out.verdict->accepted) {
    out.notes.push_back(fmt::format("narration refused: {}", out.verdict->reason));
  }
  return out;
}

void add_narration(nlohmann::json& facts, const CheckedNarration& narration) {
  if (narration.accepted()) {
    facts["narration"] = narration.verdict->text;
    facts["narration_facts"] = narration.verdict->used;
  } else if (narration.verdict) {
    facts["narration_rejected"] = narration.verdict->reason;
  }
}

}  // namespace greensched::explain
