// One slice of a sweep's run plan (`--shard I/N`), so that a sweep can be spread over several
// machines. The plan's runs are cut into N contiguous blocks whose sizes differ by at most one;
// shard I (0-based, as Kubernetes' JOB_COMPLETION_INDEX) runs block I. Contiguous blocks keep
// every output file's rows of one shard together, so that concatenating the shards' rows in
// shard order gives the file a one-machine run writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::sim {

struct Shard {
  std::size_t index = 0;  // 0-based
  std::size_t count = 1;
};

// Parses "I/N" with 0 <= I < N; the error says what was wrong.
Result<Shard> parse_shard(std::string_view text);

// The runs [begin, end) of a plan of `total` runs that the shard runs.
struct RunRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool contains(std::size_t run) const { return run >= begin && run < end; }
};
RunRange shard_range(const Shard& shard, std::size_t total);

// Refuses a shard count above the plan's run count (a shard with no run is a mistake).
Status check_shard_fits(const Shard& shard, std::size_t total);

// What `--shard TEXT` runs of a plan of `total` runs: parse_shard, check_shard_fits and
// shard_range in one; the whole plan when TEXT is empty (no --shard).
Result<RunRange> shard_runs(std::string_view text, std::size_t total);

// A plan's fingerprint: FNV-1a (64 bits, hex) of its description and every run's id, so that
// shards of different sweeps are told apart.
std::string plan_fingerprint(std::string_view description, const std::vector<std::string>& run_ids);

}  // namespace greensched::sim
