#include "greensched/multi/capacity_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "greensched/multi/batch_assignment.hpp"
#include "greensched/multi/shift_lp.hpp"

namespace greensched::multi {
namespace {

constexpr int64_t kHour = 3600;

int64_t trace_hour(int64_t t) {
  return t >= 0 ? t / kHour : -((-t + kHour - 1) / kHour);
}

}  // namespace

void CapacityPlan::ClassHistory::observe(const JobInfo& job, int n_sites,
                                         std::size_t kernel_hours) {
  const int64_t hour = trace_hour(job.submit_s);
  if (first_hour < 0 || arrivals.empty()) {
    first_hour = hour;
    arrivals.assign(static_cast<std::size_t>(std::max(n_sites, 0)), {});
  }
  const auto i = static_cast<std::size_t>(std::max<int64_t>(hour - first_hour, 0));
  std::vector<double>& home = arrivals[static_cast<std::size_t>(job.home_site)];
  if (home.size() <= i) home.resize(i + 1, 0.0);
  home[i] += 1.0;
  // The GPUs it holds in each hour from its submission hour, were it to start at once.
  const double gpus = static_cast<double>(job.pod->total_gpu_milli()) / 1000.0;
  if (kernel_sum.size() < kernel_hours) kernel_sum.resize(kernel_hours, 0.0);
  const int64_t end = job.submit_s + std::max<int64_t>(job.duration_s, 1);
  for (std::size_t k = 0; k < kernel_hours; ++k) {
    const int64_t a = std::max(job.submit_s, (hour + static_cast<int64_t>(k)) * kHour);
    const int64_t b = std::min(end, (hour + static_cast<int64_t>(k) + 1) * kHour);
    if (b <= a) {
      if (a >= end) break;
      continue;
    }
    kernel_sum[k] += gpus * static_cast<double>(b - a) / kHour;
  }
  jobs += 1.0;
  data_gb += job.data_gb;
  gpu_hours += gpus * static_cast<double>(std::max<int64_t>(job.duration_s, 1)) / kHour;
}

nlohmann::json CapacityPlan::ClassHistory::to_json() const {
  if (arrivals.empty()) return nullptr;
  return {{"first_hour", first_hour},  {"arrivals", arrivals},
          {"kernel_gpus", kernel_sum}, {"jobs", jobs},
          {"data_gb", data_gb},        {"gpu_hours", gpu_hours}};
}

Status CapacityPlan::ClassHistory::from_json(const nlohmann::json& h, int n_sites) {
  if (h.is_null()) return Status::Ok();
  const auto numbers = [](const nlohmann::json& a) {
    if (!a.is_array()) return false;
    return std::all_of(a.begin(), a.end(), [](const nlohmann::json& x) {
      return x.is_number() && std::isfinite(x.get<double>()) && x.get<double>() >= 0;
    });
  };
  if (!h.is_object() || !h.contains("first_hour") || !h["first_hour"].is_number_integer()) {
    return Error{"first_hour: missing (an integer)"};
  }
  const nlohmann::json& a = h.value("arrivals", nlohmann::json());
  if (!a.is_array() || std::ssize(a) != n_sites || !std::all_of(a.begin(), a.end(), numbers)) {
    return Error{
        fmt::format("arrivals: expected one array of counts per site ({} sites)", n_sites)};
  }
  if (!numbers(h.value("kernel_gpus", nlohmann::json()))) {
    return Error{"kernel_gpus: expected an array of numbers"};
  }
  for (const char* key : {"jobs", "data_gb", "gpu_hours"}) {
    if (!h.contains(key) || !numbers(nlohmann::json::array({h[key]}))) {
      return Error{fmt::format("{}: expected a number", key)};
    }
  }
  first_hour = h["first_hour"].get<int64_t>();
  arrivals = a.get<std::vector<std::vector<double>>>();
  kernel_sum = h["kernel_gpus"].get<std::vector<double>>();
  jobs = h["jobs"].get<double>();
  data_gb = h["data_gb"].get<double>();
  gpu_hours = h["gpu_hours"].get<double>();
  return Status::Ok();
}

double CapacityPlan::ClassHistory::expected_arrivals(int home, int64_t hour, int64_t now_hour,
                                                     int days) const {
  if (arrivals.empty()) return 0.0;
  const std::vector<double>& h = arrivals[static_cast<std::size_t>(home)];
  const auto count = [&](int64_t k) {
    const int64_t i = k - first_hour;
    return i >= 0 && i < static_cast<int64_t>(h.size()) ? h[static_cast<std::size_t>(i)] : 0.0;
  };
  double sum = 0;
  int seen = 0;
  for (int d = 1; d <= days; ++d) {
    const int64_t k = hour - 24 * d;
    if (k < first_hour) break;
    if (k >= now_hour) continue;  // not complete yet
    sum += count(k);
    ++seen;
  }
  if (seen > 0) return sum / seen;
  // Less than a day seen: the mean over the complete hours so far.
  const int64_t complete = now_hour - first_hour;
  if (complete <= 0) return 0.0;
  for (int64_t k = first_hour; k < now_hour; ++k) sum += count(k);
  return sum / static_cast<double>(complete);
}

std::vector<double> CapacityPlan::ClassHistory::expected_work(int home, int64_t now_hour, int hours,
                                                              int days) const {
  std::vector<double> coming(static_cast<std::size_t>(hours)), work(coming.size(), 0.0);
  if (jobs <= 0) return work;
  for (int a = 0; a < hours; ++a) {
    coming[static_cast<std::size_t>(a)] = expected_arrivals(home, now_hour + a, now_hour, days);
  }
  for (int h = 0; h < hours; ++h) {
    for (int a = 0; a <= h; ++a) {
      const auto k = static_cast<std::size_t>(h - a);
      if (k < kernel_sum.size()) {
        work[static_cast<std::size_t>(h)] +=
            coming[static_cast<std::size_t>(a)] * kernel_sum[k] / jobs;
      }
    }
  }
  return work;
}

void CapacityPlan::observe(const JobInfo& job, int n_sites) {
  // The LS history serves only a plan of the LS work to come.
  if (job.latency_sensitive && !options_.agent.plan_ls_work) return;
  const auto kernel_hours = static_cast<std::size_t>(options_.horizon_h) + 48;
  (job.latency_sensitive ? ls_ : be_).observe(job, n_sites, kernel_hours);
}

nlohmann::json CapacityPlan::history() const {
  nlohmann::json h = be_.to_json();
  if (h.is_null()) h = nlohmann::json::object();
  if (const nlohmann::json ls = ls_.to_json(); !ls.is_null()) h["ls"] = ls;
  return h.empty() ? nlohmann::json() : h;
}

Status CapacityPlan::restore_history(const nlohmann::json& h, int n_sites) {
  if (h.is_null()) return Status::Ok();
  if (!h.is_object()) return Error{"plan history: expected an object"};
  ClassHistory be, ls;
  if (h.contains("first_hour") || !h.contains("ls")) {
    if (Status s = be.from_json(h, n_sites); !s.ok()) {
      return Error{fmt::format("plan history: {}", s.message())};
    }
  }
  if (h.contains("ls")) {  // states written before LS work was planned have none
    if (Status s = ls.from_json(h["ls"], n_sites); !s.ok()) {
      return Error{fmt::format("plan history: ls: {}", s.message())};
    }
  }
  be_ = std::move(be);
  ls_ = std::move(ls);
  solved_ = false;
  return Status::Ok();
}

double CapacityPlan::cost_per_kwh(const FleetView& view, int site, int64_t from_s,
                                  int64_t to_s) const {
  return objective_per_kwh(view, options_.agent, site, from_s, to_s);
}

void CapacityPlan::refresh(const FleetView& view, int64_t slack_s) {
  const int64_t now = view.now_s();
  const int64_t now_hour = trace_hour(now);
  if (solved_ && now_hour * kHour == plan_hour_s_) return;
  plan_hour_s_ = now_hour * kHour;
  const int slack_h = static_cast<int>((slack_s + kHour - 1) / kHour);
  const int hours = slack_h + std::max(options_.horizon_h, 1);
  const std::size_t n_sites = view.fleet().sites.size();

  std::vector<ShiftLpSite> sites(n_sites);
  std::vector<std::vector<double>> kwh_cost(n_sites, std::vector<double>(hours, 0.0));
  for (std::size_t s = 0; s < n_sites; ++s) {
    const int site = static_cast<int>(s);
    const double gpus = static_cast<double>(view.gpu_capacity_milli(site)) / 1000.0;
    const double kw = view.gpu_kw(site);
    sites[s].capacity.resize(hours);
    sites[s].cost_per_gpu_hour.resize(hours);
    for (int h = 0; h < hours; ++h) {
      const int64_t from = std::max(now, plan_hour_s_ + h * kHour);
      const int64_t to = plan_hour_s_ + (h + 1) * kHour;
      // What is promised there (running jobs, deferred ones over their planned hours, and
      // those on their way), and the LS reserve, unless the LS work to come is planned below.
      const double taken = view.load_at(site, from) +
                           (options_.agent.plan_ls_work ? 0.0 : view.ls_reserve(site, from));
      sites[s].capacity[h] = std::max(0.0, (options_.agent.be_max_fill - taken) * gpus);
      kwh_cost[s][h] = cost_per_kwh(view, site, from, to);
      sites[s].cost_per_gpu_hour[h] = kw * kwh_cost[s][h];
    }
  }
  // The work expected from arrivals from now on, per home and hour: best-effort work within
  // its slack, and latency-sensitive work in its own hour at its home or at a site its data
  // reaches within the LS bound (immediate pieces).
  std::vector<ShiftLpWork> work;
  double max_cost = 0;
  for (const ShiftLpSite& s : sites) {
    for (double c : s.cost_per_gpu_hour) max_cost = std::max(max_cost, c);
  }
  const double ls_data_per_job = ls_.jobs > 0 ? ls_.data_gb / ls_.jobs : 0.0;
  for (const bool ls : {false, true}) {
    if (ls && !options_.agent.plan_ls_work) continue;
    const ClassHistory& history = ls ? ls_ : be_;
    const double data_per_gpu_hour =
        history.gpu_hours > 0 ? history.data_gb / history.gpu_hours : 0.0;
    for (std::size_t home = 0; home < n_sites; ++home) {
      const std::vector<double> expected =
          history.expected_work(static_cast<int>(home), now_hour, hours, options_.history_days);
      for (int h = 0; h < hours; ++h) {
        const double gpu_hours = expected[static_cast<std::size_t>(h)];
        if (gpu_hours <= 1e-9) continue;
        ShiftLpWork w;
        w.home = static_cast<int>(home);
        w.hour = h;
        w.gpu_hours = gpu_hours;
        w.max_shift_h = ls ? 0 : slack_h;
        w.immediate = ls;
        w.move_cost_per_gpu_hour.resize(n_sites);
        for (std::size_t s = 0; s < n_sites; ++s) {
          const NetworkCost& network = view.fleet().sites[s].network;
          const double kwh = data_per_gpu_hour * network.energy_kwh_per_gb;
          w.move_cost_per_gpu_hour[s] = s == home ? 0.0 : kwh * kwh_cost[s][h];
          if (ls && s != home &&
              network.transfer_seconds(ls_data_per_job) > static_cast<double>(view.ls_bound_s())) {
            w.move_cost_per_gpu_hour[s] = std::numeric_limits<double>::infinity();
            continue;
          }
          max_cost = std::max(max_cost, w.move_cost_per_gpu_hour[s]);
        }
        work.push_back(std::move(w));
      }
    }
  }
  price_.assign(n_sites, std::vector<double>(hours, 0.0));
  planned_.assign(n_sites, std::vector<double>(hours, 0.0));
  price_saturated_sites(view, plan_hour_s_ + hours * kHour);
  ShiftLpOptions lp;
  // Work the fleet cannot take in the horizon costs twice the dearest hour: enough to fill
  // every free GPU first, not so much that it drowns the prices of the hours that bind.
  lp.unserved_penalty = 2.0 * std::max(max_cost, 1e-9);
  lp.first_hour = now_hour;
  lp.basis = &basis_;
  auto solved = solve_shift_lp(sites, work, lp);
  solved_ = true;
  if (!solved.ok()) return;  // no plan this hour: prices stay 0 (green's own choice)
  for (const ShiftLpFlow& f : solved.value().flows) {
    if (work[f.work].immediate) continue;  // planned_ is best-effort work
    planned_[static_cast<std::size_t>(f.site)][static_cast<std::size_t>(f.hour)] += f.gpu_hours;
  }
  for (std::size_t s = 0; s < n_sites; ++s) {
    for (int h = 0; h < hours; ++h) {
      price_[s][h] = std::max(0.0, solved.value().capacity_price[s][h]);
    }
  }
}

void CapacityPlan::price_saturated_sites(const FleetView& view, int64_t horizon_end) {
  const std::size_t n_sites = view.fleet().sites.size();
  after_price_.assign(n_sites, 0.0);
  // The week after the horizon, as forecast now: before the forecaster knows a day of every
  // site's series, it would be a few samples repeated, and no site is priced.
  const int64_t now = view.epoch_s(view.now_s());
  const Forecaster& forecaster = view.forecaster();
  for (const SiteSpec& site : view.fleet().sites) {
    if (!forecaster.knows_a_day(site.carbon, now) ||
        (site.price && !forecaster.knows_a_day(*site.price, now))) {
      return;
    }
  }
  const double saturated_at = options_.agent.be_max_fill - options_.agent.plan_saturated_margin;
  std::vector<double> per_gpu_hour(n_sites);
  std::vector<bool> saturated(n_sites);
  double marginal = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < n_sites; ++s) {
    const int site = static_cast<int>(s);
    per_gpu_hour[s] =
        view.gpu_kw(site) * cost_per_kwh(view, site, horizon_end, horizon_end + 7 * 24 * kHour);
    saturated[s] = view.load(site) >= saturated_at;
    if (!saturated[s]) marginal = std::min(marginal, per_gpu_hour[s]);
  }
  if (!std::isfinite(marginal)) return;  // every site saturated: no site takes the overflow
  for (std::size_t s = 0; s < n_sites; ++s) {
    if (saturated[s]) after_price_[s] = std::max(0.0, marginal - per_gpu_hour[s]);
  }
}

int CapacityPlan::hour_index(int64_t t) const {
  if (!solved_ || price_.empty()) return -1;
  const int64_t h = trace_hour(t) - plan_hour_s_ / kHour;
  if (h < 0 || h >= static_cast<int64_t>(price_.front().size())) return -1;
  return static_cast<int>(h);
}

double CapacityPlan::given_price(int site, int64_t hour) const {
  const auto& given = *options_.agent.capacity_prices;
  if (site < 0 || static_cast<std::size_t>(site) >= given.size() || hour < 0) return 0.0;
  const std::vector<double>& row = given[static_cast<std::size_t>(site)];
  return static_cast<std::size_t>(hour) < row.size() ? row[static_cast<std::size_t>(hour)] : 0.0;
}

double CapacityPlan::price(int site, int64_t from_s, int64_t to_s, double gpus) const {
  if (options_.agent.capacity_prices) {  // given: every hour of the run at its own price
    double total = 0;
    for (int64_t a = from_s; a < to_s;) {
      const int64_t h = trace_hour(a);
      const int64_t b = std::min(to_s, (h + 1) * kHour);
      total += given_price(site, h) * gpus * static_cast<double>(b - a) / kHour;
      a = b;
    }
    return total;
  }
  if (!solved_ || price_.empty() || to_s <= from_s) return 0.0;
  const std::vector<double>& p = price_[static_cast<std::size_t>(site)];
  const int64_t horizon_end = plan_hour_s_ + static_cast<int64_t>(p.size()) * kHour;
  double total = 0;
  const int64_t from = std::max(from_s, plan_hour_s_), to = std::min(to_s, horizon_end);
  // Hour by hour from the plan's hour h holding `from` (the plan starts on an hour).
  auto h = static_cast<std::size_t>((from - plan_hour_s_) / kHour);
  for (int64_t a = from; a < to; ++h) {
    const int64_t b = std::min(to_s, plan_hour_s_ + static_cast<int64_t>(h + 1) * kHour);
    total += p[h] * gpus * static_cast<double>(b - a) / kHour;
    a = b;
  }
  if (to_s > horizon_end) {
    total += price_after_horizon(site) * gpus *
             static_cast<double>(to_s - std::max(from_s, horizon_end)) / kHour;
  }
  return total;
}

double CapacityPlan::price_after_horizon(int site) const {
  if (options_.agent.capacity_prices) return 0.0;  // given prices have no horizon
  return solved_ && static_cast<std::size_t>(site) < after_price_.size()
             ? after_price_[static_cast<std::size_t>(site)]
             : 0.0;
}

double CapacityPlan::planned_gpus(int site, int64_t t) const {
  const int h = hour_index(t);
  return h < 0 ? 0.0 : planned_[static_cast<std::size_t>(site)][static_cast<std::size_t>(h)];
}

double CapacityPlan::price_per_gpu_hour(int site, int64_t t) const {
  if (options_.agent.capacity_prices) return given_price(site, trace_hour(t));
  const int h = hour_index(t);
  return h < 0 ? 0.0 : price_[static_cast<std::size_t>(site)][static_cast<std::size_t>(h)];
}

}  // namespace greensched::multi
