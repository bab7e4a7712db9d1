// The allocation-versus-arrival curve as the published analysis bins it: each arrival event
// falls in bin x = round(arrived GPU milli / cluster GPU milli * 100), and a bin's figures are
// the means over its events.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace greensched::sim {

struct CurvePoint {
  int arrived_pct = 0;        // the bin
  int64_t events = 0;         // arrivals that fell in the bin; 0 = no data
  double alloc_gpu_pct = 0;   // mean allocated GPU milli / cluster GPU milli * 100
  double frag_gpu_milli = 0;  // mean cluster fragmentation F
  double power_watts = 0;     // mean facility power
  // Cumulative at the bin's last event: pods placed so far, and moves of running pods.
  int64_t placed_pods = 0;
  int64_t migrated_pods = 0;
};

class ArrivalCurve {
 public:
  ArrivalCurve(int64_t cluster_gpu_milli, int max_pct);

  // Returns the bin the event fell in.
  int record(int64_t arrived_gpu_milli, int64_t allocated_gpu_milli, double frag_gpu_milli,
             double power_watts = 0, int64_t placed_pods = 0, int64_t migrated_pods = 0);

  // Bins 0..max_pct (or further if arrivals went beyond it).
  std::vector<CurvePoint> points() const;

 private:
  struct Bin {
    int64_t events = 0;
    double alloc_sum = 0;
    double frag_sum = 0;
    double power_sum = 0;
    int64_t placed = 0;
    int64_t migrated = 0;
  };
  int64_t cluster_gpu_milli_;
  std::vector<Bin> bins_;
};

// The point of bin `pct`, if any arrival fell in it.
std::optional<CurvePoint> point_at(const std::vector<CurvePoint>& curve, int pct);

}  // namespace greensched::sim
