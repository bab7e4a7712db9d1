// Reads one worker cluster off the request path: a background thread reads the cluster's
// state (a ClusterSource) and, when it has one, its HTTP carbon forecast, every period, each
// read bounded by a deadline, and keeps the last result for the dispatch service to take.
// A decision never waits on a cluster: it takes what was read last (take()), which holds the
// reader's mutex only to move a pointer and copy a few fields, never during I/O.
//
// Health: a read that fails, or that has not answered within its deadline, makes the cluster
// degraded; so does a last good read older than deadline + period. A degraded cluster keeps
// its last known state; one never read is no option.
//
// Stopping: the destructor asks the thread to stop and waits for it up to the deadline (a
// source that honours it, as the kube source does, returns by then). A source that blocks
// past it is left to finish on its own: the thread owns everything it touches (the source,
// its results) through a shared block, so it outlives the reader safely.
//
// GPU models: every site interns its models into one registry (SharedModels) so that a
// model id means the same at each. A read works on a copy and merges back what it added; when
// another site added models meanwhile, the read is made again on the merged registry.
//
// Thread-safe. Locks: the reader's own mutex and SharedModels::mu are never held together.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "greensched/core/gpu_model.hpp"
#include "greensched/dispatch/cluster_source.hpp"
#include "greensched/dispatch/signal_source.hpp"
#include "greensched/multi/time_series.hpp"
#include "greensched/serve/cluster_state.hpp"

namespace greensched::dispatch {

// The GPU model registry the sites' states share.
struct SharedModels {
  std::mutex mu;
  GpuModelRegistry models;
};

// A carbon forecast fetched over HTTP for one site (else the fleet file's series).
struct ForecastSource {
  std::string url;
  ForecastFormat format = ForecastFormat::kCarbonAwareSdk;
};

struct ReaderOptions {
  std::chrono::milliseconds deadline{1000};  // of one read
  std::chrono::milliseconds period{5000};    // between the starts of two reads
};

// What the service takes from a reader.
struct ReadResult {
  // A state read since the last take (nullptr: none new).
  std::unique_ptr<serve::ClusterState> fresh_state;
  std::optional<multi::TimeSeries> fresh_forecast;
  std::string forecast_error;  // why the last forecast fetch failed ("" = it did not)
  bool ever_read = false;      // a state was read once
  // Seconds since the last good read finished (when ever_read).
  double age_s = 0;
  // Why it is degraded ("" = it is not): the last read failed, a read is overdue, or the
  // last good read is older than deadline + period.
  std::string degraded;
  std::string error;  // the last read's error ("" = it was read)
  // Durations of the reads finished since the last take, in seconds.
  std::vector<double> read_seconds;
};

class ClusterReader {
 public:
  // Starts the thread, which reads at once.
  ClusterReader(std::string name, std::unique_ptr<ClusterSource> source,
                std::optional<ForecastSource> forecast, serve::StateOptions state_options,
                std::shared_ptr<SharedModels> models, ReaderOptions options);
  ~ClusterReader();
  ClusterReader(const ClusterReader&) = delete;
  ClusterReader& operator=(const ClusterReader&) = delete;

  const std::string& name() const { return name_; }
  std::string describe() const { return describe_; }
  // Waits until the first read has finished or `until` has passed; true when it finished.
  bool wait_first_read(std::chrono::steady_clock::time_point until);
  // What was read since the last take, and the cluster's health now.
  ReadResult take();

 private:
  struct Shared;
  static void run(std::shared_ptr<Shared> shared);

  std::string name_;
  std::string describe_;
  ReaderOptions options_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace greensched::dispatch
