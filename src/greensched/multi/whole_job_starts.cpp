#include "greensched/multi/whole_job_starts.hpp"

#include <deque>

namespace greensched::multi {
namespace {

// Per hour h: the least of v over [h, h + shift] (clipped to the end).
std::vector<double> window_min(const std::vector<double>& v, int64_t shift) {
  const std::size_t n = v.size();
  std::vector<double> least(n, 0.0);
  std::deque<std::size_t> window;  // indices, values ascending
  for (std::size_t i = n; i-- > 0;) {
    // Going backwards, the window of i is [i, i + shift]: drop what fell out, add i.
    while (!window.empty() && window.front() > i + static_cast<std::size_t>(shift)) {
      window.pop_front();
    }
    while (!window.empty() && v[window.back()] >= v[i]) window.pop_back();
    window.push_back(i);
    least[i] = v[window.front()];
  }
  return least;
}

}  // namespace

WholeJobPricing::WholeJobPricing(const WholeJobCosts& costs) : costs_(costs) {
  sites_ = costs.per_gpu_hour.size();
  hours_ = sites_ > 0 ? costs.per_gpu_hour[0].size() : 0;
  end_of_hours_ = static_cast<int64_t>(hours_) * kWholeJobHour;
  if (costs.pool_site.empty()) {
    for (std::size_t s = 0; s < sites_; ++s) {
      pool_site_.push_back(static_cast<int>(s));
      pool_type_.push_back(0);
      pool_capacity_.push_back(s < costs.capacity.size() ? costs.capacity[s] : 0.0);
    }
  } else {
    typed_ = true;
    pool_site_ = costs.pool_site;
    pool_type_ = costs.pool_type;
    pool_capacity_ = costs.pool_capacity;
    pool_type_.resize(pool_site_.size(), 0);
    pool_capacity_.resize(pool_site_.size(), 0.0);
  }
  cpu_capacity_ = costs.cpu_capacity;
  if (!cpu_capacity_.empty()) cpu_capacity_.resize(sites_, 0.0);
  // A move's transfer, per kWh: at the cheapest hour its dispatch could fall in (its
  // submission, or for BE work up to its slack later).
  const int64_t be_shift_h = (costs.be_slack_s + kWholeJobHour - 1) / kWholeJobHour;
  transfer_be_.resize(sites_);
  for (std::size_t s = 0; s < sites_; ++s) {
    transfer_be_[s] = window_min(costs.per_transfer_kwh[s], be_shift_h);
  }
  gpu_.resize(pools());
  if (!costs.per_cpu_kwh.empty()) {
    floor_.resize(sites_);
    for (std::size_t s = 0; s < sites_; ++s) floor_[s].set(costs.per_cpu_kwh[s], nullptr, hours_);
  }
  if (cpu_rows()) cpu_.resize(sites_);
  set_prices({});
}

double WholeJobPricing::row_capacity(std::size_t r) const {
  const std::size_t unit = r / hours_;
  return unit < pools() ? pool_capacity_[unit] : cpu_capacity_[unit - pools()];
}

void WholeJobPricing::Series::set(const std::vector<double>& base, const double* extra,
                                  std::size_t hours) {
  price.assign(hours + 1, 0.0);
  sum.assign(hours + 1, 0.0);
  for (std::size_t h = 0; h < hours; ++h) {
    price[h] = (h < base.size() ? base[h] : 0.0) + (extra != nullptr ? extra[h] : 0.0);
    sum[h + 1] = sum[h] + price[h];
  }
}

void WholeJobPricing::set_prices(const std::vector<double>& price) {
  const std::vector<double> none;
  const std::size_t needed = rows();
  std::vector<double> padded;
  const std::vector<double>* at = &price;
  if (price.size() < needed) {
    padded = price;
    padded.resize(needed, 0.0);
    at = &padded;
  }
  for (std::size_t p = 0; p < pools(); ++p) {
    const auto s = static_cast<std::size_t>(pool_site_[p]);
    gpu_[p].set(costs_.per_gpu_hour[s], at->data() + p * hours_, hours_);
  }
  for (std::size_t s = 0; s < cpu_.size(); ++s) {
    cpu_[s].set(none, at->data() + (pools() + s) * hours_, hours_);
  }
}

}  // namespace greensched::multi
