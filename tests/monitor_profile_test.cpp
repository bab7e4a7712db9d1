// Acceptance (c): the workload profiler reproduces the default openb trace's known figures,
// and every openb pod-list variant (full and 5-column schemas) profiles without error.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "greensched/core/text_file.hpp"
#include "greensched/monitor/profile_report.hpp"
#include "greensched/monitor/workload_profile.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace greensched::monitor {
namespace {

namespace fs = std::filesystem;
using greensched::testing::openb_path;

TEST(WorkloadProfile, HandComputedPods) {
  GpuModelRegistry models;
  auto pods = trace::parse_openb_pods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "a,4000,8192,0,0,,BE,Running,0,7200,0\n"
      "b,8000,16384,1,500,T4,LS,Running,3600,10800,3600\n"
      "c,16000,32768,1,1000,,LS,Running,90000,93600,90000\n"
      "d,32000,65536,4,1000,V100M16|V100M32,Burstable,Running,90000,97200,90000\n",
      "t", models);
  ASSERT_TRUE(pods.ok()) << pods.error();
  const WorkloadProfile p = profile_workload(pods.value(), models, "t");
  EXPECT_EQ(p.pods, 4);
  EXPECT_EQ(p.gpu_pods, 3);
  EXPECT_DOUBLE_EQ(p.requested_gpus, 5.5);
  for (int k = 0; k < kPodKinds; ++k) EXPECT_DOUBLE_EQ(p.kinds[k].pod_share, 0.25);
  EXPECT_DOUBLE_EQ(p.kinds[3].gpu_share, 4.0 / 5.5);
  EXPECT_EQ(p.gpu_milli[4].pods, 1);   // 401-500
  EXPECT_EQ(p.gpu_milli[10].pods, 2);  // whole GPUs
  // vCPU per GPU: shared 8 / 0.5 = 16, one GPU 16, multi 32 / 4 = 8.
  EXPECT_DOUBLE_EQ(p.cpu_per_gpu[0].d.p50, 16.0);
  EXPECT_DOUBLE_EQ(p.cpu_per_gpu[2].d.p50, 8.0);
  EXPECT_DOUBLE_EQ(p.memory_per_gpu[3].d.max, 32.0);  // gpu_pods: 16 GiB / 0.5
  EXPECT_EQ(p.constrained_pods, 2);
  ASSERT_EQ(p.gpu_models.size(), 4U);  // any, T4, V100M16, V100M32
  EXPECT_EQ(p.gpu_models[0].pods, 1);
  ASSERT_EQ(p.qos.size(), 3U);
  EXPECT_EQ(p.timed_pods, 4);
  EXPECT_DOUBLE_EQ(p.lifetime_hours[4].d.p50, 2.0);  // all: 2, 2, 1, 2 hours
  EXPECT_EQ(p.arrivals_by_hour[0], 1);
  EXPECT_EQ(p.arrivals_by_hour[1], 3);  // 3600 s and 90000 s (day 1, 01:00)
  EXPECT_EQ(p.arrivals_by_day.size(), 2U);
  EXPECT_EQ(p.target.trace_pods, 4);
}

TEST(WorkloadProfile, DefaultTraceKnownFigures) {
  GREENSCHED_REQUIRE_OPENB();
  GpuModelRegistry models;
  auto pods = trace::read_openb_pods(openb_path("openb_pod_list_default.csv"), models);
  ASSERT_TRUE(pods.ok()) << pods.error();
  const WorkloadProfile p = profile_workload(pods.value(), models, "default");
  EXPECT_EQ(p.pods, 8152);
  EXPECT_NEAR(100 * p.kinds[0].pod_share, 13.3, 0.05);
  EXPECT_NEAR(100 * p.kinds[1].pod_share, 37.8, 0.05);
  EXPECT_NEAR(100 * p.kinds[2].pod_share, 48.0, 0.05);
  EXPECT_NEAR(100 * p.kinds[3].pod_share, 0.9, 0.05);
  EXPECT_NEAR(p.requested_gpus, 6086.8, 0.05);
  EXPECT_EQ(p.timed_pods, 8152);
  int64_t by_hour = 0;
  for (int64_t n : p.arrivals_by_hour) by_hour += n;
  EXPECT_EQ(by_hour, 8152);
  // FGD's target workload of the default trace: 35 of 91 shapes (README).
  EXPECT_EQ(p.target.shapes.size(), 35U);
  EXPECT_EQ(p.target.distinct_shapes, 91U);

  const nlohmann::json j = profile_json(p, models);
  for (const char* key : {"pods", "share_cpu_only", "share_shared_gpu", "share_one_gpu",
                          "share_multi_gpu", "requested_gpus"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NEAR(j["share_shared_gpu"].get<double>(), 0.378, 0.0005);

  // The CSVs: every file has its header and a row per entry.
  const auto files = profile_csvs(p, models);
  const testing::ScratchDir scratch;
  const fs::path& dir = scratch.dir();
  ASSERT_TRUE(write_text_files(dir.string(), files).ok());
  for (const auto& [name, text] : files) {
    EXPECT_EQ(name.rfind("profile_", 0), 0U);
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  }
  std::ifstream kinds(dir / "profile_kinds.csv");
  std::string header, row;
  std::getline(kinds, header);
  std::getline(kinds, row);
  EXPECT_EQ(header, "kind,pods,pod_share,gpus,gpu_share");
  EXPECT_EQ(row.rfind("cpu_only,1088,", 0), 0U) << row;
}

TEST(WorkloadProfile, EveryOpenbVariantProfiles) {
  GREENSCHED_REQUIRE_OPENB();
  int variants = 0;
  for (const auto& entry :
       fs::directory_iterator(greensched::testing::shared_data_dir() + "/openb")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("openb_pod_list_", 0) != 0 || entry.path().extension() != ".csv") continue;
    ++variants;
    GpuModelRegistry models;
    auto pods = trace::read_openb_pods(entry.path().string(), models);
    ASSERT_TRUE(pods.ok()) << pods.error();
    const WorkloadProfile p = profile_workload(pods.value(), models, name);
    EXPECT_EQ(p.pods, static_cast<int64_t>(pods.value().size())) << name;
    double shares = 0;
    for (const KindRow& k : p.kinds) shares += k.pod_share;
    EXPECT_NEAR(shares, 1.0, 1e-9) << name;
    EXPECT_GT(p.requested_gpus, 0) << name;
    EXPECT_FALSE(p.target.shapes.empty()) << name;
    EXPECT_FALSE(profile_table(p, models).empty());
    EXPECT_FALSE(profile_csvs(p, models).empty());
    if (name.find("multigpu") != std::string::npos) {
      EXPECT_EQ(p.timed_pods, 0) << name;  // the 5-column schema has no times
      EXPECT_GT(p.kinds[3].pod_share, 0.0) << name;
    }
    if (name.find("gpuspec") != std::string::npos) {
      EXPECT_GT(p.constrained_pods, 0) << name;
    }
  }
  EXPECT_EQ(variants, 24);
}

}  // namespace
}  // namespace greensched::monitor
