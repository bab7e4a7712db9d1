#include "greensched/trace/synthetic_times.hpp"

#include <array>
#include <cmath>
#include <utility>

#include "greensched/core/rng.hpp"

namespace greensched::trace {
namespace {

// Lifetime quantiles of openb_pod_list_default.csv: (percentile, seconds).
constexpr std::array<std::pair<double, double>, 19> kLifetimeQuantiles{{
    {0, 0},      {1, 12},        {2, 24},         {5, 48},         {10, 80},
    {20, 146},   {30, 202},      {40, 301},       {50, 540},       {60, 883},
    {70, 1422},  {80, 2700},     {90, 6574},      {95, 16425},     {98, 40752},
    {99, 99719}, {99.5, 742962}, {99.9, 8772762}, {100, 12537496},
}};

// Arrivals per hour of day (trace time modulo one day) in the same trace.
constexpr std::array<double, 24> kArrivalsByHour{515, 456, 362, 436, 426, 318, 291, 331,
                                                 242, 146, 222, 204, 152, 149, 137, 271,
                                                 301, 425, 550, 466, 352, 430, 432, 538};

// Share of latency-sensitive pods (LS and Guaranteed) in the trace.
constexpr double kLatencySensitiveShare = (4647.0 + 7.0) / 8152.0;

double lifetime_at(double percentile) {
  for (std::size_t i = 1; i < kLifetimeQuantiles.size(); ++i) {
    const auto [p1, v1] = kLifetimeQuantiles[i];
    if (percentile <= p1) {
      const auto [p0, v0] = kLifetimeQuantiles[i - 1];
      return v0 + (v1 - v0) * (percentile - p0) / (p1 - p0);
    }
  }
  return kLifetimeQuantiles.back().second;
}

int draw_hour(Rng& rng) {
  double total = 0;
  for (double w : kArrivalsByHour) total += w;
  double u = rng.uniform_real() * total;
  for (int h = 0; h < 24; ++h) {
    if (u < kArrivalsByHour[h]) return h;
    u -= kArrivalsByHour[h];
  }
  return 23;
}

}  // namespace

void assign_synthetic_times(std::vector<PodSpec>& pods, uint64_t seed, int days) {
  Rng rng(seed);
  for (PodSpec& pod : pods) {
    const auto day = static_cast<int64_t>(rng.uniform(static_cast<uint64_t>(std::max(days, 1))));
    const int hour = draw_hour(rng);
    const auto second = static_cast<int64_t>(rng.uniform(3600));
    pod.creation_time = day * 86400 + hour * 3600 + second;
    pod.deletion_time = pod.creation_time +
                        static_cast<int64_t>(std::llround(lifetime_at(rng.uniform_real() * 100)));
    pod.qos = rng.uniform_real() < kLatencySensitiveShare ? Qos::kLS : Qos::kBE;
  }
}

}  // namespace greensched::trace
