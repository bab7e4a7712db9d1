// The monitor subsystem's commands as a user runs them: greensched profile (table, JSON,
// CSVs, --predict), monitor (JSON lines, the stand-in NVML, --listen), calibrate (a model that
// simulate --power-model accepts) and multi --predict-durations.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "scratch_dir.hpp"
#include "test_data.hpp"

namespace {

namespace fs = std::filesystem;
using greensched::testing::openb_path;

struct CommandResult {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class MonitorCli : public ::testing::Test {
 protected:
  // Runs `greensched ARGS` with optional environment assignments in front.
  CommandResult run(const std::string& args, const std::string& env = "") {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string cmd = env + (env.empty() ? "" : " ") + "'" + GREENSCHED_BINARY + "' " + args +
                            " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    CommandResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  const greensched::testing::ScratchDir scratch_;
  const fs::path& dir_ = scratch_.dir();
};

TEST_F(MonitorCli, ProfileJsonTableAndCsvs) {
  GREENSCHED_REQUIRE_OPENB();
  const std::string pods = openb_path("openb_pod_list_default.csv");
  CommandResult j = run("profile --pods '" + pods + "' --json");
  ASSERT_EQ(j.rc, 0) << j.err;
  const auto json = nlohmann::json::parse(j.out);
  EXPECT_EQ(json["pods"], 8152);
  EXPECT_NEAR(json["share_cpu_only"].get<double>(), 0.133, 0.0005);
  EXPECT_NEAR(json["share_shared_gpu"].get<double>(), 0.378, 0.0005);
  EXPECT_NEAR(json["share_one_gpu"].get<double>(), 0.480, 0.0005);
  EXPECT_NEAR(json["share_multi_gpu"].get<double>(), 0.009, 0.0005);
  EXPECT_NEAR(json["requested_gpus"].get<double>(), 6086.8, 0.05);

  CommandResult t =
      run("profile --pods '" + pods + "' --predict --out '" + (dir_ / "p").string() + "'");
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("shared_gpu"), std::string::npos);
  EXPECT_NE(t.out.find("global median"), std::string::npos);
  for (const char* f :
       {"profile_kinds.csv", "profile_gpu_milli.csv", "profile_vcpu_per_gpu.csv",
        "profile_memory_per_gpu.csv", "profile_gpu_models.csv", "profile_qos.csv",
        "profile_lifetime_hours.csv", "profile_arrivals_by_hour.csv", "profile_arrivals_by_day.csv",
        "profile_target_workload.csv", "profile_prediction.csv"}) {
    EXPECT_TRUE(fs::exists(dir_ / "p" / f)) << f;
  }
  EXPECT_EQ(slurp(dir_ / "p" / "profile_arrivals_by_hour.csv").rfind("hour,pods\n0,", 0), 0U);
}

TEST_F(MonitorCli, ProfileFiveColumnVariantAndItsPredictError) {
  GREENSCHED_REQUIRE_OPENB();
  const std::string pods = openb_path("openb_pod_list_multigpu50.csv");
  CommandResult ok = run("profile --pods '" + pods + "'");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("no creation/deletion times"), std::string::npos);
  CommandResult bad = run("profile --pods '" + pods + "' --predict");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("no creation/deletion times"), std::string::npos) << bad.err;
}

TEST_F(MonitorCli, MonitorWritesJsonLinesWithTheStandInNvml) {
  const fs::path jsonl = dir_ / "m.jsonl";
  CommandResult r = run("monitor --interval 100ms --count 3 --jsonl '" + jsonl.string() + "'",
                        std::string("GREENSCHED_NVML_LIBRARY='") + GREENSCHED_FAKE_NVML + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("3 readings"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("% of one core"), std::string::npos) << r.err;
  std::istringstream lines(slurp(jsonl));
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    ++n;
    EXPECT_EQ(j["seq"], n);
    ASSERT_EQ(j["gpus"].size(), 2U);
    EXPECT_EQ(j["gpus"][0]["name"], "NVIDIA A100-SXM4-40GB");
    EXPECT_DOUBLE_EQ(j["gpus"][0]["power_watts"].get<double>(), 123.456);
    EXPECT_TRUE(j.contains("cpu"));
    EXPECT_TRUE(j.contains("memory"));
  }
  EXPECT_EQ(n, 3);
  // The unsupported energy counter of the stand-in's T4 is reported once, not per reading.
  std::size_t notes = 0;
  for (std::size_t p = r.err.find("nvmlDeviceGetTotalEnergyConsumption"); p != std::string::npos;
       p = r.err.find("nvmlDeviceGetTotalEnergyConsumption", p + 1)) {
    ++notes;
  }
  EXPECT_EQ(notes, 1U) << r.err;
}

TEST_F(MonitorCli, MonitorWithoutGpuOrDriverIsNotAnError) {
  CommandResult r = run("monitor --interval 50ms --count 2 --listen 127.0.0.1:0",
                        "GREENSCHED_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("GPUs (NVML) skipped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/metrics"), std::string::npos) << r.err;
  CommandResult bad = run("monitor --interval 0s --count 1");
  EXPECT_EQ(bad.rc, 2);
}

TEST_F(MonitorCli, CalibrateWritesAModelThatSimulateAccepts) {
  // Synthetic readings of one T4: 15 W idle, 65 W max, 1 W noise.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 1);
  std::ofstream out(dir_ / "s.jsonl");
  for (int i = 1; i <= 200; ++i) {
    const double util = u(rng);
    nlohmann::json j = {{"seq", i},
                        {"time_s", 1000 + i},
                        {"interval_s", 1},
                        {"host", "h"},
                        {"gpus",
                         {{{"index", 0},
                           {"name", "Tesla T4"},
                           {"utilization", util},
                           {"power_watts", 15 + 50 * util + noise(rng)}}}}};
    out << j.dump() << "\n";
  }
  out.close();
  // --out is a folder: the model is OUT/power-model.json.
  const std::string model = (dir_ / "calibrated" / "power-model.json").string();
  CommandResult c = run("calibrate --samples '" + (dir_ / "s.jsonl").string() + "' --out '" +
                        (dir_ / "calibrated").string() + "'");
  ASSERT_EQ(c.rc, 0) << c.err << c.out;
  EXPECT_NE(c.out.find("T4"), std::string::npos);
  EXPECT_NE(c.out.find("not fitted: cpu"), std::string::npos) << c.out;
  const auto j = nlohmann::json::parse(slurp(model));
  EXPECT_NEAR(j["gpus"]["T4"]["idle_watts"].get<double>(), 15, 0.75);
  EXPECT_NEAR(j["gpus"]["T4"]["max_watts"].get<double>(), 65, 3.25);
  CommandResult s = run("simulate --policy pwr --seeds 42 -q --json --power-model '" + model + "'");
  EXPECT_EQ(s.rc, 0) << s.err;
  CommandResult none =
      run("calibrate --samples '" + (dir_ / "s.jsonl").string() + "' --out x --min-samples 1000");
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("nothing could be fitted"), std::string::npos) << none.err;
}

TEST_F(MonitorCli, MultiWithPredictedDurations) {
  CommandResult r = run("multi --agent green --predict-durations --days 5 -q --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1U);
  EXPECT_EQ(j[0]["agent"], "green");
  EXPECT_EQ(j[0]["jobs_never_started"], 0);
}

}  // namespace
