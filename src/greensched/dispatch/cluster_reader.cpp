#include "greensched/dispatch/cluster_reader.hpp"

#include <condition_variable>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace greensched::dispatch {

using Clock = std::chrono::steady_clock;

struct ClusterReader::Shared {
  // Set before the thread starts, then only read.
  std::unique_ptr<ClusterSource> source;
  std::optional<ForecastSource> forecast;
  serve::StateOptions state_options;
  std::shared_ptr<SharedModels> models;
  ReaderOptions options;

  std::mutex mu;  // guards the rest
  std::condition_variable cv;
  bool stop = false;
  bool running = true;
  bool first_done = false;
  std::unique_ptr<serve::ClusterState> fresh_state;
  std::optional<multi::TimeSeries> fresh_forecast;
  std::string forecast_error;
  bool ever_read = false;
  Clock::time_point last_ok;
  std::string error;
  std::optional<Clock::time_point> in_flight_since;
  std::vector<double> read_seconds;
};

namespace {

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Reads the state on a copy of the shared registry and merges back the models it added; reads
// again when another site added models meanwhile (their ids would clash).
Result<std::unique_ptr<serve::ClusterState>> read_state(ClusterSource& source,
                                                        const serve::StateOptions& options,
                                                        SharedModels& shared, Deadline deadline) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    GpuModelRegistry local;
    {
      std::lock_guard lock(shared.mu);
      local = shared.models;
    }
    const std::size_t base = local.size();
    auto state = source.read(local, options, deadline);
    if (!state.ok()) return state;
    std::lock_guard lock(shared.mu);
    if (local.size() == base) return state;  // its ids are the shared ones
    if (shared.models.size() == base) {
      shared.models = std::move(local);
      return state;
    }
  }
  return Error{"the GPU models kept changing while the cluster was read"};
}

}  // namespace

ClusterReader::ClusterReader(std::string name, std::unique_ptr<ClusterSource> source,
                             std::optional<ForecastSource> forecast,
                             serve::StateOptions state_options,
                             std::shared_ptr<SharedModels> models, ReaderOptions options)
    : name_(std::move(name)),
      describe_(source->describe()),
      options_(options),
      shared_(std::make_shared<Shared>()) {
  shared_->source = std::move(source);
  shared_->forecast = std::move(forecast);
  shared_->state_options = std::move(state_options);
  shared_->models = std::move(models);
  shared_->options = options;
  thread_ = std::thread(&ClusterReader::run, shared_);
}

ClusterReader::~ClusterReader() {
  bool running = false;
  {
    std::unique_lock lock(shared_->mu);
    shared_->stop = true;
    shared_->cv.notify_all();
    // A read and a forecast fetch, each bounded by the deadline.
    const auto until = Clock::now() + 2 * options_.deadline + std::chrono::milliseconds(100);
    shared_->cv.wait_until(lock, until, [&] { return !shared_->running; });
    running = shared_->running;
  }
  if (running) {
    thread_.detach();  // its source blocks past the deadline; it owns all it touches
  } else {
    thread_.join();
  }
}

bool ClusterReader::wait_first_read(Clock::time_point until) {
  std::unique_lock lock(shared_->mu);
  return shared_->cv.wait_until(lock, until, [&] { return shared_->first_done; });
}

ReadResult ClusterReader::take() {
  std::lock_guard lock(shared_->mu);
  Shared& s = *shared_;
  ReadResult r;
  r.fresh_state = std::move(s.fresh_state);
  r.fresh_forecast = std::move(s.fresh_forecast);
  s.fresh_forecast.reset();
  r.forecast_error = s.forecast_error;
  r.ever_read = s.ever_read;
  r.error = s.error;
  r.read_seconds = std::move(s.read_seconds);
  s.read_seconds.clear();
  const Clock::time_point now = Clock::now();
  if (s.ever_read) r.age_s = seconds(now - s.last_ok);
  const double deadline_s = seconds(options_.deadline);
  if (!s.error.empty()) {
    r.degraded = fmt::format("its last read failed: {}", s.error);
  } else if (s.in_flight_since && now - *s.in_flight_since > options_.deadline) {
    r.degraded = fmt::format("no answer within {:.3g} s (reading for {:.1f} s)", deadline_s,
                             seconds(now - *s.in_flight_since));
  } else if (s.ever_read && now - s.last_ok > options_.deadline + options_.period) {
    r.degraded = fmt::format("its state is {:.1f} s old (read every {:.3g} s)", r.age_s,
                             seconds(options_.period));
  }
  return r;
}

void ClusterReader::run(std::shared_ptr<Shared> shared) {
  Shared& s = *shared;
  for (;;) {
    const Clock::time_point start = Clock::now();
    {
      std::lock_guard lock(s.mu);
      if (s.stop) break;
      s.in_flight_since = start;
    }
    auto state =
        read_state(*s.source, s.state_options, *s.models, Deadline(start + s.options.deadline));
    const Clock::time_point read_end = Clock::now();
    {
      std::lock_guard lock(s.mu);
      s.in_flight_since.reset();
      s.read_seconds.push_back(seconds(read_end - start));
      if (state.ok()) {
        s.fresh_state = std::move(state.value());
        s.ever_read = true;
        s.last_ok = read_end;
        s.error.clear();
      } else {
        s.error = state.error();
      }
    }
    if (s.forecast) {
      auto series = fetch_forecast(s.forecast->url, s.forecast->format, s.options.deadline);
      std::lock_guard lock(s.mu);
      if (series.ok()) {
        s.fresh_forecast = std::move(series.value());
        s.forecast_error.clear();
      } else {
        s.forecast_error = series.error();
      }
    }
    std::unique_lock lock(s.mu);
    s.first_done = true;
    s.cv.notify_all();
    if (s.cv.wait_until(lock, start + s.options.period, [&] { return s.stop; })) break;
  }
  std::lock_guard lock(s.mu);
  s.running = false;
  s.cv.notify_all();
}

}  // namespace greensched::dispatch
