// CPU package energy from Intel RAPL through the powercap sysfs interface:
// <sys_root>/class/powercap/intel-rapl:N/{name,energy_uj,max_energy_range_uj}. The counter
// wraps at max_energy_range_uj; each read adds the wrapped difference to a running total, so
// the energy reported is the package's energy since the reader started.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched::monitor {

struct RaplZone {
  int package = 0;   // N of "package-N"
  std::string zone;  // directory name, e.g. intel-rapl:0
  std::string path;  // the directory
  uint64_t max_range_uj = 0;
  uint64_t last_uj = 0;
  double total_joules = 0;
};

// Energy difference between two counter reads, in µJ, given the wrap range (0: no wrap known;
// a smaller second read is then taken as a reset and counts 0).
uint64_t rapl_delta_uj(uint64_t before, uint64_t after, uint64_t max_range_uj);

class RaplReader {
 public:
  // Finds the package zones and reads each counter once. Fails (with the reason) when there
  // is no powercap tree, no package zone, or no counter is readable (root only since Linux
  // 5.10).
  static Result<RaplReader> open(const std::string& sys_root);

  // Reads every counter and adds the difference to the totals. A zone that cannot be read
  // this time keeps its total; its error is returned in `errors`.
  void read(std::vector<std::string>& errors);
  const std::vector<RaplZone>& zones() const { return zones_; }

 private:
  std::vector<RaplZone> zones_;
};

}  // namespace greensched::monitor
