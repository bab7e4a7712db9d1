#include "greensched/serve/serve_config.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::serve {
namespace {

using nlohmann::json;

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

}  // namespace

Result<ServeConfig> parse_serve_config(std::string_view text, const std::string& source,
                                       const std::string& base_dir) {
  json j = parse_json_or_discarded(text);
  if (j.is_discarded() || !j.is_object()) {
    return Error{fmt::format("{}: not a JSON object", source)};
  }
  ServeConfig c;
  auto bad = [&](std::string_view key, std::string_view want) {
    return Error{fmt::format("{}: {}: must be {}", source, key, want)};
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "policy" || key == "gpu_select" || key == "target_pods" || key == "power_model" ||
        key == "unknown_nodes") {
      if (!v.is_string()) return bad(key, "a string");
      const std::string s = v.get<std::string>();
      if (key == "policy") {
        c.policy = s;
      } else if (key == "gpu_select") {
        c.gpu_select = s;
      } else if (key == "target_pods") {
        c.target_pods = resolve(base_dir, s);
      } else if (key == "power_model") {
        c.power_model = resolve(base_dir, s);
      } else if (s == "add" || s == "reject") {
        c.extender.unknown_nodes = s == "add" ? UnknownNodes::kAdd : UnknownNodes::kReject;
      } else {
        return bad(key, "\"add\" or \"reject\"");
      }
    } else if (key == "target_coverage" || key == "pue" || key == "read_timeout_seconds" ||
               key == "write_timeout_seconds") {
      if (!v.is_number()) return bad(key, "a number");
      const double d = v.get<double>();
      if (key == "target_coverage") {
        if (!(d > 0 && d <= 1)) return bad(key, "in (0, 1]");
        c.target_coverage = d;
      } else if (key == "pue") {
        if (!(d >= 1.0 && d < 10)) return bad(key, ">= 1.0");
        c.pue = d;
      } else if (!(d > 0 && d <= 3600)) {
        return bad(key, "seconds in (0, 3600]");
      } else if (key == "read_timeout_seconds") {
        c.server.read_timeout_seconds = d;
      } else {
        c.server.write_timeout_seconds = d;
      }
    } else if (key == "seed" || key == "pending_pods" || key == "compact_every" ||
               key == "threads" || key == "max_body_bytes" || key == "keep_alive_seconds" ||
               key == "assume_ttl_ms") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) return bad(key, "a non-negative integer");
      const auto n = v.get<int64_t>();
      if (key == "seed") {
        c.seed = static_cast<uint64_t>(n);
      } else if (key == "pending_pods") {
        if (n < 1) return bad(key, "at least 1");
        c.extender.pending_capacity = static_cast<std::size_t>(n);
      } else if (key == "compact_every") {
        if (n < 1) return bad(key, "at least 1");
        c.extender.compact_every = static_cast<uint64_t>(n);
      } else if (key == "assume_ttl_ms") {
        if (n > 600000) return bad(key, "0..600000");
        c.extender.assume_ttl_ms = static_cast<int>(n);
      } else if (key == "threads") {
        if (n < 1 || n > 1024) return bad(key, "1..1024");
        c.server.threads = static_cast<int>(n);
      } else if (key == "max_body_bytes") {
        if (n < 1024) return bad(key, "at least 1024");
        c.server.max_body_bytes = static_cast<std::size_t>(n);
      } else {
        if (n < 1 || n > 3600) return bad(key, "1..3600");
        c.server.keep_alive_seconds = static_cast<int>(n);
      }
    } else if (key == "bind_wait_ms") {
      return Error{fmt::format(
          "{}: 'bind_wait_ms' is gone: filters no longer wait for binds; prioritize holds a "
          "pod's room until its bind instead (\"assume_ttl_ms\", default 5000)",
          source)};
    } else {
      return Error{fmt::format("{}: unknown key '{}'", source, key)};
    }
  }
  return c;
}

Result<ServeConfig> load_serve_config(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{text.error()};
  return parse_serve_config(text.value(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace greensched::serve
