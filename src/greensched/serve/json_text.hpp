// Writing JSON text directly into a string, for the replies on the hot path (a prioritize
// reply over 1213 nodes is 1213 small objects: building them as nlohmann::json values and
// dumping them took 1.4 ms, writing the text takes a few microseconds per node).
#pragma once

#include <string>
#include <string_view>

namespace greensched::serve {

// Appends `s` as a JSON string literal: quotes, escapes, and invalid UTF-8 replaced by U+FFFD
// (so a reply is always valid JSON, whatever bytes a message quotes).
void append_json_string(std::string& out, std::string_view s);

}  // namespace greensched::serve
