// --shard I/N's slices of a run plan and the merge of shard folders: parsing, balanced
// contiguous blocks that tile the plan, and merges refused for missing, duplicate, foreign or
// inconsistent shards.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "greensched/core/text_file.hpp"
#include "greensched/report/shard_files.hpp"
#include "greensched/sim/shard.hpp"
#include "scratch_dir.hpp"

namespace greensched {
namespace {

TEST(Shard, ParsesZeroBasedIndexAndCount) {
  auto s = sim::parse_shard("2/5");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value().index, 2u);
  EXPECT_EQ(s.value().count, 5u);
  for (const char* bad : {"5/5", "0/0", "", "3", "/3", "1/", "-1/3", "a/3", "1/2/3", " 1/3"}) {
    EXPECT_FALSE(sim::parse_shard(bad).ok()) << bad;
  }
  EXPECT_FALSE(sim::check_shard_fits({0, 5}, 4).ok());
  EXPECT_TRUE(sim::check_shard_fits({0, 4}, 4).ok());
}

TEST(Shard, BlocksTileThePlanAndDifferByAtMostOne) {
  // 10 runs in 4 shards: 2, 3, 2, 3 (hand-computed floor(i*10/4)).
  const std::vector<std::pair<std::size_t, std::size_t>> want = {{0, 2}, {2, 5}, {5, 7}, {7, 10}};
  for (std::size_t i = 0; i < 4; ++i) {
    const sim::RunRange r = sim::shard_range({i, 4}, 10);
    EXPECT_EQ(r.begin, want[i].first);
    EXPECT_EQ(r.end, want[i].second);
  }
  for (std::size_t total = 1; total <= 40; ++total) {
    for (std::size_t n = 1; n <= total; ++n) {
      std::size_t next = 0, smallest = total, largest = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const sim::RunRange r = sim::shard_range({i, n}, total);
        EXPECT_EQ(r.begin, next);
        smallest = std::min(smallest, r.end - r.begin);
        largest = std::max(largest, r.end - r.begin);
        next = r.end;
      }
      EXPECT_EQ(next, total);
      EXPECT_GE(smallest, 1u);
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

TEST(Shard, FingerprintTellsPlansApart) {
  const std::string a = sim::plan_fingerprint("simulate|x", {"fgd/42", "fgd/43"});
  EXPECT_EQ(a, sim::plan_fingerprint("simulate|x", {"fgd/42", "fgd/43"}));
  EXPECT_NE(a, sim::plan_fingerprint("simulate|y", {"fgd/42", "fgd/43"}));
  EXPECT_NE(a, sim::plan_fingerprint("simulate|x", {"fgd/42"}));
  EXPECT_NE(a, sim::plan_fingerprint("simulate|x", {"fgd/4", "2fgd/43"}));
}

// A shard of a 3-run plan whose file a.csv has one row per run.
void write_shard(const std::string& dir, std::size_t index, std::size_t count,
                 const std::string& fingerprint = "f1", const std::string& header = "h\n") {
  report::ShardManifest m;
  m.command = "simulate inflation";
  m.fingerprint = fingerprint;
  m.shard = {index, count};
  m.total_runs = 3;
  m.runs = sim::shard_range(m.shard, 3);
  std::string body = header;
  for (std::size_t r = m.runs.begin; r < m.runs.end; ++r) {
    m.run_ids.push_back(std::to_string(r));
    body += "row" + std::to_string(r) + "\n";
  }
  m.files = {"a.csv", "sub/b.csv"};
  ASSERT_TRUE(write_text_files(dir, {{"a.csv", body}}).ok());
  ASSERT_TRUE(write_text_files(dir + "/sub", {{"b.csv", body}}).ok());
  ASSERT_TRUE(report::write_shard_manifest(dir, m).ok());
}

TEST(ShardMerge, ConcatenatesRowsInShardOrder) {
  testing::ScratchDir tmp;
  const std::string d = tmp.path();
  write_shard(d + "/s0", 0, 2);
  write_shard(d + "/s1", 1, 2);
  auto names = report::merge_shards({d + "/s1", d + "/s0"}, d + "/out");
  ASSERT_TRUE(names.ok()) << names.status().message();
  EXPECT_EQ(read_file(d + "/out/a.csv").value(), "h\nrow0\nrow1\nrow2\n");
  EXPECT_EQ(read_file(d + "/out/sub/b.csv").value(), "h\nrow0\nrow1\nrow2\n");
}

TEST(ShardMerge, RefusesMissingDuplicateForeignAndMismatchedShards) {
  testing::ScratchDir tmp;
  const std::string d = tmp.path();
  write_shard(d + "/s0", 0, 3);
  write_shard(d + "/s1", 1, 3);
  write_shard(d + "/s2", 2, 3);
  write_shard(d + "/other", 1, 3, "f2");
  write_shard(d + "/header", 1, 3, "f1", "H\n");
  const auto error = [&](const std::vector<std::string>& dirs) {
    auto r = report::merge_shards(dirs, d + "/out");
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(error({d + "/s0", d + "/s2"}).find("missing shard(s) 1/3"), std::string::npos);
  EXPECT_NE(error({d + "/s0", d + "/s1", d + "/s1", d + "/s2"}).find("duplicate shard 1/3"),
            std::string::npos);
  EXPECT_NE(error({d + "/s0", d + "/other", d + "/s2"}).find(d + "/other is a shard of another"),
            std::string::npos);
  EXPECT_NE(error({d + "/s0", d + "/header", d + "/s2"}).find("header differs"), std::string::npos);
  EXPECT_NE(error({d}).find("not a shard folder"), std::string::npos);
  EXPECT_EQ(error({d + "/s2", d + "/s0", d + "/s1"}), "ok");
}

}  // namespace
}  // namespace greensched
