#include "greensched/report/shard_files.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "greensched/core/text_file.hpp"

namespace greensched::report {
namespace {

constexpr const char* kFormat = "greensched-shard/1";

std::string manifest_path(const std::string& dir) {
  return dir + "/" + kShardManifest;
}

// A file's header line (with its newline) and the rest.
std::pair<std::string_view, std::string_view> split_header(std::string_view text) {
  const std::size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return {text, {}};
  return {text.substr(0, nl + 1), text.substr(nl + 1)};
}

}  // namespace

ShardManifest make_shard_manifest(std::string command, std::string_view description,
                                  const sim::Shard& shard, const std::vector<std::string>& run_ids,
                                  std::vector<std::string> files) {
  ShardManifest m;
  m.command = std::move(command);
  m.fingerprint = sim::plan_fingerprint(description, run_ids);
  m.shard = shard;
  m.total_runs = run_ids.size();
  m.runs = sim::shard_range(shard, run_ids.size());
  m.run_ids.assign(run_ids.begin() + static_cast<std::ptrdiff_t>(m.runs.begin),
                   run_ids.begin() + static_cast<std::ptrdiff_t>(m.runs.end));
  m.files = std::move(files);
  return m;
}

Status write_shard_manifest(const std::string& dir, const ShardManifest& m) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["command"] = m.command;
  j["fingerprint"] = m.fingerprint;
  j["shard"] = m.shard.index;
  j["count"] = m.shard.count;
  j["total_runs"] = m.total_runs;
  j["runs"] = {m.runs.begin, m.runs.end};
  j["run_ids"] = m.run_ids;
  j["files"] = m.files;
  return write_text_files(dir, {{kShardManifest, j.dump(2) + "\n"}});
}

Result<ShardManifest> read_shard_manifest(const std::string& dir) {
  const std::string path = manifest_path(dir);
  auto text = read_file(path);
  if (!text.ok()) {
    return Error{fmt::format("{}: not a shard folder ({})", dir, text.status().message())};
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(text.value());
    if (j.value("format", "") != kFormat) {
      return Error{fmt::format("{}:1: format is not {}", path, kFormat)};
    }
    ShardManifest m;
    m.command = j.at("command").get<std::string>();
    m.fingerprint = j.at("fingerprint").get<std::string>();
    m.shard.index = j.at("shard").get<std::size_t>();
    m.shard.count = j.at("count").get<std::size_t>();
    m.total_runs = j.at("total_runs").get<std::size_t>();
    const auto runs = j.at("runs").get<std::vector<std::size_t>>();
    if (runs.size() != 2 || runs[0] > runs[1] || runs[1] > m.total_runs ||
        m.shard.index >= m.shard.count) {
      return Error{fmt::format("{}:1: inconsistent shard, count or runs", path)};
    }
    m.runs = {runs[0], runs[1]};
    m.run_ids = j.at("run_ids").get<std::vector<std::string>>();
    m.files = j.at("files").get<std::vector<std::string>>();
    for (const std::string& f : m.files) {
      // A name, or one folder and a name (multi's seed-N/summary.csv).
      const std::size_t slash = f.find('/');
      if (f.empty() || f.front() == '/' || f.back() == '/' || f.find("..") != std::string::npos ||
          f.find('\\') != std::string::npos ||
          (slash != std::string::npos && f.find('/', slash + 1) != std::string::npos)) {
        return Error{fmt::format("{}:1: bad file name '{}'", path, f)};
      }
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}:1: {}", path, e.what())};
  }
}

Result<std::vector<std::string>> merge_shards(const std::vector<std::string>& dirs,
                                              const std::string& out) {
  if (dirs.empty()) return Error{"no shard folders given"};
  std::vector<ShardManifest> manifests;
  for (const std::string& dir : dirs) {
    auto m = read_shard_manifest(dir);
    if (!m.ok()) return m.status().error();
    manifests.push_back(std::move(m.value()));
  }
  const ShardManifest& first = manifests.front();
  std::map<std::size_t, std::size_t> by_index;  // shard index -> position in dirs
  for (std::size_t i = 0; i < manifests.size(); ++i) {
    const ShardManifest& m = manifests[i];
    if (m.fingerprint != first.fingerprint || m.command != first.command ||
        m.shard.count != first.shard.count || m.total_runs != first.total_runs) {
      return Error{fmt::format(
          "{} is a shard of another sweep ({}, plan {}, {} shards) than {} ({}, plan {}, {} "
          "shards)",
          dirs[i], m.command, m.fingerprint, m.shard.count, dirs[0], first.command,
          first.fingerprint, first.shard.count)};
    }
    if (auto [it, fresh] = by_index.emplace(m.shard.index, i); !fresh) {
      return Error{fmt::format("duplicate shard {}/{}: {} and {}", m.shard.index, m.shard.count,
                               dirs[it->second], dirs[i])};
    }
  }
  std::vector<std::string> missing;
  for (std::size_t k = 0; k < first.shard.count; ++k) {
    if (!by_index.count(k)) missing.push_back(fmt::format("{}/{}", k, first.shard.count));
  }
  if (!missing.empty()) {
    return Error{
        fmt::format("missing shard(s) {} of the sweep in {}", fmt::join(missing, ", "), dirs[0])};
  }
  // Shards in index order; their runs must tile the plan.
  std::size_t next_run = 0;
  std::vector<std::string> names;
  for (const auto& [index, i] : by_index) {
    const ShardManifest& m = manifests[i];
    if (m.runs.begin != next_run) {
      return Error{fmt::format("{}: shard {} starts at run {}, expected {}", dirs[i], index,
                               m.runs.begin, next_run)};
    }
    next_run = m.runs.end;
    for (const std::string& f : m.files) {
      if (std::find(names.begin(), names.end(), f) == names.end()) names.push_back(f);
    }
  }
  if (next_run != first.total_runs) {
    return Error{
        fmt::format("the shards hold {} of the plan's {} runs", next_run, first.total_runs)};
  }
  // By folder (multi with several seeds writes one per seed), each name's text.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> folders;
  for (const std::string& name : names) {
    std::string merged;
    std::string header;
    std::string header_from;
    for (const auto& [index, i] : by_index) {
      const ShardManifest& m = manifests[i];
      if (std::find(m.files.begin(), m.files.end(), name) == m.files.end()) continue;
      const std::string path = dirs[i] + "/" + name;
      auto text = read_file(path);
      if (!text.ok()) return text.status().error();
      const auto [head, body] = split_header(text.value());
      if (header_from.empty()) {
        header = std::string(head);
        header_from = path;
        merged = header;
      } else if (head != header) {
        return Error{fmt::format("{}:1: header differs from {}'s", path, header_from)};
      }
      merged += body;
    }
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) {
      folders[out].emplace_back(name, std::move(merged));
    } else {
      folders[out + "/" + name.substr(0, slash)].emplace_back(name.substr(slash + 1),
                                                              std::move(merged));
    }
  }
  for (const auto& [folder, files] : folders) {
    if (Status s = write_text_files(folder, files); !s.ok()) return s.error();
  }
  return names;
}

}  // namespace greensched::report
