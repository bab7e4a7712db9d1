// Acceptance (d): calibration recovers known idle and max figures (within 5 %) from synthetic
// monitor readings generated with noise, and writes a model that --power-model accepts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "greensched/monitor/calibration.hpp"
#include "greensched/monitor/sample_json.hpp"
#include "greensched/power/power_model.hpp"

namespace greensched::power {
extern const char kBuiltinPowerModelJson[];
}

namespace greensched::monitor {
namespace {

struct Truth {
  const char* nvml_name;
  double idle, max;
};

// 600 one-second readings of a node with two sockets and four GPUs under a varying load:
// GPU power = idle + (max - idle) x util + N(0, 3 % of max); package power per socket the
// same with the CPU figures and N(0, 2 W), written as RAPL energy counters.
std::vector<NodeSample> synthetic_samples(const std::vector<Truth>& gpus, double cpu_idle,
                                          double cpu_max, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<NodeSample> out;
  double energy[2] = {0, 0};
  for (int i = 1; i <= 600; ++i) {
    NodeSample s;
    s.seq = static_cast<uint64_t>(i);
    s.time_s = 1.7e9 + i;
    s.interval_s = 1.0;
    s.host = "node-a";
    s.cpu_model = "Intel(R) Xeon(R) Platinum 8269CY CPU @ 2.50GHz";
    s.cores_per_socket = 26;
    s.has_cpu = true;
    for (int p = 0; p < 2; ++p) {
      const double u = uniform(rng);
      const double watts = cpu_idle + (cpu_max - cpu_idle) * u + 2.0 * noise(rng);
      energy[p] += watts * 1.0;
      s.packages.push_back(
          PackageEnergy{p, "intel-rapl:" + std::to_string(p), energy[p], watts, u, true});
    }
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      const double u = std::round(uniform(rng) * 100) / 100;  // NVML reports whole percent
      GpuReading r;
      r.index = static_cast<unsigned>(g);
      r.name = gpus[g].nvml_name;
      r.utilization = u;
      r.power_watts =
          gpus[g].idle + (gpus[g].max - gpus[g].idle) * u + 0.03 * gpus[g].max * noise(rng);
      s.gpus.push_back(r);
    }
    out.push_back(std::move(s));
  }
  return out;
}

const std::vector<std::string> kGpuKeys = {"T4",      "A10",  "P100", "V100M16",
                                           "V100M32", "A100", "G2",   "G3"};
const std::vector<std::string> kCpuKeys = {"Xeon E5-2682 v4", "Xeon Platinum 8269CY"};

TEST(Calibration, RecoversKnownFiguresWithinFivePercent) {
  const std::vector<Truth> truth = {{"Tesla T4", 11, 68},
                                    {"NVIDIA A100-SXM4-40GB", 55, 390},
                                    {"NVIDIA H100 80GB HBM3", 70, 690},
                                    {"NVIDIA A100-SXM4-40GB", 55, 390}};
  const auto samples = synthetic_samples(truth, 24, 190, 7);
  // Through the JSON line format, as the command reads them.
  std::string jsonl;
  for (const NodeSample& s : samples) jsonl += sample_to_json(s).dump() + "\n";
  auto read = read_samples_jsonl(jsonl, "synthetic.jsonl");
  ASSERT_TRUE(read.ok()) << read.error();
  const Calibration c = calibrate(read.value(), kGpuKeys, kCpuKeys, CalibrationOptions{});
  EXPECT_EQ(c.samples, 600);
  std::map<std::string, const CalibrationFit*> by_key;
  for (const CalibrationFit& f : c.fits) by_key[f.key] = &f;
  ASSERT_EQ(by_key.size(), 4U) << calibration_table(c);
  const auto check = [&](const std::string& key, double idle, double max, int64_t points) {
    ASSERT_TRUE(by_key.count(key)) << key << "\n" << calibration_table(c);
    const CalibrationFit& f = *by_key[key];
    EXPECT_NEAR(f.idle_watts, idle, 0.05 * idle) << key;
    EXPECT_NEAR(f.max_watts, max, 0.05 * max) << key;
    EXPECT_EQ(f.fit.n, points) << key;
    EXPECT_GT(f.fit.r2, 0.9) << key;
    EXPECT_GT(f.fit.mae, 0.0) << key;
  };
  check("T4", 11, 68, 600);
  check("A100", 55, 390, 1200);  // two GPUs of the model, pooled
  check("H100", 70, 690, 600);   // not in the base: a new entry named from the NVML name
  check("Xeon Platinum 8269CY", 24, 190, 2 * 599);  // pairs of consecutive readings
  EXPECT_EQ(by_key["Xeon Platinum 8269CY"]->cores_per_socket, 26);
  // The fit error is reported as it is: noise of 3 % of max gives an MAE near 0.8 x 3 %.
  EXPECT_NEAR(by_key["A100"]->fit.mae, 0.8 * 0.03 * 390, 0.3 * 0.8 * 0.03 * 390);

  auto model = calibrated_model_json(c, power::kBuiltinPowerModelJson, "built-in");
  ASSERT_TRUE(model.ok()) << model.error();
  auto loaded = power::PowerModel::parse(model.value(), "calibrated");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  const nlohmann::json j = nlohmann::json::parse(model.value());
  EXPECT_NEAR(j["gpus"]["A100"]["max_watts"].get<double>(), 390, 0.05 * 390);
  EXPECT_EQ(j["gpus"]["G3"]["same_as"], "A100");   // follows the measured A100
  EXPECT_EQ(j["gpus"]["P100"]["max_watts"], 250);  // not measured: kept from the base
  EXPECT_EQ(j["cpus"]["Xeon Platinum 8269CY"]["cores_per_socket"], 26);
  EXPECT_EQ(j["default_cpu"], "Xeon E5-2682 v4");
  EXPECT_NE(j["_comment"].get<std::string>().find("Calibrated by greensched calibrate"),
            std::string::npos);
  // The model resolves for a G3 node with the measured A100 figures.
  GpuModelRegistry models;
  const std::vector<NodeSpec> nodes{NodeSpec{"n", 96000, 1024, 8, *models.find("G3")}};
  auto figures = loaded.value().resolve(nodes, models);
  ASSERT_TRUE(figures.ok());
  EXPECT_NEAR(figures.value()[0].gpu.idle_watts, 55, 0.05 * 55);
}

TEST(Calibration, MapsNamesAndSkipsWhatCannotBeFitted) {
  const std::vector<Truth> truth = {{"Tesla V100-SXM2-16GB", 30, 300}};
  auto samples = synthetic_samples(truth, 20, 150, 11);
  CalibrationOptions opts;
  opts.cpu_key = "Xeon E5-2682 v4";
  Calibration c = calibrate(samples, kGpuKeys, kCpuKeys, opts);
  ASSERT_EQ(c.fits.size(), 2U) << calibration_table(c);
  EXPECT_EQ(c.fits[0].key, "V100M16");
  EXPECT_EQ(c.fits[1].key, "Xeon E5-2682 v4");
  opts.gpu_keys["Tesla V100-SXM2-16GB"] = "V100M32";
  c = calibrate(samples, kGpuKeys, kCpuKeys, opts);
  EXPECT_EQ(c.fits[0].key, "V100M32");

  // A GPU that sat idle the whole time: no spread in utilisation, so no fit (and no guess).
  for (NodeSample& s : samples) {
    s.gpus[0].utilization = 0.0;
    s.packages.clear();
  }
  c = calibrate(samples, kGpuKeys, kCpuKeys, opts);
  EXPECT_TRUE(c.fits.empty());
  ASSERT_EQ(c.skipped.size(), 2U);
  EXPECT_NE(c.skipped[0].find("do not vary"), std::string::npos) << c.skipped[0];
  EXPECT_NE(c.skipped[1].find("RAPL"), std::string::npos) << c.skipped[1];
}

TEST(Calibration, ModelKeysFromDeviceNames) {
  EXPECT_EQ(gpu_model_key("NVIDIA A10", kGpuKeys), "A10");
  EXPECT_EQ(gpu_model_key("NVIDIA A100-SXM4-80GB", kGpuKeys), "A100");
  EXPECT_EQ(gpu_model_key("Tesla V100-PCIE-32GB", kGpuKeys), "V100M32");
  EXPECT_EQ(gpu_model_key("NVIDIA GeForce RTX 4090", kGpuKeys), "RTX 4090");
  EXPECT_EQ(cpu_model_key("Intel(R) Xeon(R) CPU E5-2682 v4 @ 2.50GHz", kCpuKeys),
            "Xeon E5-2682 v4");
  EXPECT_EQ(cpu_model_key("AMD EPYC 7763 64-Core Processor", kCpuKeys), "AMD EPYC 7763");
}

TEST(LinearFit, ExactLineAndDegenerateInput) {
  const std::vector<double> x = {0, 0.5, 1, 0.25};
  const std::vector<double> y = {10, 40, 70, 25};
  auto f = fit_linear(x, y);
  ASSERT_TRUE(f.ok());
  EXPECT_NEAR(f.value().intercept, 10, 1e-9);
  EXPECT_NEAR(f.value().slope, 60, 1e-9);
  EXPECT_NEAR(f.value().r2, 1.0, 1e-12);
  EXPECT_NEAR(f.value().mae, 0.0, 1e-9);
  EXPECT_FALSE(fit_linear(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3}).ok());
  EXPECT_FALSE(fit_linear(std::vector<double>{1, 2}, std::vector<double>{1, 2}).ok());
}

}  // namespace
}  // namespace greensched::monitor
