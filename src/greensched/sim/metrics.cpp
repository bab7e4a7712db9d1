#include "greensched/sim/metrics.hpp"

#include <cmath>

namespace greensched::sim {

ArrivalCurve::ArrivalCurve(int64_t cluster_gpu_milli, int max_pct)
    : cluster_gpu_milli_(cluster_gpu_milli), bins_(static_cast<std::size_t>(max_pct) + 1) {}

int ArrivalCurve::record(int64_t arrived_gpu_milli, int64_t allocated_gpu_milli,
                         double frag_gpu_milli, double power_watts, int64_t placed_pods,
                         int64_t migrated_pods) {
  if (cluster_gpu_milli_ <= 0) return -1;
  const double cap = static_cast<double>(cluster_gpu_milli_);
  const auto bin = static_cast<std::size_t>(std::llround(arrived_gpu_milli / cap * 100.0));
  if (bin >= bins_.size()) bins_.resize(bin + 1);
  Bin& b = bins_[bin];
  ++b.events;
  b.alloc_sum += static_cast<double>(allocated_gpu_milli) / cap * 100.0;
  b.frag_sum += frag_gpu_milli;
  b.power_sum += power_watts;
  b.placed = placed_pods;
  b.migrated = migrated_pods;
  return static_cast<int>(bin);
}

std::vector<CurvePoint> ArrivalCurve::points() const {
  std::vector<CurvePoint> out;
  out.reserve(bins_.size());
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    const Bin& b = bins_[i];
    CurvePoint p;
    p.arrived_pct = static_cast<int>(i);
    p.events = b.events;
    if (b.events > 0) {
      p.alloc_gpu_pct = b.alloc_sum / static_cast<double>(b.events);
      p.frag_gpu_milli = b.frag_sum / static_cast<double>(b.events);
      p.power_watts = b.power_sum / static_cast<double>(b.events);
      p.placed_pods = b.placed;
      p.migrated_pods = b.migrated;
    }
    out.push_back(p);
  }
  return out;
}

std::optional<CurvePoint> point_at(const std::vector<CurvePoint>& curve, int pct) {
  if (pct < 0 || static_cast<std::size_t>(pct) >= curve.size()) return std::nullopt;
  const CurvePoint& p = curve[static_cast<std::size_t>(pct)];
  if (p.events == 0) return std::nullopt;
  return p;
}

}  // namespace greensched::sim
