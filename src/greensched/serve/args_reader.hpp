// ExtenderArgs from request text, with a fast path for the form kube-scheduler sends with
// nodeCacheCapable: true: {"Pod": {...}, "Nodes": null, "NodeNames": ["n1", ...]}. The
// general JSON parser spends most of a prioritize call's time on the list of (up to thousands
// of) node names; the fast path splits the top-level object itself, reads a list of plain
// ASCII names directly, and leaves the Pod to the JSON parser. Anything else (node objects,
// escapes or non-ASCII in names, duplicate or unknown keys, malformed text) takes the general
// path, so both accept and refuse exactly the same inputs with the same messages (the fuzz
// target checks this).
#pragma once

#include <string_view>

#include "greensched/core/status.hpp"
#include "greensched/serve/extender_protocol.hpp"

namespace greensched::serve {

Result<ExtenderArgs> read_extender_args(std::string_view body);

// The general path alone (for the fuzz target's comparison).
Result<ExtenderArgs> read_extender_args_slow(std::string_view body);

}  // namespace greensched::serve
