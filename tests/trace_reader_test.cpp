// Tests of the trace layer: the openb CSV readers (valid input, every error with its
// file:line), shape ids, the workload inflation ("tune") and the built-in workload. The
// real-data tests read ../shared/data/openb and skip when it is absent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "greensched/core/gpu_model.hpp"
#include "greensched/core/node.hpp"
#include "greensched/core/pod.hpp"
#include "greensched/core/rng.hpp"
#include "greensched/trace/builtin_workload.hpp"
#include "greensched/trace/inflation.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "greensched/trace/workload.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"
#include "test_pod.hpp"

namespace greensched::trace {
namespace {

constexpr std::string_view kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
constexpr std::string_view kMultiGpuHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
// A valid full-schema row, used as line 2 so that the row under test is line 3.
constexpr std::string_view kGoodPodRow = "p0,1000,2048,1,500,,LS,Running,0,10,0\n";
constexpr std::string_view kGoodNodeRow = "n0,32000,262144,0,\n";

std::string with_crlf(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

GpuModelSet model_bit(const GpuModelRegistry& models, std::string_view name) {
  auto id = models.find(name);
  EXPECT_TRUE(id.has_value()) << name;
  return id ? GpuModelSet{1} << *id : 0;
}

// Expects the text to be rejected by the pod reader and returns the message.
std::string pod_error(std::string_view text) {
  GpuModelRegistry models;
  auto r = parse_openb_pods(text, "pods.csv", models);
  EXPECT_FALSE(r.ok()) << "accepted:\n" << text;
  return r.ok() ? std::string() : r.error();
}

std::string node_error(std::string_view text) {
  GpuModelRegistry models;
  auto r = parse_openb_nodes(text, "nodes.csv", models);
  EXPECT_FALSE(r.ok()) << "accepted:\n" << text;
  return r.ok() ? std::string() : r.error();
}

// The message starts with `prefix` ("pods.csv:3: ") and mentions every word in `words`.
::testing::AssertionResult IsErrorAt(const std::string& message, std::string_view prefix,
                                     std::initializer_list<std::string_view> words) {
  if (message.rfind(prefix, 0) != 0) {
    return ::testing::AssertionFailure()
           << "'" << message << "' does not start with '" << prefix << "'";
  }
  for (std::string_view w : words) {
    if (message.find(w, prefix.size()) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << message << "' does not mention '" << w << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

std::string pods_text(std::string_view bad_row) {
  return std::string(kPodHeader) + std::string(kGoodPodRow) + std::string(bad_row) + "\n";
}

std::string nodes_text(std::string_view bad_row) {
  return std::string(kNodeHeader) + std::string(kGoodNodeRow) + std::string(bad_row) + "\n";
}

int64_t total_gpu_milli(std::span<const PodSpec> pods, std::span<const uint32_t> order) {
  int64_t sum = 0;
  for (uint32_t i : order) sum += pods[i].total_gpu_milli();
  return sum;
}

PodSpec make_pod(int64_t cpu, int64_t mem, int num_gpu, int32_t gpu_milli, GpuModelSet spec = 0) {
  return testing::test_pod("", cpu, num_gpu, gpu_milli, spec, mem);
}

// ---------------------------------------------------------------------------------------------
// Valid input

TEST(ReaderNodes, ParsesEveryField) {
  GpuModelRegistry models;
  const std::size_t known = models.size();
  const std::string text = std::string(kNodeHeader) +
                           "n0,32000,262144,0,\n"
                           "n1,96000,393216,8,G2\n"
                           "n2,8000,61440,1,NEWGPU\n"
                           "n3,104000,524288,16,T4\n";
  auto r = parse_openb_nodes(text, "nodes.csv", models);
  ASSERT_TRUE(r.ok()) << r.error();
  const auto& nodes = r.value();
  ASSERT_EQ(nodes.size(), 4u);

  EXPECT_EQ(nodes[0].name, "n0");
  EXPECT_EQ(nodes[0].cpu_milli, 32000);
  EXPECT_EQ(nodes[0].memory_mib, 262144);
  EXPECT_EQ(nodes[0].gpu_count, 0);
  EXPECT_EQ(nodes[0].model, kNoGpuModel);

  EXPECT_EQ(nodes[1].name, "n1");
  EXPECT_EQ(nodes[1].cpu_milli, 96000);
  EXPECT_EQ(nodes[1].memory_mib, 393216);
  EXPECT_EQ(nodes[1].gpu_count, 8);
  EXPECT_EQ(nodes[1].model, *models.find("G2"));
  EXPECT_EQ(models.name(nodes[1].model), "G2");

  // A model the registry did not know is interned.
  EXPECT_EQ(models.size(), known + 1);
  ASSERT_TRUE(models.find("NEWGPU").has_value());
  EXPECT_EQ(nodes[2].model, *models.find("NEWGPU"));
  EXPECT_EQ(nodes[2].gpu_count, 1);
  EXPECT_EQ(nodes[2].cpu_milli, 8000);
  EXPECT_EQ(nodes[2].memory_mib, 61440);

  // 16 GPUs is the largest supported node.
  EXPECT_EQ(nodes[3].gpu_count, 16);
  EXPECT_EQ(nodes[3].model, *models.find("T4"));
}

TEST(ReaderNodes, ColumnsAreFoundByNameAndCrlfIsAccepted) {
  GpuModelRegistry models;
  const std::string text = with_crlf(
      "model,gpu,memory_mib,cpu_milli,sn\n"
      "T4,2,524288,104000,a\n"
      ",0,1024,500,b\n");
  auto r = parse_openb_nodes(text, "nodes.csv", models);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.value().size(), 2u);
  EXPECT_EQ(r.value()[0].name, "a");
  EXPECT_EQ(r.value()[0].cpu_milli, 104000);
  EXPECT_EQ(r.value()[0].memory_mib, 524288);
  EXPECT_EQ(r.value()[0].gpu_count, 2);
  EXPECT_EQ(r.value()[0].model, *models.find("T4"));
  EXPECT_EQ(r.value()[1].name, "b");  // no trailing '\r' in the last field
  EXPECT_EQ(r.value()[1].model, kNoGpuModel);
}

TEST(ReaderPods, ParsesFullSchemaRows) {
  GpuModelRegistry models;
  const std::string text = std::string(kPodHeader) +
                           "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                           "p1,6000,12288,1,460,V100M16|V100M32,BE,Pending,427061,12902960,\n"
                           "p2,88000,327680,8,1000,G2,Burstable,Succeeded,5,10,7\n"
                           "p3,4000,8192,0,0,,Guaranteed,Failed,100,100,100\n";
  auto r = parse_openb_pods(text, "pods.csv", models);
  ASSERT_TRUE(r.ok()) << r.error();
  const auto& pods = r.value();
  ASSERT_EQ(pods.size(), 4u);

  EXPECT_EQ(pods[0].name, "p0");
  EXPECT_EQ(pods[0].cpu_milli, 12000);
  EXPECT_EQ(pods[0].memory_mib, 16384);
  EXPECT_EQ(pods[0].num_gpu, 1);
  EXPECT_EQ(pods[0].gpu_milli, 1000);
  EXPECT_EQ(pods[0].gpu_spec, 0u);
  EXPECT_EQ(pods[0].qos, Qos::kLS);
  EXPECT_EQ(pods[0].creation_time, 0);
  EXPECT_EQ(pods[0].deletion_time, 12537496);
  EXPECT_EQ(pods[0].scheduled_time, 0);

  EXPECT_EQ(pods[1].name, "p1");
  EXPECT_EQ(pods[1].cpu_milli, 6000);
  EXPECT_EQ(pods[1].memory_mib, 12288);
  EXPECT_EQ(pods[1].num_gpu, 1);
  EXPECT_EQ(pods[1].gpu_milli, 460);
  EXPECT_EQ(pods[1].gpu_spec, model_bit(models, "V100M16") | model_bit(models, "V100M32"));
  EXPECT_EQ(models.describe(pods[1].gpu_spec), "V100M16|V100M32");
  EXPECT_TRUE(model_allowed(pods[1].gpu_spec, *models.find("V100M32")));
  EXPECT_FALSE(model_allowed(pods[1].gpu_spec, *models.find("T4")));
  EXPECT_EQ(pods[1].qos, Qos::kBE);
  EXPECT_EQ(pods[1].creation_time, 427061);
  EXPECT_EQ(pods[1].deletion_time, 12902960);
  EXPECT_EQ(pods[1].scheduled_time, -1);  // Pending: empty scheduled_time

  EXPECT_EQ(pods[2].num_gpu, 8);
  EXPECT_EQ(pods[2].gpu_milli, 1000);
  EXPECT_EQ(pods[2].total_gpu_milli(), 8000);
  EXPECT_EQ(pods[2].gpu_spec, model_bit(models, "G2"));
  EXPECT_EQ(pods[2].qos, Qos::kBurstable);
  EXPECT_EQ(pods[2].creation_time, 5);
  EXPECT_EQ(pods[2].deletion_time, 10);
  EXPECT_EQ(pods[2].scheduled_time, 7);

  EXPECT_EQ(pods[3].num_gpu, 0);
  EXPECT_EQ(pods[3].gpu_milli, 0);
  EXPECT_FALSE(pods[3].needs_gpu());
  EXPECT_EQ(pods[3].qos, Qos::kGuaranteed);
  EXPECT_EQ(pods[3].deletion_time, 100);  // deletion == creation is allowed
}

TEST(ReaderPods, CrlfGivesTheSameRows) {
  GpuModelRegistry models;
  const std::string lf = std::string(kPodHeader) +
                         "p0,12000,16384,1,1000,T4,LS,Running,0,12537496,\n"
                         "p1,6000,12288,1,460,,BE,Pending,427061,12902960,5\n";
  auto a = parse_openb_pods(lf, "pods.csv", models);
  auto b = parse_openb_pods(with_crlf(lf), "pods.csv", models);
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  ASSERT_EQ(a.value().size(), 2u);
  ASSERT_EQ(b.value().size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const PodSpec& x = a.value()[i];
    const PodSpec& y = b.value()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.cpu_milli, y.cpu_milli);
    EXPECT_EQ(x.memory_mib, y.memory_mib);
    EXPECT_EQ(x.num_gpu, y.num_gpu);
    EXPECT_EQ(x.gpu_milli, y.gpu_milli);
    EXPECT_EQ(x.gpu_spec, y.gpu_spec);
    EXPECT_EQ(x.qos, y.qos);
    EXPECT_EQ(x.creation_time, y.creation_time);
    EXPECT_EQ(x.deletion_time, y.deletion_time);
    EXPECT_EQ(x.scheduled_time, y.scheduled_time);
  }
  // The last field of each line is where a stray '\r' would end up.
  EXPECT_EQ(b.value()[0].scheduled_time, -1);
  EXPECT_EQ(b.value()[1].scheduled_time, 5);
}

TEST(ReaderPods, ParsesMultiGpuFiveColumnSchema) {
  GpuModelRegistry models;
  const std::string text = std::string(kMultiGpuHeader) +
                           "m0,12000,16384,1,1000\n"
                           "m1,6000,12288,1,460\n"
                           "m2,64000,262144,4,1000\n"
                           "m3,2000,4096,0,0\n";
  auto r = parse_openb_pods(text, "multigpu.csv", models);
  ASSERT_TRUE(r.ok()) << r.error();
  const auto& pods = r.value();
  ASSERT_EQ(pods.size(), 4u);
  const std::tuple<const char*, int64_t, int64_t, int, int32_t> expected[] = {
      {"m0", 12000, 16384, 1, 1000},
      {"m1", 6000, 12288, 1, 460},
      {"m2", 64000, 262144, 4, 1000},
      {"m3", 2000, 4096, 0, 0},
  };
  for (std::size_t i = 0; i < pods.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(pods[i].name, std::get<0>(expected[i]));
    EXPECT_EQ(pods[i].cpu_milli, std::get<1>(expected[i]));
    EXPECT_EQ(pods[i].memory_mib, std::get<2>(expected[i]));
    EXPECT_EQ(pods[i].num_gpu, std::get<3>(expected[i]));
    EXPECT_EQ(pods[i].gpu_milli, std::get<4>(expected[i]));
    // Columns the reduced schema lacks take their "absent" values.
    EXPECT_EQ(pods[i].gpu_spec, 0u);
    EXPECT_EQ(pods[i].qos, Qos::kUnknown);
    EXPECT_EQ(pods[i].creation_time, -1);
    EXPECT_EQ(pods[i].deletion_time, -1);
    EXPECT_EQ(pods[i].scheduled_time, -1);
  }
}

TEST(ReaderPods, BlankLinesAreSkippedButCounted) {
  GpuModelRegistry models;
  const std::string ok = std::string(kMultiGpuHeader) + "\nm0,1,2,0,0\n\n\nm1,3,4,1,250\n\n";
  auto r = parse_openb_pods(ok, "pods.csv", models);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.value().size(), 2u);
  EXPECT_EQ(r.value()[1].gpu_milli, 250);

  // Line 1 header, 2 blank, 3 good, 4 blank, 5 bad.
  const std::string bad = std::string(kMultiGpuHeader) + "\nm0,1,2,0,0\n\nm1,x,4,1,250\n";
  EXPECT_TRUE(IsErrorAt(pod_error(bad), "pods.csv:5: ", {"cpu_milli", "x"}));
  EXPECT_TRUE(IsErrorAt(pod_error(with_crlf(bad)), "pods.csv:5: ", {"cpu_milli"}));
}

// ---------------------------------------------------------------------------------------------
// Errors: every one is "file:line: reason"

TEST(ReaderErrors, MissingColumnNamesTheColumn) {
  EXPECT_TRUE(IsErrorAt(pod_error("name,cpu_milli,memory_mib,num_gpu\np0,1,2,0\n"),
                        "pods.csv:1: ", {"missing", "gpu_milli"}));
  EXPECT_TRUE(IsErrorAt(pod_error("name,cpu_milli,num_gpu,gpu_milli\np0,1,0,0\n"),
                        "pods.csv:1: ", {"missing", "memory_mib"}));
  EXPECT_TRUE(IsErrorAt(node_error("sn,cpu_milli,memory_mib,gpu\nn0,1,2,0\n"),
                        "nodes.csv:1: ", {"missing", "model"}));
  EXPECT_TRUE(IsErrorAt(node_error("node,cpu_milli,memory_mib,gpu,model\nn0,1,2,0,\n"),
                        "nodes.csv:1: ", {"missing", "sn"}));
  // A node list is not a pod list: everything the pod reader needs is named.
  const std::string err = pod_error(nodes_text("n1,1,2,0,"));
  EXPECT_TRUE(IsErrorAt(err, "pods.csv:1: ", {"name", "num_gpu", "gpu_milli"}));
}

TEST(ReaderErrors, WrongFieldCount) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,0,10")),
                        "pods.csv:3: ", {"expected 11 fields", "got 10"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,0,10,0,")),
                        "pods.csv:3: ", {"expected 11 fields", "got 12"}));
  EXPECT_TRUE(IsErrorAt(pod_error(std::string(kMultiGpuHeader) + "m0,1,2,0,0\nm1,1,2,0\n"),
                        "pods.csv:3: ", {"expected 5 fields", "got 4"}));
  EXPECT_TRUE(
      IsErrorAt(node_error(nodes_text("n1,32000,262144,0")), "nodes.csv:3: ", {"fields", "4"}));
}

TEST(ReaderErrors, NotANumber) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,12x,2048,1,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"cpu_milli", "12x", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,0.5,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_milli", "0.5", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000, 2048,1,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"memory_mib", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,t0,10,0")),
                        "pods.csv:3: ", {"creation_time", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,0,10,1e3")),
                        "pods.csv:3: ", {"scheduled_time", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,32000,256G,0,")),
                        "nodes.csv:3: ", {"memory_mib", "256G", "not an integer"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,32000,262144,two,T4")),
                        "nodes.csv:3: ", {"gpu", "not an integer"}));
  // Out of int64 range is not a number either.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,99999999999999999999,2048,1,500,,LS,R,0,10,0")),
                        "pods.csv:3: ", {"cpu_milli", "not an integer"}));
}

TEST(ReaderErrors, NegativeValue) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,-5,1,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"memory_mib", "negative"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,-1,1000,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu", "negative"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,-3,10,0")),
                        "pods.csv:3: ", {"creation_time", "negative"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,-32000,262144,0,")),
                        "nodes.csv:3: ", {"cpu_milli", "negative"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,32000,262144,-2,T4")),
                        "nodes.csv:3: ", {"gpu", "negative"}));
}

TEST(ReaderErrors, GpuRequestRules) {
  // More than one whole GPU in gpu_milli.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,1001,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_milli", "1001"}));
  // A multi-GPU pod must take whole GPUs.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,2,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu 2", "gpu_milli 500"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,8,999,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu 8", "whole GPUs"}));
  // GPU share without a GPU, and a GPU without a share.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,0,300,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_milli 300", "num_gpu 0"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,0,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu 1", "gpu_milli 0"}));
  // More GPUs than any node can have.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,17,1000,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"num_gpu", "17"}));
  // The limits themselves are accepted.
  GpuModelRegistry models;
  auto ok =
      parse_openb_pods(pods_text("p1,1000,2048,16,1000,,LS,Running,0,10,0"), "pods.csv", models);
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok.value()[1].num_gpu, 16);
  ok = parse_openb_pods(pods_text("p1,1000,2048,1,1,,LS,Running,0,10,0"), "pods.csv", models);
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok.value()[1].gpu_milli, 1);
}

TEST(ReaderErrors, UnknownModelInGpuSpec) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,T4|X900,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_spec", "X900"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,T4|h800,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_spec", "h800"}));
  // Names are read in the one spelling of core/gpu_model.hpp: "t4" is T4.
  GpuModelRegistry t4_models;
  auto t4 =
      parse_openb_pods(pods_text("p1,1000,2048,1,500,t4,LS,Running,0,10,0"), "pods.csv", t4_models);
  ASSERT_TRUE(t4.ok()) << t4.error();
  EXPECT_EQ(t4.value()[1].gpu_spec, GpuModelSet{1} << *t4_models.find("T4"));
  // An empty alternative is not a model.
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,T4|,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"gpu_spec", "unknown"}));
  // A model interned from a node list is known afterwards.
  GpuModelRegistry models;
  ASSERT_TRUE(parse_openb_nodes(nodes_text("n1,8000,1024,1,X900"), "nodes.csv", models).ok());
  auto r = parse_openb_pods(pods_text("p1,1000,2048,1,500,T4|X900,LS,Running,0,10,0"), "pods.csv",
                            models);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value()[1].gpu_spec, model_bit(models, "T4") | model_bit(models, "X900"));
}

TEST(ReaderErrors, UnknownQos) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,Premium,Running,0,10,0")),
                        "pods.csv:3: ", {"qos", "Premium"}));
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,ls,Running,0,10,0")),
                        "pods.csv:3: ", {"qos", "ls"}));
}

TEST(ReaderErrors, DeletionBeforeCreation) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text("p1,1000,2048,1,500,,LS,Running,100,99,100")),
                        "pods.csv:3: ", {"deletion_time 99", "creation_time 100"}));
}

TEST(ReaderErrors, EmptyNames) {
  EXPECT_TRUE(IsErrorAt(pod_error(pods_text(",1000,2048,1,500,,LS,Running,0,10,0")),
                        "pods.csv:3: ", {"name"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text(",32000,262144,0,")), "nodes.csv:3: ", {"sn"}));
}

// Errors about the whole file carry no line number: "file: reason".
TEST(ReaderErrors, EmptyFile) {
  EXPECT_TRUE(IsErrorAt(pod_error(""), "pods.csv: ", {"empty"}));
  EXPECT_TRUE(IsErrorAt(pod_error("\n\r\n\n"), "pods.csv: ", {"empty"}));
  EXPECT_TRUE(IsErrorAt(node_error(""), "nodes.csv: ", {"empty"}));
}

TEST(ReaderErrors, HeaderOnly) {
  EXPECT_TRUE(IsErrorAt(pod_error(kPodHeader), "pods.csv: ", {"no pods"}));
  EXPECT_TRUE(
      IsErrorAt(pod_error(std::string(kMultiGpuHeader) + "\n\n"), "pods.csv: ", {"no pods"}));
  EXPECT_TRUE(IsErrorAt(node_error(kNodeHeader), "nodes.csv: ", {"no nodes"}));
}

TEST(ReaderErrors, NodeGpuAndModelMustAgree) {
  EXPECT_TRUE(
      IsErrorAt(node_error(nodes_text("n1,96000,393216,8,")), "nodes.csv:3: ", {"model", "empty"}));
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,96000,393216,0,T4")),
                        "nodes.csv:3: ", {"model", "T4", "no GPU"}));
}

TEST(ReaderErrors, NodeWithTooManyGpus) {
  EXPECT_TRUE(IsErrorAt(node_error(nodes_text("n1,96000,393216,17,G2")),
                        "nodes.csv:3: ", {"gpu", "17", "16"}));
}

TEST(ReaderErrors, ErrorReportsTheFirstBadRow) {
  // Rows 3 and 4 are both bad; the error is about row 3.
  const std::string text =
      pods_text("p1,1000,2048,1,1001,,LS,Running,0,10,0") + "p2,x,2048,1,500,,LS,Running,0,10,0\n";
  EXPECT_TRUE(IsErrorAt(pod_error(text), "pods.csv:3: ", {"gpu_milli"}));
  // The bad row can be far down.
  std::string many(kMultiGpuHeader);
  for (int i = 0; i < 40; ++i) many += fmt::format("m{},1,2,1,500\n", i);
  many += "m,1,2,1,5000\n";
  EXPECT_TRUE(IsErrorAt(pod_error(many), "pods.csv:42: ", {"gpu_milli", "5000"}));
}

TEST(ReaderFiles, MissingFileNamesThePath) {
  const std::string path = (std::filesystem::temp_directory_path() / "greensched-no-such-dir-8c1f" /
                            "openb_pod_list_missing.csv")
                               .string();
  GpuModelRegistry models;
  auto pods = read_openb_pods(path, models);
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.error().find(path), std::string::npos) << pods.error();
  auto nodes = read_openb_nodes(path, models);
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.error().find(path), std::string::npos) << nodes.error();
  auto w = load_openb_workload(path, path);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().find(path), std::string::npos) << w.error();
}

TEST(ReaderFiles, ReadsFilesAndNamesThePathInRowErrors) {
  const testing::ScratchDir scratch;
  const std::string nodes_path =
      scratch.write("nodes.csv", std::string(kNodeHeader) + "n0,8000,1024,2,NEWGPU\n");
  const std::string pods_path =
      scratch.write("pods.csv", std::string(kMultiGpuHeader) + "a,1,2,1,500\nb,1,3,1,500\n");
  const std::string bad_path =
      scratch.write("bad.csv", std::string(kMultiGpuHeader) + "a,1,2,1,500\nb,1,2,3,500\n");

  auto w = load_openb_workload(nodes_path, pods_path);
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_EQ(w.value().nodes.size(), 1u);
  EXPECT_EQ(w.value().nodes[0].model, *w.value().models.find("NEWGPU"));
  EXPECT_EQ(w.value().pods.size(), 2u);
  EXPECT_EQ(w.value().shape_count, 1u);  // same shape; memory does not count
  EXPECT_EQ(w.value().nodes_source, nodes_path);
  EXPECT_EQ(w.value().pods_source, pods_path);

  GpuModelRegistry models;
  auto bad = read_openb_pods(bad_path, models);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(IsErrorAt(bad.error(), bad_path + ":3: ", {"num_gpu 3"}));
}

// ---------------------------------------------------------------------------------------------
// Shape ids

TEST(TraceShapes, EqualRequestsShareAnIdWhateverTheMemory) {
  GpuModelRegistry models;
  const GpuModelSet t4 = model_bit(models, "T4");
  const GpuModelSet p100 = model_bit(models, "P100");
  std::vector<PodSpec> pods = {
      make_pod(1000, 2048, 1, 500),             // 0: shape 0
      make_pod(1000, 9999, 1, 500),             // 1: memory differs -> shape 0
      make_pod(2000, 2048, 1, 500),             // 2: cpu differs -> shape 1
      make_pod(1000, 2048, 1, 600),             // 3: gpu_milli differs -> shape 2
      make_pod(1000, 2048, 2, 1000),            // 4: shape 3
      make_pod(1000, 2048, 1, 1000),            // 5: num_gpu differs from 4 -> shape 4
      make_pod(1000, 2048, 1, 500, t4),         // 6: gpu_spec differs from 0 -> shape 5
      make_pod(1000, 1, 1, 500, t4),            // 7: = 6 -> shape 5
      make_pod(1000, 2048, 1, 500, p100),       // 8: shape 6
      make_pod(1000, 2048, 1, 500, t4 | p100),  // 9: shape 7
      make_pod(1000, 0, 1, 500),                // 10: = 0
      make_pod(1000, 2048, 0, 0),               // 11: shape 8
  };
  const uint32_t count = assign_shape_ids(pods);
  EXPECT_EQ(count, 9u);
  const uint32_t expected[] = {0, 0, 1, 2, 3, 4, 5, 5, 6, 7, 0, 8};
  for (std::size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(pods[i].shape, expected[i]) << "pod " << i;
  }
  // Full pairwise check: same id exactly when the four request fields agree.
  for (std::size_t i = 0; i < pods.size(); ++i) {
    for (std::size_t j = 0; j < pods.size(); ++j) {
      const bool same =
          pods[i].cpu_milli == pods[j].cpu_milli && pods[i].num_gpu == pods[j].num_gpu &&
          pods[i].gpu_milli == pods[j].gpu_milli && pods[i].gpu_spec == pods[j].gpu_spec;
      EXPECT_EQ(pods[i].shape == pods[j].shape, same) << i << " vs " << j;
    }
  }
  // Re-assigning is stable.
  EXPECT_EQ(assign_shape_ids(pods), count);
  for (std::size_t i = 0; i < pods.size(); ++i) EXPECT_EQ(pods[i].shape, expected[i]);

  std::vector<PodSpec> none;
  EXPECT_EQ(assign_shape_ids(none), 0u);
}

// ---------------------------------------------------------------------------------------------
// Inflation

std::vector<PodSpec> mixed_pods() {
  return {
      make_pod(4000, 8192, 0, 0),      make_pod(3152, 5600, 1, 810),
      make_pod(11908, 47104, 1, 470),  make_pod(1000, 1024, 1, 230),
      make_pod(11300, 49152, 1, 1000), make_pod(8000, 16384, 2, 1000),
      make_pod(6000, 12288, 1, 460),   make_pod(2000, 2048, 0, 0),
      make_pod(32000, 65536, 4, 1000), make_pod(3000, 4096, 1, 650),
      make_pod(5000, 8192, 1, 320),    make_pod(88000, 327680, 8, 1000),
  };
}

std::vector<PodSpec> single_gpu_pods() {
  return {
      make_pod(4000, 8192, 0, 0),   make_pod(3152, 5600, 1, 810),    make_pod(11908, 47104, 1, 470),
      make_pod(1000, 1024, 1, 230), make_pod(11300, 49152, 1, 1000), make_pod(6000, 12288, 1, 460),
      make_pod(3000, 4096, 1, 650), make_pod(5000, 8192, 1, 320),
  };
}

constexpr uint64_t kSeeds[] = {1, 2, 42, 2023, 0xDEADBEEFULL};

void ExpectStartsWithPermutation(const std::vector<uint32_t>& order, std::size_t n) {
  ASSERT_GE(order.size(), n);
  std::vector<uint32_t> head(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(head.begin(), head.end());
  std::vector<uint32_t> iota(n);
  std::iota(iota.begin(), iota.end(), 0U);
  EXPECT_EQ(head, iota);
  for (uint32_t i : order) EXPECT_LT(i, n);
}

TEST(Inflation, StartsWithAPermutationAndFollowsTheStopRule) {
  const std::vector<PodSpec> pods = mixed_pods();
  const int64_t capacity = 40000;
  const int64_t base =
      total_gpu_milli(pods, std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  ASSERT_EQ(base, 810 + 470 + 230 + 1000 + 2000 + 460 + 4000 + 650 + 320 + 8000);
  for (double tune : {1.0, 1.3, 2.0}) {
    for (uint64_t seed : kSeeds) {
      SCOPED_TRACE(::testing::Message() << "tune " << tune << " seed " << seed);
      Rng rng(seed);
      const std::vector<uint32_t> order = inflate(pods, tune, capacity, rng);
      ExpectStartsWithPermutation(order, pods.size());
      const double target = tune * static_cast<double>(capacity);
      ASSERT_GT(order.size(), pods.size());  // the target is well above the trace's total

      // Every appended pod passed the per-GPU check against the total before it.
      int64_t total = base;
      for (std::size_t k = pods.size(); k < order.size(); ++k) {
        const PodSpec& p = pods[order[k]];
        EXPECT_LE(static_cast<double>(total + p.gpu_milli), target) << "position " << k;
        total += p.total_gpu_milli();
      }
      EXPECT_EQ(total, total_gpu_milli(pods, order));

      // Replaying the generator: the appended pods are the uniform draws after the shuffle, and
      // the draw after the last one is the first that would overshoot.
      Rng replay(seed);
      std::vector<uint32_t> perm(pods.size());
      std::iota(perm.begin(), perm.end(), 0U);
      replay.shuffle(std::span<uint32_t>(perm));
      EXPECT_TRUE(std::equal(perm.begin(), perm.end(), order.begin()));
      for (std::size_t k = pods.size(); k < order.size(); ++k) {
        EXPECT_EQ(replay.uniform(pods.size()), order[k]) << "position " << k;
      }
      const uint64_t stop = replay.uniform(pods.size());
      EXPECT_GT(static_cast<double>(total + pods[stop].gpu_milli), target);
    }
  }
}

TEST(Inflation, SingleGpuPodsNeverExceedTheTarget) {
  const std::vector<PodSpec> pods = single_gpu_pods();
  for (double tune : {0.9, 1.0, 1.5}) {
    for (uint64_t seed : kSeeds) {
      SCOPED_TRACE(::testing::Message() << "tune " << tune << " seed " << seed);
      const int64_t capacity = 30000;
      Rng rng(seed);
      const std::vector<uint32_t> order = inflate(pods, tune, capacity, rng);
      ExpectStartsWithPermutation(order, pods.size());
      const double target = tune * static_cast<double>(capacity);
      const int64_t total = total_gpu_milli(pods, order);
      // Per-GPU milli is the whole request for these pods, so the sum stays under the target
      // and ends within one GPU of it (the discarded draw asked for at most 1000).
      EXPECT_LE(static_cast<double>(total), target);
      EXPECT_GT(static_cast<double>(total + kGpuMilli), target);
    }
  }
}

TEST(Inflation, FillsExactlyToTheTarget) {
  // Only 500-milli pods: the total reaches the target exactly and never passes it.
  const std::vector<PodSpec> pods = {make_pod(1000, 1024, 1, 500), make_pod(2000, 1024, 1, 500)};
  for (uint64_t seed : kSeeds) {
    Rng rng(seed);
    const std::vector<uint32_t> order = inflate(pods, 1.0, 10000, rng);
    EXPECT_EQ(order.size(), 20u) << "seed " << seed;
    EXPECT_EQ(total_gpu_milli(pods, order), 10000);
  }
}

TEST(Inflation, MultiGpuPodIsCheckedByItsPerGpuShare) {
  // The reference compares total + gpu_milli (per GPU) with the target, so an 8-GPU pod is
  // admitted at 8000 + 1000 <= 12000 and takes the total to 16000.
  const std::vector<PodSpec> pods = {make_pod(88000, 327680, 8, 1000)};
  for (uint64_t seed : kSeeds) {
    Rng rng(seed);
    const std::vector<uint32_t> order = inflate(pods, 1.0, 12000, rng);
    EXPECT_EQ(order, (std::vector<uint32_t>{0, 0})) << "seed " << seed;
  }
}

TEST(Inflation, TargetBelowTheTraceKeepsJustThePermutation) {
  const std::vector<PodSpec> pods = mixed_pods();
  for (uint64_t seed : kSeeds) {
    Rng rng(seed);
    const std::vector<uint32_t> order = inflate(pods, 0.5, 10000, rng);
    EXPECT_EQ(order.size(), pods.size()) << "seed " << seed;
    ExpectStartsWithPermutation(order, pods.size());
  }
}

TEST(Inflation, SameSeedSameOrder) {
  const std::vector<PodSpec> pods = mixed_pods();
  std::vector<std::vector<uint32_t>> orders;
  for (uint64_t seed : kSeeds) {
    Rng a(seed);
    Rng b(seed);
    const auto x = inflate(pods, 1.3, 40000, a);
    const auto y = inflate(pods, 1.3, 40000, b);
    EXPECT_EQ(x, y) << "seed " << seed;
    orders.push_back(x);
  }
  // Different seeds give different orders (12! permutations; these seeds do differ).
  for (std::size_t i = 0; i < orders.size(); ++i) {
    for (std::size_t j = i + 1; j < orders.size(); ++j) EXPECT_NE(orders[i], orders[j]);
  }
}

TEST(Inflation, CpuOnlyInputReturnsThePermutation) {
  const std::vector<PodSpec> pods = {make_pod(1000, 1024, 0, 0), make_pod(2000, 2048, 0, 0),
                                     make_pod(3000, 4096, 0, 0), make_pod(500, 512, 0, 0)};
  for (uint64_t seed : kSeeds) {
    Rng rng(seed);
    const std::vector<uint32_t> order = inflate(pods, 1.3, 1000000, rng);
    EXPECT_EQ(order.size(), pods.size()) << "seed " << seed;
    ExpectStartsWithPermutation(order, pods.size());
  }
  Rng rng(1);
  EXPECT_TRUE(inflate(std::span<const PodSpec>(), 1.3, 1000000, rng).empty());
}

// ---------------------------------------------------------------------------------------------
// Built-in workload

TEST(BuiltinWorkload, MatchesTheOpenbStatistics) {
  const Workload w = builtin_openb_workload();
  EXPECT_EQ(w.nodes.size(), 1213u);
  int64_t gpus = 0;
  for (const NodeSpec& n : w.nodes) {
    gpus += n.gpu_count;
    EXPECT_GT(n.gpu_count, 0);
    EXPECT_NE(n.model, kNoGpuModel);
    EXPECT_LT(n.model, w.models.size());
  }
  EXPECT_EQ(gpus, 6212);

  EXPECT_EQ(w.pods.size(), 8152u);
  int cpu_only = 0;
  int sharing = 0;
  int64_t gpu_request = 0;
  for (const PodSpec& p : w.pods) {
    if (p.num_gpu == 0) ++cpu_only;
    if (p.num_gpu == 1 && p.gpu_milli < kGpuMilli) ++sharing;
    gpu_request += p.total_gpu_milli();
    EXPECT_LT(p.shape, w.shape_count);
    EXPECT_EQ(p.gpu_spec, 0u);  // default has no model constraints
  }
  EXPECT_EQ(cpu_only, 1088);
  EXPECT_EQ(sharing, 3078);
  EXPECT_EQ(gpu_request, 6086800);

  // Shape ids are what assign_shape_ids gives.
  std::vector<PodSpec> copy = w.pods;
  EXPECT_EQ(assign_shape_ids(copy), w.shape_count);
  for (std::size_t i = 0; i < copy.size(); ++i) ASSERT_EQ(copy[i].shape, w.pods[i].shape);
}

// ---------------------------------------------------------------------------------------------
// Real data (../shared/data/openb)

using greensched::testing::openb_path;

struct PodFileCase {
  const char* variant;
  std::size_t rows;
};

class TraceRealPodList : public ::testing::TestWithParam<PodFileCase> {};

TEST(TraceRealNodes, NodeListsParse) {
  GREENSCHED_REQUIRE_OPENB();
  GpuModelRegistry models;
  auto gpu = read_openb_nodes(openb_path("openb_node_list_gpu_node.csv"), models);
  ASSERT_TRUE(gpu.ok()) << gpu.error();
  EXPECT_EQ(gpu.value().size(), 1213u);
  int64_t gpus = 0;
  for (const NodeSpec& n : gpu.value()) {
    gpus += n.gpu_count;
    EXPECT_GT(n.gpu_count, 0) << n.name;
  }
  EXPECT_EQ(gpus, 6212);

  GpuModelRegistry all_models;
  auto all = read_openb_nodes(openb_path("openb_node_list_all_node.csv"), all_models);
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_EQ(all.value().size(), 1523u);
  int64_t all_gpus = 0;
  int cpu_only = 0;
  for (const NodeSpec& n : all.value()) {
    all_gpus += n.gpu_count;
    if (n.gpu_count == 0) {
      ++cpu_only;
      EXPECT_EQ(n.model, kNoGpuModel) << n.name;
    }
  }
  EXPECT_EQ(all_gpus, 6212);
  EXPECT_EQ(cpu_only, 310);
}

TEST_P(TraceRealPodList, ParsesEveryRow) {
  GREENSCHED_REQUIRE_OPENB();
  GpuModelRegistry models;
  auto nodes = read_openb_nodes(openb_path("openb_node_list_gpu_node.csv"), models);
  ASSERT_TRUE(nodes.ok()) << nodes.error();
  const std::string file = std::string("openb_pod_list_") + GetParam().variant + ".csv";
  auto pods = read_openb_pods(openb_path(file), models);
  ASSERT_TRUE(pods.ok()) << pods.error();
  EXPECT_EQ(pods.value().size(), GetParam().rows);
  const bool reduced = std::string_view(GetParam().variant).starts_with("multigpu");
  for (const PodSpec& p : pods.value()) {
    // Invariants the reader guarantees.
    ASSERT_TRUE(p.num_gpu == 0 ? p.gpu_milli == 0 : p.gpu_milli > 0) << p.name;
    ASSERT_TRUE(p.num_gpu <= 1 || p.gpu_milli == kGpuMilli) << p.name;
    if (reduced) {
      ASSERT_EQ(p.creation_time, -1) << p.name;
      ASSERT_EQ(p.qos, Qos::kUnknown) << p.name;
    } else {
      ASSERT_GE(p.creation_time, 0) << p.name;
      ASSERT_GE(p.deletion_time, p.creation_time) << p.name;
      ASSERT_NE(p.qos, Qos::kUnknown) << p.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    TraceOpenb, TraceRealPodList,
    ::testing::Values(PodFileCase{"default", 8152}, PodFileCase{"gpushare20", 8152},
                      PodFileCase{"gpushare40", 8152}, PodFileCase{"gpushare60", 8152},
                      PodFileCase{"gpushare80", 8152}, PodFileCase{"gpushare100", 8152},
                      PodFileCase{"gpuspec05", 8152}, PodFileCase{"gpuspec10", 8152},
                      PodFileCase{"gpuspec20", 8152}, PodFileCase{"gpuspec25", 8152},
                      PodFileCase{"gpuspec33", 8152}, PodFileCase{"cpu0", 7064},
                      PodFileCase{"cpu037", 7336}, PodFileCase{"cpu050", 7439},
                      PodFileCase{"cpu072", 7608}, PodFileCase{"cpu100", 7853},
                      PodFileCase{"cpu200", 8832}, PodFileCase{"cpu235", 9240},
                      PodFileCase{"cpu250", 9420}, PodFileCase{"cpu300", 10094},
                      PodFileCase{"multigpu20", 8324}, PodFileCase{"multigpu30", 8508},
                      PodFileCase{"multigpu40", 8746}, PodFileCase{"multigpu50", 9061}),
    [](const ::testing::TestParamInfo<PodFileCase>& info) {
      return std::string(info.param.variant);
    });

TEST(TraceRealPods, DefaultStatistics) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = load_openb_workload(openb_path("openb_node_list_gpu_node.csv"),
                               openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  int cpu_only = 0;
  int sharing = 0;
  int pending = 0;
  int64_t gpu_request = 0;
  std::map<Qos, int> qos;
  for (const PodSpec& p : w.value().pods) {
    if (p.num_gpu == 0) ++cpu_only;
    if (p.shares_gpu()) ++sharing;
    if (p.scheduled_time < 0) ++pending;
    gpu_request += p.total_gpu_milli();
    ++qos[p.qos];
    EXPECT_EQ(p.gpu_spec, 0u);
    EXPECT_LT(p.shape, w.value().shape_count);
  }
  EXPECT_EQ(cpu_only, 1088);
  EXPECT_EQ(sharing, 3078);
  EXPECT_EQ(pending, 897);
  EXPECT_EQ(gpu_request, 6086800);
  EXPECT_EQ(qos[Qos::kLS], 4647);
  EXPECT_EQ(qos[Qos::kBE], 3398);
  EXPECT_EQ(qos[Qos::kBurstable], 100);
  EXPECT_EQ(qos[Qos::kGuaranteed], 7);
}

TEST(TraceRealPods, GpuSpecVariantConstrainsSomePods) {
  GREENSCHED_REQUIRE_OPENB();
  auto w = load_openb_workload(openb_path("openb_node_list_gpu_node.csv"),
                               openb_path("openb_pod_list_gpuspec33.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  const GpuModelRegistry& models = w.value().models;
  const GpuModelSet v100s = model_bit(models, "V100M16") | model_bit(models, "V100M32");
  int constrained = 0;
  int v100_pair = 0;
  for (const PodSpec& p : w.value().pods) {
    if (p.gpu_spec != 0) {
      ++constrained;
      EXPECT_TRUE(p.needs_gpu()) << p.name;
    }
    if (p.gpu_spec == v100s) ++v100_pair;
  }
  // About a third of the 7064 GPU pods, and the "V100M16|V100M32" rows occur.
  EXPECT_GT(constrained, 7064 / 4);
  EXPECT_LT(constrained, 7064 / 2);
  EXPECT_GT(v100_pair, 0);
}

// The built-in workload is the same multiset of nodes and pod requests as the real files.
TEST(TraceRealPods, BuiltinMatchesTheFiles) {
  GREENSCHED_REQUIRE_OPENB();
  auto real = load_openb_workload(openb_path("openb_node_list_gpu_node.csv"),
                                  openb_path("openb_pod_list_default.csv"));
  ASSERT_TRUE(real.ok()) << real.error();
  const Workload builtin = builtin_openb_workload();

  auto node_key = [](const Workload& w) {
    std::vector<std::tuple<std::string, int, int64_t, int64_t>> keys;
    for (const NodeSpec& n : w.nodes) {
      keys.emplace_back(w.models.name(n.model), n.gpu_count, n.cpu_milli, n.memory_mib);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  auto pod_key = [](const Workload& w) {
    std::vector<std::tuple<int64_t, int64_t, int, int32_t>> keys;
    for (const PodSpec& p : w.pods) {
      keys.emplace_back(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  EXPECT_TRUE(node_key(real.value()) == node_key(builtin));
  EXPECT_TRUE(pod_key(real.value()) == pod_key(builtin));
  EXPECT_EQ(real.value().shape_count, builtin.shape_count);
}

}  // namespace
}  // namespace greensched::trace
