// greensched convert (src/greensched/convert/): small hand-written kubectl and Slurm dumps to
// the exact openb rows and summary counts they give, the CSVs read back by the openb readers
// and replayed with every pod started, and bad input reported as "file:line: reason".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "greensched/convert/convert_kubectl.hpp"
#include "greensched/convert/convert_sacct.hpp"
#include "greensched/convert/convert_summary.hpp"
#include "greensched/convert/gpu_names.hpp"
#include "greensched/frag/target_workload.hpp"
#include "greensched/power/power_model.hpp"
#include "greensched/sim/replay.hpp"
#include "greensched/trace/workload.hpp"
#include "scratch_dir.hpp"

namespace greensched::convert {
namespace {

// One item a line: item k of "items" is on line k + 1.
const std::string kNodesJson = R"({"kind":"NodeList","apiVersion":"v1","items":[
{"metadata":{"name":"gpu-a","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB","nvidia.com/gpu.memory":"40960"}},"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":"4"}}},
{"metadata":{"name":"gpu-b","labels":{"alibabacloud.com/gpu-card-model":"T4"}},"status":{"allocatable":{"cpu":"32","memory":"128Gi","alibabacloud.com/gpu-count":"2"}}},
{"metadata":{"name":"cpu-1"},"status":{"allocatable":{"cpu":"16","memory":"64Gi"}}},
{"metadata":{"name":"gpu-c"},"status":{"capacity":{"cpu":"96","memory":"512Gi","nvidia.com/gpu":"8"}}},
{"metadata":{"name":"bad"}}
]}
)";

// A GPU share by HAMi's gpumem (10 GiB of gpu-a's 40 GiB), two whole GPUs (one of two models
// known), a CPU-only pod without qosClass, a finished Alibaba share, a pending HAMi gpucores
// share, and a malformed CPU request.
const std::string kPodsJson = R"({"kind":"PodList","apiVersion":"v1","items":[
{"metadata":{"name":"share","namespace":"ml","creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"nodeName":"gpu-a","containers":[{"name":"c","resources":{"requests":{"cpu":"4","memory":"8Gi"},"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"10240"}}}]},"status":{"phase":"Running","qosClass":"Burstable","startTime":"2024-01-01T00:00:10Z"}},
{"metadata":{"name":"whole","namespace":"ml","creationTimestamp":"2024-01-01T00:01:00Z","annotations":{"alibabacloud.com/gpu-card-model":"A100|Z9"}},"spec":{"nodeName":"gpu-a","containers":[{"name":"c","resources":{"requests":{"cpu":"8","memory":"32Gi"},"limits":{"nvidia.com/gpu":"2"}}}]},"status":{"phase":"Running","qosClass":"Guaranteed","startTime":"2024-01-01T00:01:05Z"}},
{"metadata":{"name":"web","creationTimestamp":"2024-01-01T00:02:00Z"},"spec":{"nodeName":"cpu-1","priority":1000,"containers":[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]},"status":{"phase":"Running","startTime":"2024-01-01T00:02:01Z"}},
{"metadata":{"name":"done","creationTimestamp":"2024-01-01T00:03:00Z","annotations":{"alibabacloud.com/gpu-milli":"500"}},"spec":{"nodeName":"gpu-b","containers":[{"name":"c","resources":{"requests":{"cpu":"2","memory":"4Gi"}}}]},"status":{"phase":"Succeeded","qosClass":"Burstable","startTime":"2024-01-01T00:03:02Z","containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":0,"finishedAt":"2024-01-01T00:30:00Z"}}}]}},
{"metadata":{"name":"wait","creationTimestamp":"2024-01-01T00:04:00Z"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"2Gi"},"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"30"}}}]},"status":{"phase":"Pending","qosClass":"BestEffort"}},
{"metadata":{"name":"broken","creationTimestamp":"2024-01-01T00:05:00Z"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]},"status":{"phase":"Pending"}}
]}
)";

const std::string kSacct =
    "JobID|JobName|Partition|Submit|Start|End|Elapsed|State|AllocCPUS|ReqMem|AllocTRES|ReqTRES|"
    "NNodes|NodeList\n"
    "100|train|gpu|2024-03-01T10:00:00|2024-03-01T10:00:05|2024-03-01T11:00:05|01:00:00|"
    "COMPLETED|8|64G|billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1||1|g01\n"
    "100.batch|batch||2024-03-01T10:00:05|2024-03-01T10:00:05|2024-03-01T11:00:05|01:00:00|"
    "COMPLETED|8||cpu=8,gres/gpu=2,mem=64G,node=1||1|g01\n"
    "101|prep|cpu|2024-03-01T10:05:00|2024-03-01T10:05:01|Unknown|00:10:00|RUNNING|4|4000M|"
    "billing=4,cpu=4,mem=4000M,node=1||1|c01\n"
    "102|big|gpu|2024-03-01T10:10:00|2024-03-01T10:10:10|2024-03-01T10:40:10|00:30:00|"
    "FAILED|32|128G|cpu=32,gres/gpu=8,mem=128G,node=2||2|g[01-02]\n"
    "103|queued|gpu|2024-03-01T10:20:00|Unknown|Unknown|00:00:00|PENDING|0|16G||"
    "billing=2,cpu=2,gres/gpu=1,mem=16G,node=1|1|None assigned\n"
    "104|oops|gpu|yesterday|Unknown|Unknown|00:00:00|PENDING|0|16G||cpu=2|1|\n"
    "105|short\n";

const std::string kScontrol =
    "NodeName=g01 Arch=x86_64 CPUTot=64 RealMemory=515000 Gres=gpu:a100:4(S:0-1) State=IDLE "
    "OS=Linux 5.15.0-91-generic #101-Ubuntu\n"
    "NodeName=g02 CPUTot=64 RealMemory=515000 Gres=gpu:a100:4 State=MIXED\n"
    "NodeName=c01 CPUTot=32 RealMemory=128000 Gres=(null) State=IDLE\n"
    "NodeName=g03 CPUTot=32 RealMemory=128000 Gres=gpu:2 State=IDLE\n"
    "NodeName=bad CPUTot=lots RealMemory=1\n";

std::vector<std::string> csv_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

void expect_counts(const TableSummary& t, int64_t rows, int64_t kept, int64_t inferred,
                   int64_t dropped) {
  SCOPED_TRACE(t.what);
  EXPECT_EQ(t.rows, rows);
  EXPECT_EQ(t.kept, kept);
  EXPECT_EQ(t.inferred, inferred);
  EXPECT_EQ(t.dropped, dropped);
  EXPECT_EQ(t.rows, t.kept + t.inferred + t.dropped + t.skipped);
  EXPECT_EQ(static_cast<int64_t>(t.inferences.size()), t.inferred);
  EXPECT_EQ(static_cast<int64_t>(t.drops.size()), t.dropped);
}

Result<ConvertOutput> kubectl_sample() {
  return convert_kubectl(SourceText{"nodes.json", kNodesJson}, SourceText{"pods.json", kPodsJson});
}

TEST(ConvertKubectl, NodesRowsAndSummary) {
  auto r = kubectl_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(csv_lines(r.value().nodes_csv),
            (std::vector<std::string>{"sn,cpu_milli,memory_mib,gpu,model",
                                      "gpu-a,64000,262144,4,A100", "gpu-b,32000,131072,2,T4",
                                      "cpu-1,16000,65536,0,", "gpu-c,96000,524288,8,unlabelled"}));
  const TableSummary& nodes = r.value().summary.tables.at(0);
  EXPECT_EQ(nodes.what, "nodes");
  expect_counts(nodes, 5, 2, 2, 1);
  EXPECT_EQ(nodes.inferences.at(0).where(), "nodes.json:2");
  EXPECT_EQ(nodes.inferences.at(0).what, "GPU model A100 from the label 'NVIDIA-A100-SXM4-40GB'");
  EXPECT_EQ(nodes.inferences.at(1).where(), "nodes.json:5");
  EXPECT_NE(nodes.inferences.at(1).what.find("GPU model 'unlabelled'"), std::string::npos);
  // simulate's built-in power model has no figures for 'unlabelled': the summary says so.
  bool power_note = false;
  for (const std::string& note : r.value().summary.notes) {
    power_note = power_note || note.starts_with("GPU model(s) unlabelled have no figures");
  }
  EXPECT_TRUE(power_note);
  EXPECT_EQ(nodes.drops.at(0).where(), "nodes.json:6");
  EXPECT_EQ(nodes.drops.at(0).what, "Node bad: status missing (no allocatable resources)");
}

TEST(ConvertKubectl, PodsRowsAndSummary) {
  auto r = kubectl_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(csv_lines(r.value().pods_csv),
            (std::vector<std::string>{
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                "creation_time,deletion_time,scheduled_time",
                "ml/share,4000,8192,1,250,,Burstable,Running,0,1800,10",
                "ml/whole,8000,32768,2,1000,A100,Guaranteed,Running,60,1800,65",
                "default/web,500,1024,0,0,,LS,Running,120,1800,121",
                "default/done,2000,4096,1,500,,Burstable,Succeeded,180,1800,182",
                "default/wait,1000,2048,1,300,,BE,Pending,240,1800,"}));
  const TableSummary& pods = r.value().summary.tables.at(1);
  EXPECT_EQ(pods.what, "pods");
  expect_counts(pods, 6, 1, 4, 1);
  ASSERT_EQ(pods.inferences.size(), 4U);
  EXPECT_EQ(pods.inferences[0].where(), "pods.json:2");
  EXPECT_EQ(pods.inferences[0].what, "deletion_time 1800: Running (not finished), the dump's end");
  EXPECT_EQ(pods.inferences[1].where(), "pods.json:3");
  EXPECT_NE(pods.inferences[1].what.find("left out model(s) no node has: Z9"), std::string::npos);
  EXPECT_EQ(pods.inferences[2].where(), "pods.json:4");
  EXPECT_NE(pods.inferences[2].what.find("qos LS: no status.qosClass, spec.priority 1000"),
            std::string::npos);
  EXPECT_EQ(pods.inferences[3].where(), "pods.json:6");
  ASSERT_EQ(pods.drops.size(), 1U);
  EXPECT_EQ(pods.drops[0].where(), "pods.json:7");
  EXPECT_TRUE(pods.drops[0].what.starts_with("Pod.spec.containers[0].resources.requests[cpu]:"))
      << pods.drops[0].what;
  const nlohmann::json j = summary_json(r.value().summary);
  EXPECT_EQ(j["tables"][1]["dropped"], 1);
  EXPECT_EQ(j["tables"][1]["drops"][0]["at"], "pods.json:7");
  EXPECT_EQ(j["source"], "kubectl");
}

TEST(ConvertKubectl, GpumemWithoutKnownGpuMemoryTakesAWholeGpuAndSaysSo) {
  const std::string pods = R"({"kind":"PodList","items":[
{"metadata":{"name":"p","creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"nodeName":"gpu-b","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"4000"}}}]},"status":{"phase":"Running","startTime":"2024-01-01T00:00:00Z"}}
]})";
  auto r = convert_kubectl(SourceText{"nodes.json", kNodesJson}, SourceText{"pods.json", pods});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(csv_lines(r.value().pods_csv).at(1), "default/p,0,0,1,1000,,,Running,0,0,0");
  const TableSummary& t = r.value().summary.tables.at(1);
  ASSERT_EQ(t.inferences.size(), 1U);
  EXPECT_NE(t.inferences[0].what.find("whole GPU(s): nvidia.com/gpumem 4000 MiB, but the node's "
                                      "GPU memory is unknown"),
            std::string::npos)
      << t.inferences[0].what;
}

TEST(ConvertKubectl, ItemLinesOfPrettyPrintedJson) {
  const std::string text = nlohmann::json::parse(kNodesJson).dump(2);
  const std::vector<std::size_t> lines = item_lines(text);
  ASSERT_EQ(lines.size(), 5U);
  // Each item starts on a line holding just "{", after "items": [.
  for (std::size_t line : lines) {
    std::size_t start = 0;
    for (std::size_t l = 1; l < line; ++l) start = text.find('\n', start) + 1;
    EXPECT_EQ(text.substr(start, text.find('\n', start) - start), "    {");
  }
  EXPECT_LT(lines[0], lines[1]);
  EXPECT_EQ(item_lines(R"({"x":{"items":[1,2]},"items":[ "a" ,
"b"]})"),
            (std::vector<std::size_t>{1, 2}));
}

Result<ConvertOutput> sacct_sample() {
  return convert_sacct(SourceText{"jobs.txt", kSacct}, SourceText{"nodes.txt", kScontrol});
}

TEST(ConvertSacct, NodesRowsAndSummary) {
  auto r = sacct_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(csv_lines(r.value().nodes_csv),
            (std::vector<std::string>{"sn,cpu_milli,memory_mib,gpu,model",
                                      "g01,64000,515000,4,A100", "g02,64000,515000,4,A100",
                                      "c01,32000,128000,0,", "g03,32000,128000,2,unlabelled"}));
  const TableSummary& nodes = r.value().summary.tables.at(0);
  expect_counts(nodes, 5, 1, 3, 1);
  EXPECT_EQ(nodes.inferences.at(0).where(), "nodes.txt:1");
  EXPECT_EQ(nodes.inferences.at(0).what, "GPU model A100 from Gres 'a100'");
  EXPECT_EQ(nodes.inferences.at(2).where(), "nodes.txt:4");
  EXPECT_EQ(nodes.drops.at(0).where(), "nodes.txt:5");
  EXPECT_EQ(nodes.drops.at(0).what, "node bad: CPUTot missing or not a count");
}

TEST(ConvertSacct, JobsRowsAndSummary) {
  auto r = sacct_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(csv_lines(r.value().pods_csv),
            (std::vector<std::string>{
                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                "creation_time,deletion_time,scheduled_time",
                "100,8000,65536,2,1000,A100,,Succeeded,0,3605,5",
                "101,4000,4000,0,0,,,Running,300,3605,301",
                "102/0,16000,65536,4,1000,,,Failed,600,2410,610",
                "102/1,16000,65536,4,1000,,,Failed,600,2410,610",
                "103,2000,16384,1,1000,,,Pending,1200,3605,"}));
  const TableSummary& jobs = r.value().summary.tables.at(1);
  // The job step (line 3) is skipped by design, not dropped.
  expect_counts(jobs, 7, 0, 4, 2);
  EXPECT_EQ(jobs.skipped, 1);
  EXPECT_EQ(jobs.skip_reason, "job steps: their job's own line counts");
  ASSERT_EQ(jobs.drops.size(), 2U);
  EXPECT_EQ(jobs.drops[0].where(), "jobs.txt:7");
  EXPECT_TRUE(jobs.drops[0].what.starts_with("Submit: bad time 'yesterday'")) << jobs.drops[0].what;
  EXPECT_EQ(jobs.drops[1].where(), "jobs.txt:8");
  EXPECT_EQ(jobs.drops[1].what, "expected 14 '|'-separated fields as in the header, got 2");
  ASSERT_EQ(jobs.inferences.size(), 4U);
  EXPECT_EQ(jobs.inferences[0].what, "GPU model A100 from gres/gpu:a100");
  EXPECT_EQ(jobs.inferences[2].where(), "jobs.txt:5");
  EXPECT_NE(jobs.inferences[2].what.find("ran on 2 nodes: written as 2 pods 102/0..102/1"),
            std::string::npos);
  bool says_utc = false;
  for (const std::string& note : r.value().summary.notes) {
    says_utc = says_utc || note.find("read as UTC") != std::string::npos;
  }
  EXPECT_TRUE(says_utc);
}

TEST(ConvertSacct, JobsAloneAndTrailingBarOfParsable) {
  const std::string text =
      "JobID|Submit|Start|End|State|AllocCPUS|ReqMem|AllocTRES|\n"
      "7|2024-03-01T00:00:00|2024-03-01T00:00:00|2024-03-01T00:01:00|COMPLETED|2|1000Mc|"
      "cpu=2,gres/gpu:h100=1|\n";
  auto r = convert_sacct(SourceText{"j.txt", text}, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r.value().nodes_csv.empty());
  EXPECT_EQ(csv_lines(r.value().pods_csv).at(1), "7,2000,2000,1,1000,H100,,Succeeded,0,60,0");
  expect_counts(r.value().summary.tables.at(0), 1, 0, 1, 0);
}

TEST(ConvertGpuNames, ProductStringsToRegistryNames) {
  EXPECT_EQ(canonical_gpu_model("a100"), "A100");
  EXPECT_EQ(canonical_gpu_model("NVIDIA-A100-SXM4-80GB"), "A100-80G");
  EXPECT_EQ(canonical_gpu_model("Tesla-V100-SXM2-16GB"), "V100M16");
  EXPECT_EQ(canonical_gpu_model("Tesla-T4"), "T4");
  EXPECT_EQ(canonical_gpu_model("NVIDIA-H100-80GB-HBM3"), "H100");
  EXPECT_EQ(canonical_gpu_model("mystery"), "mystery");
  EXPECT_EQ(models_without_power({OpenbNodeRow{"a", 1000, 1, 1, "T4"},
                                  OpenbNodeRow{"b", 1000, 1, 1, "H800"},
                                  OpenbNodeRow{"c", 1000, 1, 1, "H800"}}),
            (std::vector<std::string>{"H800"}));
}

// The converted CSVs read back by the openb readers `greensched simulate` uses, replayed: every
// pod starts.
void expect_round_trip(ConvertOutput out, std::size_t nodes, std::size_t pods) {
  testing::ScratchDir dir;
  const std::string target = dir.file("out");
  ASSERT_TRUE(write_converted(out, target).ok());
  EXPECT_EQ(out.summary.tables.at(0).output, dir.file("out/nodes.csv"));
  auto w = trace::load_openb_workload(dir.file("out/nodes.csv"), dir.file("out/pods.csv"));
  ASSERT_TRUE(w.ok()) << w.error();
  EXPECT_EQ(w.value().nodes.size(), nodes);
  ASSERT_EQ(w.value().pods.size(), pods);
  power::NodePower p;
  p.gpu = power::GpuPower{10, 70};
  p.cpu.name = "test-cpu";
  p.cpu.idle_watts = 15;
  p.cpu.max_watts = 120;
  p.cpu.cores_per_socket = 16;
  const std::vector<power::NodePower> power(w.value().nodes.size(), p);
  sim::ReplayConfig c;
  c.policy = "fgd";
  auto r = sim::run_replay(w.value(), frag::build_target_workload(w.value().pods), power, 1.0, c);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value().pods_total, static_cast<int64_t>(pods));
  EXPECT_EQ(r.value().pods_started, static_cast<int64_t>(pods));
  EXPECT_EQ(r.value().pods_never_started, 0);
}

TEST(ConvertRoundTrip, KubectlCsvsReadBackAndReplay) {
  auto r = kubectl_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  expect_round_trip(std::move(r.value()), 4, 5);
}

TEST(ConvertRoundTrip, SacctCsvsReadBackAndReplay) {
  auto r = sacct_sample();
  ASSERT_TRUE(r.ok()) << r.error();
  expect_round_trip(std::move(r.value()), 4, 5);
}

// ---- bad input: "file:line: reason", never an exception ----------------------------------

std::string kubectl_error(const std::string& nodes, const std::string& pods = kPodsJson) {
  auto r = convert_kubectl(SourceText{"n.json", nodes}, SourceText{"p.json", pods});
  return r.ok() ? "ok" : r.error();
}

std::string sacct_error(const std::string& jobs, const std::string& nodes = kScontrol) {
  auto r = convert_sacct(SourceText{"j.txt", jobs}, SourceText{"s.txt", nodes});
  return r.ok() ? "ok" : r.error();
}

TEST(ConvertBadInput, KubectlMalformedFilesSayFileAndLine) {
  EXPECT_TRUE(kubectl_error("{\n  \"items\": [\n    {,\n").starts_with("n.json:3: not JSON"))
      << kubectl_error("{\n  \"items\": [\n    {,\n");
  EXPECT_TRUE(kubectl_error("").starts_with("n.json:1: empty file")) << kubectl_error("");
  EXPECT_TRUE(kubectl_error(kPodsJson).starts_with("n.json:1: kind PodList, expected NodeList"))
      << kubectl_error(kPodsJson);
  EXPECT_TRUE(kubectl_error("[1, 2]").starts_with("n.json:1: expected a v1.NodeList"));
  EXPECT_TRUE(kubectl_error("{\"kind\":\"NodeList\"}").starts_with("n.json:1: no \"items\" array"));
  EXPECT_TRUE(kubectl_error(std::string(1000, '[')).starts_with("n.json:1: not JSON: nested"));
  EXPECT_TRUE(kubectl_error(kNodesJson, "{\"kind\":\"PodList\",\"items\":[\n1\n]}")
                  .starts_with("p.json: no pod could be converted (1 item(s); first dropped: "
                               "p.json:2: a JSON number, not a Pod object)"))
      << kubectl_error(kNodesJson, "{\"kind\":\"PodList\",\"items\":[\n1\n]}");
  EXPECT_TRUE(kubectl_error(kNodesJson, "{\"items\":[\n\n{\"kind\":\"Pod\"}, 7]}")
                  .starts_with("p.json: no pod could be converted (2 item(s); first dropped: "
                               "p.json:3: Pod.metadata: missing)"))
      << kubectl_error(kNodesJson, "{\"items\":[\n\n{\"kind\":\"Pod\"}, 7]}");
}

TEST(ConvertBadInput, KubectlDuplicateAndBadTimesAreDroppedWithReasons) {
  const std::string pods = R"({"kind":"PodList","items":[
{"metadata":{"name":"a","creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"containers":[]},"status":{"phase":"Pending"}},
{"metadata":{"name":"a","creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"containers":[]},"status":{"phase":"Pending"}},
{"metadata":{"name":"b","creationTimestamp":"noon"},"spec":{"containers":[]}},
{"metadata":{"name":"c"},"spec":{"containers":[]}},
{"metadata":{"name":"d","creationTimestamp":"2024-01-01T00:00:00Z"},"spec":{"containers":[]},"status":{"phase":"Failed","containerStatuses":[{"state":{"terminated":{"finishedAt":"2023-12-31T00:00:00Z"}}}]}}
]})";
  auto r = convert_kubectl(SourceText{"n.json", kNodesJson}, SourceText{"p.json", pods});
  ASSERT_TRUE(r.ok()) << r.error();
  const TableSummary& t = r.value().summary.tables.at(1);
  expect_counts(t, 5, 0, 1, 4);
  ASSERT_EQ(t.drops.size(), 4U);
  EXPECT_EQ(t.drops[0].where(), "p.json:3");
  EXPECT_EQ(t.drops[0].what, "duplicate pod default/a (first on line 2)");
  EXPECT_EQ(t.drops[1].where(), "p.json:4");
  EXPECT_TRUE(t.drops[1].what.starts_with("metadata.creationTimestamp: 'noon':"))
      << t.drops[1].what;
  EXPECT_EQ(t.drops[2].where(), "p.json:5");
  EXPECT_EQ(t.drops[2].what, "metadata.creationTimestamp: missing (no creation time)");
  EXPECT_EQ(t.drops[3].where(), "p.json:6");
  EXPECT_TRUE(t.drops[3].what.starts_with("finishes (2023-12-31 00:00:00) before its creation"))
      << t.drops[3].what;
}

TEST(ConvertBadInput, SacctMalformedFilesSayFileAndLine) {
  EXPECT_TRUE(sacct_error("\nhello world\n").starts_with("j.txt:2: no sacct header"))
      << sacct_error("\nhello world\n");
  EXPECT_TRUE(sacct_error("").starts_with("j.txt:1: empty file"));
  EXPECT_TRUE(sacct_error("JobID|Submit\n1.batch|2024-01-01T00:00:00\nx|y\n")
                  .starts_with("j.txt: no job could be converted (2 row(s); first dropped: "
                               "j.txt:3: Submit: bad time 'y'"))
      << sacct_error("JobID|Submit\n1.batch|2024-01-01T00:00:00\nx|y\n");
  EXPECT_TRUE(sacct_error(kSacct, "NodeName=a CPUTot=1\n   RealMemory=5\n")
                  .starts_with("s.txt:2: a node continues on this line"))
      << sacct_error(kSacct, "NodeName=a CPUTot=1\n   RealMemory=5\n");
  EXPECT_TRUE(sacct_error(kSacct, "hello\n").starts_with("s.txt:1: no NodeName= line"));
}

TEST(ConvertBadInput, SacctBadFieldsAreDroppedWithReasons) {
  const std::string jobs =
      "JobID|Submit|End|AllocCPUS|ReqMem|AllocTRES\n"
      "1|2024-01-01T00:00:00|2024-01-01T01:00:00|2|lots|cpu=2\n"
      "2|2024-01-01T00:00:00|2024-01-01T01:00:00|2|1G|cpu=2,gres/gpu=x\n"
      "3|2024-01-01T00:00:00|2024-01-01T01:00:00|2|1G|cpu=2,gres/gpu=40\n"
      "4|2024-01-01T00:00:00|2024-01-01T01:00:00|2|1G|cpu=2,gres/gpu:z9=1\n"
      "5|2024-01-01T00:00:00|2024-01-01T01:00:00|2|1G|cpu=2\n";
  auto r = convert_sacct(SourceText{"j.txt", jobs}, SourceText{"s.txt", kScontrol});
  ASSERT_TRUE(r.ok()) << r.error();
  const TableSummary& t = r.value().summary.tables.at(1);
  expect_counts(t, 5, 0, 1, 4);
  ASSERT_EQ(t.drops.size(), 4U);
  EXPECT_EQ(t.drops[0].where(), "j.txt:2");
  EXPECT_EQ(t.drops[0].what, "ReqMem: 'lots' is not a size");
  EXPECT_EQ(t.drops[1].where(), "j.txt:3");
  EXPECT_EQ(t.drops[1].what, "AllocTRES: gres/gpu: 'x' is not a count");
  EXPECT_EQ(t.drops[2].where(), "j.txt:4");
  EXPECT_EQ(t.drops[2].what, "40 GPUs on one node; at most 16 per node are supported");
  EXPECT_EQ(t.drops[3].where(), "j.txt:5");
  EXPECT_EQ(t.drops[3].what, "asks only for GPU model(s) no node has: z9");
}

// CPU counts past 2^20 are refused, not multiplied into milli-CPUs past int64's range.
TEST(ConvertBadInput, SacctHugeCpuCountsAreDroppedWithReasons) {
  const std::string jobs =
      "JobID|Submit|End|AllocCPUS|ReqMem|AllocTRES\n"
      "1|2024-01-01T00:00:00|2024-01-01T01:00:00|184467440737505901|1G|cpu=2\n"
      "2|2024-01-01T00:00:00|2024-01-01T01:00:00|2|1G|cpu=2\n";
  const std::string nodes =
      "NodeName=g01 CPUTot=184467440737505901 RealMemory=1000 Gres=gpu:a100:4\n"
      "NodeName=g02 CPUTot=64 RealMemory=1000 Gres=gpu:a100:4\n";
  auto r = convert_sacct(SourceText{"j.txt", jobs}, SourceText{"s.txt", nodes});
  ASSERT_TRUE(r.ok()) << r.error();
  const TableSummary& n = r.value().summary.tables.at(0);
  ASSERT_EQ(n.drops.size(), 1U);
  EXPECT_EQ(n.drops[0].where(), "s.txt:1");
  EXPECT_EQ(n.drops[0].what, "node g01: CPUTot 184467440737505901 is over 1048576");
  const TableSummary& j = r.value().summary.tables.at(1);
  ASSERT_EQ(j.drops.size(), 1U);
  EXPECT_EQ(j.drops[0].where(), "j.txt:2");
  EXPECT_EQ(j.drops[0].what, "184467440737505901 CPUs is over 1048576");
}

}  // namespace
}  // namespace greensched::convert
