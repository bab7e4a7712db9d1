// The shared helpers every reader and writer goes through (typed JSON members, output files,
// parallel_for, Prometheus labels), duplicate names in the openb lists, and decision records
// of the wrong shape.
#include <atomic>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/prometheus_text.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/explain/explanation.hpp"
#include "greensched/learn/trainer.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "greensched/trace/csv.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "scratch_dir.hpp"

namespace greensched {
namespace {

namespace fs = std::filesystem;

TEST(Status, CarriesItsCodeThroughResults) {
  Status s = Error{"x.csv: cannot open file", ErrorCode::kNotFound};
  EXPECT_EQ(s.code(), ErrorCode::kNotFound);
  Result<int> r = s.error();
  EXPECT_EQ(r.code(), ErrorCode::kNotFound);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Status(Error{"bad"}).code(), ErrorCode::kInvalidInput);
}

TEST(JsonFields, TypedMembersNameTheKey) {
  auto j = parse_json_text(R"({"a": 1.5, "s": "x", "b": true, "n": null, "arr": [1, "y"]})", "f");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(number_member(j.value(), "a", "f").value(), 1.5);
  EXPECT_EQ(number_member(j.value(), "n", "f", 7.0).value(), 7.0);
  EXPECT_EQ(string_member(j.value(), "s", "f").value(), "x");
  EXPECT_TRUE(bool_member(j.value(), "b", "f").value());
  EXPECT_EQ(number_member(j.value(), "s", "f: sites[0]").error(),
            "f: sites[0].s: expected a number, not string");
  EXPECT_EQ(string_member(j.value(), "zz", "f").error(), "f.zz: missing");
  EXPECT_EQ(check_elements(j.value(), "arr", JsonKind::kInteger, "f").message(),
            "f.arr[1]: expected an integer, not string");
  EXPECT_TRUE(check_member(j.value(), "zz", JsonKind::kObject, "f").ok());
  auto bad = parse_json_text("{\"a\": ", "f.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().rfind("f.json: invalid JSON: ", 0), 0u) << bad.error();
}

// nlohmann's parser takes a NUL byte for the end of the text: without the check, whatever
// follows one (here a second site) would be dropped without a word.
TEST(JsonFields, ANulByteIsAnErrorNotTheEndOfTheText) {
  const std::string text("{\"a\": 1}\n  \0{\"b\": 2}", 20);
  ASSERT_TRUE(nlohmann::json::parse(text, nullptr, false).is_object());  // what we guard against
  auto parsed = parse_json_text(text, "f.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error(), "f.json: invalid JSON: a NUL byte at line 2, column 3");
  EXPECT_EQ(check_no_nul_byte(std::string_view("\0", 1)).message(),
            "a NUL byte at line 1, column 1");
  EXPECT_TRUE(check_no_nul_byte("{}\n").ok());
  EXPECT_TRUE(parse_json_or_discarded(text).is_discarded());
  EXPECT_TRUE(parse_json_or_discarded(text.substr(0, 8)).is_object());
}

TEST(JsonFields, IntegerMembersAreRangeCheckedNeverCast) {
  const auto j = nlohmann::json::parse(
      R"({"a": 5, "b": 5.0, "c": 5.5, "d": 1e300, "e": -1, "f": "5", "g": 18446744073709551615})");
  EXPECT_EQ(integer_member(j, "a", "x", 0, 10).value(), 5);
  EXPECT_EQ(integer_member(j, "b", "x", 0, 10).value(), 5);
  EXPECT_EQ(integer_member(j, "c", "x", 0, 10).error(),
            "x.c: expected an integer in [0, 10], not 5.5");
  EXPECT_FALSE(integer_member(j, "d", "x", 0, std::numeric_limits<int64_t>::max()).ok());
  EXPECT_FALSE(integer_member(j, "e", "x", 0, 10).ok());
  EXPECT_EQ(integer_member(j, "e", "x", -1, 10).value(), -1);
  EXPECT_FALSE(integer_member(j, "f", "x", 0, 10).ok());
  EXPECT_FALSE(integer_member(j, "g", "x", 0, std::numeric_limits<int64_t>::max()).ok());
  EXPECT_EQ(integer_member(j, "missing", "x", 0, 10, 7).value(), 7);
  EXPECT_EQ(integer_member(j, "missing", "x", 0, 10).error(), "x.missing: missing");
}

TEST(MonitorSamples, WrongTypesAreErrorsNamingTheKey) {
  const auto bad = [](const char* text) {
    auto s = monitor::sample_from_json(nlohmann::json::parse(text), "m.jsonl:3");
    return s.ok() ? std::string("accepted") : s.error();
  };
  EXPECT_EQ(bad(R"({"seq": 1})"), "m.jsonl:3.time_s: missing");
  EXPECT_NE(bad(R"({"time_s": 1, "cpu": {"utilization": "x"}})").find("m.jsonl:3.cpu.utilization"),
            std::string::npos);
  EXPECT_NE(bad(R"({"time_s": 1, "gpus": [{"index": 1e300, "name": "g"}]})")
                .find("m.jsonl:3.gpus[0].index: expected an integer"),
            std::string::npos);
  EXPECT_NE(bad(R"({"time_s": 1, "memory": {"total_bytes": -5, "used_bytes": 1}})")
                .find("m.jsonl:3.memory.total_bytes"),
            std::string::npos);
  EXPECT_NE(bad(R"({"time_s": 1, "packages": [3]})").find("m.jsonl:3.packages[0]"),
            std::string::npos);
  auto ok = monitor::sample_from_json(
      nlohmann::json::parse(
          R"({"time_s": 2.5, "gpus": [{"index": 0, "name": "A100", "power_watts": 250}]})"),
      "m");
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok.value().gpus.at(0).power_watts, 250.0);
}

TEST(TrainCheckpoint, WrongTypesAreErrorsNamingTheKey) {
  const auto bad = [](const char* text) {
    auto c = learn::parse_checkpoint(nlohmann::json::parse(text), "ckpt.json");
    return c.ok() ? std::string("accepted") : c.error();
  };
  EXPECT_NE(bad(R"({"format": "greensched-train-checkpoint/1", "options": {}, "generation": "x",
                    "mean": [], "sigma": [], "history": []})")
                .find("ckpt.json.generation"),
            std::string::npos);
  EXPECT_NE(bad(R"({"format": "greensched-train-checkpoint/1", "options": {}, "generation": 1,
                    "mean": [1, "a"], "sigma": [], "history": []})")
                .find("ckpt.json.mean[1]"),
            std::string::npos);
  EXPECT_NE(bad(R"({"format": 3})").find("format"), std::string::npos);
}

TEST(TextFile, AtomicWriteReplacesWholeFileAndLeavesNoTemp) {
  const testing::ScratchDir scratch;
  const fs::path& dir = scratch.dir();
  const std::string path = (dir / "out.txt").string();
  ASSERT_TRUE(write_text_file(path, "old contents, longer than the new").ok());
  ASSERT_TRUE(write_text_file_atomic(path, "new").ok());
  EXPECT_EQ(read_file(path).value(), "new");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// A report streamed to its file: the file holds exactly what the writer put in the stream,
// replacing what was there; a path that cannot be opened is an I/O error naming it, and the
// writer is not called.
TEST(TextFile, StreamWriteReplacesTheFileOrNamesThePath) {
  const testing::ScratchDir scratch;
  const fs::path& dir = scratch.dir();
  const std::string path = (dir / "out.csv").string();
  ASSERT_TRUE(write_text_file(path, "old contents, longer than the new").ok());
  ASSERT_TRUE(write_stream_file(path, [](std::ostream& out) {
                out << "a,b\n" << 1 << ',' << 2.5;
              }).ok());
  EXPECT_EQ(read_file(path).value(), "a,b\n1,2.5");
  // A missing folder is made; a folder that cannot be (a file is in the way) is an I/O error
  // naming the path, and nothing is written.
  ASSERT_TRUE(write_stream_file((dir / "new-dir" / "out.csv").string(), [](std::ostream& out) {
                out << "x";
              }).ok());
  EXPECT_EQ(read_file((dir / "new-dir" / "out.csv").string()).value(), "x");
  ASSERT_TRUE(write_text_file((dir / "a-file").string(), "").ok());
  bool called = false;
  const std::string blocked = (dir / "a-file" / "out.csv").string();
  Status s = write_stream_file(blocked, [&](std::ostream&) { called = true; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("a-file/out.csv"), std::string::npos) << s.message();
  EXPECT_FALSE(called);
}

TEST(TextFile, AtomicWriteFailureIsAnIoErrorNamingThePath) {
  const testing::ScratchDir scratch;
  const fs::path& dir = scratch.dir();
  ASSERT_TRUE(write_text_file((dir / "a-file").string(), "").ok());
  const std::string path = (dir / "a-file" / "out.txt").string();
  Status s = write_text_file_atomic(path, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kIo);
  EXPECT_NE(s.message().find("out.txt"), std::string::npos) << s.message();
  // Renaming onto a directory fails after the temp file was written: the temp is removed.
  const std::string onto_dir = (dir / "a-dir").string();
  fs::create_directories(onto_dir);
  Status r = write_text_file_atomic(onto_dir, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), ErrorCode::kIo);
  EXPECT_FALSE(fs::exists(onto_dir + ".tmp"));
}

TEST(ParallelFor, RunsEveryIndexOnceForAnyThreadCount) {
  for (int jobs : {0, 1, 3, 16}) {
    std::vector<std::atomic<int>> seen(100);
    Status s = parallel_for(seen.size(), jobs, [&](std::size_t i) {
      seen[i].fetch_add(1);
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok());
    for (const auto& n : seen) EXPECT_EQ(n.load(), 1) << "jobs " << jobs;
  }
  EXPECT_TRUE(parallel_for(0, 4, [](std::size_t) { return Status::Ok(); }).ok());
}

TEST(ParallelFor, ReturnsTheLowestIndexError) {
  for (int jobs : {1, 4}) {
    Status s = parallel_for(50, jobs, [](std::size_t i) -> Status {
      if (i == 7 || i == 30) return Error{"failed " + std::to_string(i), ErrorCode::kIo};
      return Status::Ok();
    });
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "failed 7");
    EXPECT_EQ(s.code(), ErrorCode::kIo);
  }
}

TEST(PrometheusLabel, EscapesBackslashQuoteAndNewlineOnly) {
  EXPECT_EQ(prometheus_label("plain-name_1.0"), "plain-name_1.0");
  EXPECT_EQ(prometheus_label("a\\b"), "a\\\\b");
  EXPECT_EQ(prometheus_label("say \"hi\""), "say \\\"hi\\\"");
  EXPECT_EQ(prometheus_label("two\nlines"), "two\\nlines");
  EXPECT_EQ(prometheus_label("tab\tand é"), "tab\tand é");
  EXPECT_EQ(prometheus_label(""), "");
}

TEST(OpenbReader, DuplicateNodeNameNamesBothLines) {
  GpuModelRegistry models;
  auto nodes = trace::parse_openb_nodes(
      "sn,cpu_milli,memory_mib,gpu,model\nx,1000,10,1,T4\ny,1000,10,0,\nx,2000,10,0,\n", "n.csv",
      models);
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.error(), "n.csv:4: duplicate node name 'x' (first on line 2)");
}

TEST(OpenbReader, DuplicatePodNameNamesBothLines) {
  GpuModelRegistry models;
  auto pods = trace::parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,0,0\n\nq,1,1,0,0\np,1,1,0,0\n", "p.csv",
      models);
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(pods.error(), "p.csv:5: duplicate pod name 'p' (first on line 2)");
}

TEST(DecisionRecord, WrongTypesAndMissingKeysAreErrorsNamingTheKey) {
  const auto error = [](const char* line) {
    auto r = explain::parse_decision_record(line, "d.jsonl:3");
    return r.ok() ? std::string("ok") : r.error();
  };
  EXPECT_EQ(error(R"({"pod":"x","step":1,"chosen_node":5,"request":"bad"})"),
            "d.jsonl:3: request: expected an object, not string");
  EXPECT_EQ(error(R"({"request":{}})"), "d.jsonl:3: pod: missing");
  EXPECT_EQ(error(R"({"pod":"x","request":{},"chosen_node":5})"),
            "d.jsonl:3: chosen_node: expected a string, not number");
  EXPECT_EQ(error(R"({"pod":"x","request":{},"chosen_node":"n"})"), "d.jsonl:3: policy: missing");
  EXPECT_EQ(error(R"({"pod":"x","request":{},"kind":"dispatch","site":"a"})"),
            "d.jsonl:3: home_site: missing");
  EXPECT_EQ(error(R"({"pod":"x","request":{"gpu_spec":[1]}})"),
            "d.jsonl:3: request.gpu_spec[0]: expected a string, not number");
  EXPECT_EQ(error(R"({"pod":"x","request":{},"diagnosis":{"shrink":{"node":"n"}}})"),
            "d.jsonl:3: diagnosis.shrink.dimension: missing");
  EXPECT_EQ(error("[1,2]"), "d.jsonl:3: not a JSON object");
  EXPECT_EQ(error("{"), "d.jsonl:3: not a JSON record");
}

TEST(DecisionRecord, AcceptedRecordsExplainWithoutThrowing) {
  for (const char* line : {
           R"({"pod":"x","request":{"num_gpu":1e300,"gpu_milli":-1e300}})",
           R"({"pod":"x","request":{},"chosen_node":"n","policy":"p","runner_up":"m",)"
           R"("tie_broken":false,"candidates":[{"node":"m","frag_delta_milli":null}],)"
           R"("reason_counts":{"a":1e300},"nodes_total":3,"feasible_nodes":1})",
           R"({"pod":"x","request":{},"kind":"dispatch","home_site":"a","site":"b",)"
           R"("alternatives":[{"site":"a","forecast_ci":1,"expected_g":2}]})",
       }) {
    auto r = explain::parse_decision_record(line, "d");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(explain::explain_text(r.value()).empty());
    EXPECT_TRUE(explain::explain_facts(r.value()).is_object());
  }
}

}  // namespace
}  // namespace greensched
