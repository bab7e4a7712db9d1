// Kubernetes resource quantities ("500m", "2", "1.5", "1Gi", "512Mi", "1G", "1e3", plain
// bytes), parsed by the rules of k8s.io/apimachinery resource.Quantity: a signed decimal number
// followed by a binary-SI suffix (Ki Mi Gi Ti Pi Ei), a decimal-SI suffix (n u m "" k M G T P
// E) or a decimal exponent (e3, E-2). Kubernetes rounds a quantity up when it reads it as an
// integer (Value, MilliValue), so these functions return ceil(value x scale), exactly, in
// integer arithmetic. Every malformed or out-of-range text is an error, never an exception.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "greensched/core/status.hpp"

namespace greensched::serve {

// The largest magnitude a parsed quantity may have after scaling (2^62).
inline constexpr int64_t kMaxQuantity = int64_t{1} << 62;

// ceil(value x scale) of a quantity text; scale is 1 for bytes/counts, 1000 for milli-units.
Result<int64_t> parse_quantity(std::string_view text, int64_t scale = 1);

// The same for a JSON value: a quantity string, or a JSON number (read through its text).
Result<int64_t> quantity_from_json(const nlohmann::json& value, int64_t scale = 1);

// Bytes to MiB, rounded up.
inline int64_t bytes_to_mib(int64_t bytes) {
  return bytes <= 0 ? 0 : (bytes - 1) / (int64_t{1} << 20) + 1;
}

}  // namespace greensched::serve
