// The files of a sharded sweep (`--shard I/N`) and their merge (`greensched merge`). A shard
// writes the same CSV files as a whole run, restricted to its runs, plus shard.json: the plan's
// fingerprint, the shard's index and count, its runs and the files it wrote. Each CSV file is a
// header line and rows in plan order, and shards hold contiguous blocks of the plan, so the
// merge writes the header once and then every shard's rows in shard order: the bytes a
// one-machine run writes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"
#include "greensched/sim/shard.hpp"

namespace greensched::report {

inline constexpr const char* kShardManifest = "shard.json";

struct ShardManifest {
  std::string command;      // "simulate inflation", "simulate replay", ...
  std::string fingerprint;  // sim::plan_fingerprint of the whole plan
  sim::Shard shard;
  std::size_t total_runs = 0;
  sim::RunRange runs;
  std::vector<std::string> run_ids;  // the shard's runs, in plan order
  std::vector<std::string> files;    // the CSV files it wrote, by name
};

// The manifest of shard `shard` of a plan: `description` (what the shards must share) and the
// plan's run ids give its fingerprint; it holds the shard's runs and the files it wrote.
ShardManifest make_shard_manifest(std::string command, std::string_view description,
                                  const sim::Shard& shard, const std::vector<std::string>& run_ids,
                                  std::vector<std::string> files);

// Writes DIR/shard.json. A file name is a name or one folder and a name (seed-42/summary.csv).
Status write_shard_manifest(const std::string& dir, const ShardManifest& manifest);

// Reads DIR/shard.json; errors name the file.
Result<ShardManifest> read_shard_manifest(const std::string& dir);

// Merges the shard folders into `out`: every shard of one plan exactly once (a missing or
// duplicate index, or a shard of another plan, is an error that names it). Returns the names of
// the files written.
Result<std::vector<std::string>> merge_shards(const std::vector<std::string>& dirs,
                                              const std::string& out);

}  // namespace greensched::report
