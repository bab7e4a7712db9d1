// One decision narrated and checked: the narrator's reply (narrator.hpp) through the guard
// (placeholders.hpp check_reply, narration_guard.hpp). Every front that shows narration (the
// explain command, --ask, the report) goes through here, so they all show the same and refuse
// the same.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "greensched/explain/narration_guard.hpp"
#include "greensched/explain/narrator.hpp"

namespace greensched::explain {

struct CheckedNarration {
  std::optional<GuardVerdict> verdict;  // absent where no reply came (an error in notes)
  std::vector<std::string> notes;       // one line each, for stderr: errors, refusals, a
                                        // refused chart
  std::string reply;                    // the message content as the server gave it
  std::string finish_reason;
  bool accepted() const { return verdict && verdict->accepted; }
};

CheckedNarration narrate_checked(const NarratorConfig& config, const NarratorInfo& info,
                                 const nlohmann::json& facts, const std::string& template_text,
                                 const std::string& png = "");

// The facts with the narration's outcome added, as `explain --json` prints them: "narration"
// and "narration_facts" where accepted, "narration_rejected" where refused.
void add_narration(nlohmann::json& facts, const CheckedNarration& narration);

}  // namespace greensched::explain
