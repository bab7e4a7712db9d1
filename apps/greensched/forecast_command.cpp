// greensched forecast: learned forecasts of carbon intensity, prices, on-site generation and
// job arrivals (src/greensched/forecast), trained and measured by rolling origin against the
// baselines.
//   forecast evaluate   MAPE, MAE and the saving-weighted errors per zone and horizon
//   forecast train      the shipped model of a series (models/forecast/)
//   forecast serve      the carbon forecasts over the Carbon Aware SDK WebAPI
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_conventions.hpp"
#include "command_util.hpp"
#include "commands.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/core/utc_time.hpp"
#include "greensched/dispatch/dispatch_server.hpp"
#include "greensched/dispatch/forecast_server.hpp"
#include "greensched/energy/price_series.hpp"
#include "greensched/energy/weather.hpp"
#include "greensched/forecast/arrivals.hpp"
#include "greensched/forecast/evaluate.hpp"
#include "greensched/forecast/holidays.hpp"
#include "greensched/multi/generation_forecast.hpp"
#include "greensched/multi/series_readers.hpp"
#include "greensched/multi/site_energy.hpp"
#include "greensched/report/column_key.hpp"
#include "greensched/serve/listener_security.hpp"
#include "greensched/trace/openb_reader.hpp"
#include "listener_options.hpp"

namespace greensched::app {
namespace {

struct ForecastCliOptions {
  std::string series = "carbon";
  std::vector<std::string> zones;
  std::string info = "past";
  std::string start = "2023-07-01";
  int days = 184;
  std::vector<int> horizons = {24, 96};
  int retrain_days = 7;
  std::vector<std::string> issue_hours = {"0"};
  int k_lowest = 4;
  std::string from;
  std::string until;
  int trees = 200;
  int depth = 6;
  double eta = 0.05;
  int issue_every_h = 24;
  int validation_days = 28;
  std::string seeds = "42";
  int jobs = 0;
  std::string data_dir;
  std::string pods;                        // arrivals: the pod list (default: openb's default)
  std::string arrival_unit = "gpu-hours";  // arrivals: gpu-hours or jobs
  std::string out;
  bool json = false;
  bool quiet = false;
  // serve
  std::string model;
  std::string listen = "127.0.0.1:8095";
  std::string clock_start;
  std::string clock_origin;
  double clock_speed = 1.0;
  double timeout_s = 5;
  std::string port_file;
  serve::ListenerSecurity security;
};

const std::vector<std::string> kSeriesKinds = {"carbon", "carbon-lca", "price",
                                               "pv",     "wind",       "arrivals"};
const std::vector<std::string> kArrivalZones = {"BE", "LS", "all"};

// The pod list whose arrivals `--series arrivals` forecasts.
std::string pods_file(const ForecastCliOptions& o) {
  return o.pods.empty() ? o.data_dir + "/openb/openb_pod_list_default.csv" : o.pods;
}

// UTC offsets (standard time) of the price zones without a weather file.
const std::map<std::string, int64_t> kPriceZoneOffsets = {
    {"AT", 3600}, {"BE", 3600}, {"CH", 3600}, {"ES", 3600}, {"FR", 3600}, {"NL", 3600}, {"PT", 0}};

std::string carbon_file(const std::string& data_dir, const std::string& zone) {
  return fmt::format("{}/carbon/emaps2023/{}_2023_hourly.csv", data_dir, zone);
}

// The file a zone's series is read from.
std::string zone_file(const std::string& kind, const std::string& data_dir,
                      const std::string& zone) {
  if (kind == "carbon" || kind == "carbon-lca") return carbon_file(data_dir, zone);
  if (kind == "price") return energy::price_file(data_dir, zone);
  if (kind == "arrivals") return data_dir + "/openb/openb_pod_list_default.csv";
  return energy::weather_file(data_dir, zone);
}

// Every zone whose file is in the data, sorted (for arrivals: the classes of service).
std::vector<std::string> available_zones(const std::string& kind, const std::string& data_dir) {
  if (kind == "arrivals") return kArrivalZones;
  std::string dir, suffix;
  if (kind == "carbon" || kind == "carbon-lca") {
    dir = data_dir + "/carbon/emaps2023";
    suffix = "_2023_hourly.csv";
  } else if (kind == "price") {
    dir = data_dir + "/energy/prices2023";
    suffix = "_electricity_prices_2023.csv";
  } else {
    dir = data_dir + "/energy/weather2023";
    suffix = "_2023.json";
  }
  std::vector<std::string> zones;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      zones.push_back(name.substr(0, name.size() - suffix.size()));
    }
  }
  std::sort(zones.begin(), zones.end());
  return zones;
}

forecast::Series from_time_series(const multi::TimeSeries& t, const std::string& zone) {
  forecast::Series s;
  s.name = zone;
  s.start_s = t.start_s();
  s.step_s = t.step_s();
  s.values = t.values();
  return s;
}

// A site of 1 kW of PV and 1 kW of wind at the zone's weather point: generation per kW.
Result<multi::SiteEnergy> unit_site(const std::string& data_dir, const std::string& zone,
                                    energy::Weather& weather) {
  auto w = energy::read_weather(energy::weather_file(data_dir, zone));
  if (!w.ok()) return w.status().error();
  weather = std::move(w.value());
  multi::SiteEnergy site;
  site.pv_kw = 1.0;
  site.wind_kw = 1.0;
  site.utc_offset_s = weather.utc_offset_seconds;
  multi::derive_hourly_series(site, weather);
  return site;
}

// A flat series has nothing to forecast and would divide by zero in the MAPE: refused.
Status refuse_flat(const forecast::Series& s, const std::string& path) {
  const auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
  if (*lo == *hi) {
    return Error{
        fmt::format("{}: the series is flat (every value is {}): nothing to forecast", path, *lo)};
  }
  return Status::Ok();
}

// One class's arrivals from the pod list (forecast/arrivals.hpp).
Result<forecast::EvalZone> load_arrivals(const ForecastCliOptions& o, std::span<const PodSpec> pods,
                                         const std::string& zone) {
  const std::string path = pods_file(o);
  forecast::ArrivalClass cls = forecast::ArrivalClass::kAll;
  forecast::parse_arrival_class(zone, cls);  // check_choices has checked the name
  auto s = forecast::arrival_series(
      pods, cls,
      o.arrival_unit == "jobs" ? forecast::ArrivalUnit::kJobs : forecast::ArrivalUnit::kGpuHours,
      path);
  if (!s.ok()) return s.status().error();
  forecast::EvalZone z;
  z.series = std::move(s.value());
  if (Status st = refuse_flat(z.series, fmt::format("{} (class {})", path, zone)); !st.ok()) {
    return st.error();
  }
  return z;
}

// One zone's series (and, in the weather mode, its weather forecast as issued).
Result<forecast::EvalZone> load_zone(const ForecastCliOptions& o, const std::string& zone,
                                     std::size_t index) {
  forecast::EvalZone z;
  const std::string path = zone_file(o.series, o.data_dir, zone);
  std::optional<multi::SiteEnergy> site;
  energy::Weather weather;
  const std::string wpath = energy::weather_file(o.data_dir, zone);
  const bool has_weather = std::filesystem::exists(wpath);
  if (has_weather) {
    auto s = unit_site(o.data_dir, zone, weather);
    if (!s.ok()) return s.status().error();
    site = std::move(s.value());
  }
  if (o.series == "carbon" || o.series == "carbon-lca") {
    auto t = multi::read_emaps_csv(path, o.series == "carbon" ? "direct" : "lca");
    if (!t.ok()) return t.status().error();
    z.series = from_time_series(t.value(), zone);
  } else if (o.series == "price") {
    auto p = energy::read_price_series(path);
    if (!p.ok()) return p.status().error();
    z.series.name = zone;
    z.series.start_s = p.value().usd_per_kwh.start_s;
    z.series.values = p.value().usd_per_kwh.values;
  } else {
    z.series = from_time_series(o.series == "pv" ? site->pv_kwh : site->wind_kwh, zone);
  }
  z.series.utc_offset_s = site ? site->utc_offset_s : 0;
  if (!site) {
    const auto it = kPriceZoneOffsets.find(zone);
    if (it != kPriceZoneOffsets.end()) z.series.utc_offset_s = it->second;
  }
  if (Status s = refuse_flat(z.series, path); !s.ok()) return s.error();
  forecast::attach_holidays(forecast::builtin_holidays(), zone, z.series);

  if (o.info == "weather") {
    if (!site) {
      return Error{
          fmt::format("{}: no weather file for zone {}; --info weather needs one", wpath, zone)};
    }
    // The weather forecast of multi/generation_forecast.hpp (the actual weather plus an AR(1)
    // error, one realisation per site from the seed), for the zone's 1 kW of PV and wind.
    multi::GenerationForecastOptions g;
    g.kind = multi::GenerationForecastKind::kWeather;
    auto seed = parse_one_seed(o.seeds);
    g.seed = seed.ok() ? seed.value() : 42;
    const multi::GenerationForecast fc(*site, g, static_cast<int>(index));
    z.exog.names = {"pv_forecast_kwh_per_kw", "wind_speed_forecast_ms"};
    z.exog.lead_h = g.weather_lead_h;
    z.exog.columns.assign(2, std::vector<double>(z.series.size(), std::nan("")));
    for (std::size_t i = 0; i < z.series.size(); ++i) {
      const int64_t t = z.series.time_of(i);
      const int64_t j = site->pv_kwh.index_of(t);
      if (j < 0 || j >= static_cast<int64_t>(site->pv_kwh.values().size())) continue;
      z.exog.columns[0][i] = fc.forecast_pv_kwh(t);
      z.exog.columns[1][i] = fc.forecast_wind_speed_ms(t);
    }
  } else if (o.info == "day-ahead") {
    const int64_t offset = z.series.utc_offset_s;
    z.known_until = [offset](int64_t now) {
      return energy::day_ahead_published_until(now, offset);
    };
  }
  return z;
}

// Checks --series, --info and every zone (exit 2 for a name the data does not have).
std::optional<int> check_choices(ForecastCliOptions& o) {
  if (std::find(kSeriesKinds.begin(), kSeriesKinds.end(), o.series) == kSeriesKinds.end()) {
    return fail(
        fmt::format("--series '{}': expected carbon, carbon-lca, price, pv, wind or arrivals",
                    o.series),
        kExitUsage);
  }
  if (o.arrival_unit != "gpu-hours" && o.arrival_unit != "jobs") {
    return fail(fmt::format("--arrival-unit '{}': expected gpu-hours or jobs", o.arrival_unit),
                kExitUsage);
  }
  if (o.series != "arrivals" && (!o.pods.empty() || o.arrival_unit != "gpu-hours")) {
    return fail("--pods and --arrival-unit are for --series arrivals", kExitUsage);
  }
  if (o.series == "arrivals" && o.info != "past") {
    return fail("--info: arrivals are forecast from their own past only (--info past)", kExitUsage);
  }
  if (o.info != "past" && o.info != "weather" && o.info != "day-ahead") {
    return fail(fmt::format("--info '{}': expected past, weather or day-ahead", o.info),
                kExitUsage);
  }
  if (o.info == "day-ahead" && o.series != "price") {
    return fail("--info day-ahead: only prices are published a day ahead (use --series price)",
                kExitUsage);
  }
  const auto known = available_zones(o.series, o.data_dir);
  if (o.series == "arrivals" && !std::filesystem::exists(pods_file(o))) {
    return fail(fmt::format("{}: no such pod list (set --pods, --data-dir or GREENSCHED_DATA)",
                            pods_file(o)),
                kExitInput);
  }
  if (known.empty()) {
    return fail(
        fmt::format(
            "{}: no {} series found (set --data-dir or GREENSCHED_DATA)",
            std::filesystem::path(zone_file(o.series, o.data_dir, "X")).parent_path().string(),
            o.series),
        kExitInput);
  }
  if (o.zones.empty()) o.zones = known;
  for (const std::string& zone : o.zones) {
    if (std::find(known.begin(), known.end(), zone) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ",") + k;
      return fail(fmt::format("--zones: unknown zone '{}' for --series {} (known: {})", zone,
                              o.series, list),
                  kExitUsage);
    }
  }
  return std::nullopt;
}

Result<forecast::TrainOptions> train_options(const ForecastCliOptions& o) {
  forecast::TrainOptions t;
  auto seed = parse_one_seed(o.seeds);
  if (!seed.ok()) return seed.status().error();
  t.trees.seed = seed.value();
  t.trees.trees = o.trees;
  t.trees.max_depth = o.depth;
  t.trees.eta = o.eta;
  t.issue_every_h = o.issue_every_h;
  t.validation_days = o.validation_days;
  t.max_horizon_h = 96;
  t.kind = o.info == "past" ? o.series : o.series + "+" + o.info;
  // Arrivals are small counts with many empty hours and rare bursts (one job asking for 2000
  // GPU-hours in an hour of a week that averages 7): the relative error cannot judge them, and a
  // squared error chases the bursts. Their trees fit the pseudo-Huber loss instead, quadratic
  // within one trailing-week mean of the target and linear beyond (docs/FORECAST.md, arrivals).
  if (o.series == "arrivals") {
    t.relative_loss = false;
    t.trees.objective = "reg:pseudohubererror";
    t.kind = "arrivals-" + o.arrival_unit;
  }
  if (!o.from.empty()) {
    auto from = parse_utc_time(o.from);
    if (!from.ok()) return Error{fmt::format("--from: {}", from.error())};
    t.from_s = from.value();
  }
  return t;
}

Result<std::vector<forecast::EvalZone>> load_zones(const ForecastCliOptions& o) {
  std::vector<forecast::EvalZone> zones;
  std::vector<PodSpec> pods;  // arrivals: the pod list, read once for every class
  if (o.series == "arrivals") {
    GpuModelRegistry models;
    auto read = trace::read_openb_pods(pods_file(o), models);
    if (!read.ok()) return read.status().error();
    pods = std::move(read.value());
  }
  for (std::size_t i = 0; i < o.zones.size(); ++i) {
    auto z =
        o.series == "arrivals" ? load_arrivals(o, pods, o.zones[i]) : load_zone(o, o.zones[i], i);
    if (!z.ok()) return z.status().error();
    zones.push_back(std::move(z.value()));
  }
  return zones;
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

int run_forecast_evaluate(ForecastCliOptions o) {
  if (auto rc = check_choices(o)) return *rc;
  auto start = parse_utc_time(o.start);
  if (!start.ok()) return fail(fmt::format("--start: {}", start.error()), kExitUsage);
  if (o.days < 1 || o.retrain_days < 1 || o.k_lowest < 1 || o.k_lowest > 24) {
    return fail(fmt::format("--days {}, --retrain-days {} must be >= 1 and --k {} in 1..24", o.days,
                            o.retrain_days, o.k_lowest),
                kExitUsage);
  }
  for (int h : o.horizons) {
    if (h < 1 || h > 96) return fail(fmt::format("--horizon {}: must be in 1..96", h), kExitUsage);
  }
  std::vector<int> issue_hours;
  if (o.issue_hours.size() == 1 && o.issue_hours[0] == "all") {
    for (int h = 0; h < 24; ++h) issue_hours.push_back(h);
  } else {
    for (const std::string& text : o.issue_hours) {
      int h = -1;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h);
      if (ec != std::errc{} || end != text.data() + text.size() || h < 0 || h > 23) {
        return fail(fmt::format("--issue-hours {}: an hour must be 0-23 (or the list 'all')", text),
                    kExitUsage);
      }
      issue_hours.push_back(h);
    }
    std::sort(issue_hours.begin(), issue_hours.end());
    if (std::adjacent_find(issue_hours.begin(), issue_hours.end()) != issue_hours.end()) {
      return fail("--issue-hours: an hour is given twice", kExitUsage);
    }
  }
  auto train = train_options(o);
  if (!train.ok()) return fail(train.status().message(), kExitUsage);
  auto zones = load_zones(o);
  if (!zones.ok()) return fail(zones);

  forecast::EvalOptions e;
  e.start_s = start.value();
  e.days = o.days;
  e.horizons = o.horizons;
  e.retrain_days = o.retrain_days;
  e.issue_hours = std::move(issue_hours);
  e.k_lowest = o.k_lowest;
  e.train = train.value();
  e.jobs = o.jobs;
  auto result = forecast::evaluate(zones.value(), e);
  if (!result.ok()) return fail(result);
  const forecast::EvalResult& r = result.value();
  if (!o.quiet) {
    double total = 0;
    for (const auto& t : r.retrains) total += t.seconds;
    fmt::print(stderr, "trained {} models (every {} days from {}, {:.1f} s of training)\n",
               r.retrains.size(), o.retrain_days, format_utc_time(e.start_s), total);
    // The zones where the guard held the trees back at some retraining, and how far.
    std::string held;
    for (std::size_t zi = 0; zi < o.zones.size(); ++zi) {
      std::string shares;
      bool below = false;
      for (const auto& t : r.retrains) {
        const double w = t.guarded && zi < t.weights.size() ? t.weights[zi] : 1.0;
        shares += fmt::format("{}{}", shares.empty() ? "" : "/", w);
        below = below || w < 1.0;
      }
      if (below) held += fmt::format("{}{} {}", held.empty() ? "" : ", ", o.zones[zi], shares);
    }
    if (!held.empty()) {
      fmt::print(stderr, "zone guard: share of the trees' correction kept, by retraining: {}\n",
                 held);
    }
  }

  std::string csv =
      "zone,horizon_h,model,mape_pct,mae,sel_mape_pct,missed_saving_pct,hours,mape_hours\n";
  nlohmann::json json = nlohmann::json::object();
  for (std::size_t zi = 0; zi < o.zones.size(); ++zi) {
    for (std::size_t hi = 0; hi < o.horizons.size(); ++hi) {
      for (std::size_t m = 0; m < forecast::kModels; ++m) {
        const forecast::Metrics& x = r.metrics[zi][hi][m];
        csv += fmt::format("{},{},{},{:.4f},{:.6g},{:.4f},{:.4f},{},{}\n", o.zones[zi],
                           o.horizons[hi], forecast::kModelNames[m], x.mape_pct, x.mae,
                           x.sel_mape_pct, x.missed_saving_pct, x.hours, x.mape_hours);
        json[o.zones[zi]][std::to_string(o.horizons[hi])][forecast::kModelNames[m]] = {
            {"mape_pct", finite_or_null(x.mape_pct)},
            {"mae", finite_or_null(x.mae)},
            {"sel_mape_pct", finite_or_null(x.sel_mape_pct)},
            {"missed_saving_pct", finite_or_null(x.missed_saving_pct)},
            {"hours", x.hours}};
      }
    }
  }
  if (!o.out.empty()) {
    auto file = create_out_file(o.out, "forecast_eval.csv", ".csv");
    if (!file.ok()) return fail(file.status());
    if (Status s = write_text_file(file.value().path, csv); !s.ok()) return fail(s);
  }
  if (o.json) {
    fmt::print("{}\n", json.dump(2));
    return 0;
  }
  if (o.quiet) return 0;
  fmt::print("{} forecasts, {} days from {} (issued at {} UTC, info {}), retrained every {} days\n",
             o.series, o.days, o.start,
             e.issue_hours.size() == 24
                 ? std::string("every hour")
                 : fmt::format("{:02}:00", fmt::join(e.issue_hours, ":00, ")),
             o.info, o.retrain_days);
  fmt::print("{:<14} {:>9}  {:>8} {:>8} {:>8} {:>8}  {:>10} {:>10}  {:>8} {:>8}\n", "zone",
             "horizon_h", "learned", "s-naive", "same-h", "oracle", "mae-lrn", "mae-s-nv",
             "sel-lrn", "miss-lrn");
  std::vector<std::array<double, forecast::kModels>> mean(o.horizons.size());
  for (std::size_t zi = 0; zi < o.zones.size(); ++zi) {
    for (std::size_t hi = 0; hi < o.horizons.size(); ++hi) {
      const auto& x = r.metrics[zi][hi];
      for (std::size_t m = 0; m < forecast::kModels; ++m) {
        mean[hi][m] += x[m].mape_pct / static_cast<double>(o.zones.size());
      }
      fmt::print(
          "{:<14} {:>9}  {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}%  {:>10.4g} {:>10.4g}  "
          "{:>7.2f}% {:>7.1f}%\n",
          o.zones[zi], o.horizons[hi], x[0].mape_pct, x[1].mape_pct, x[2].mape_pct, x[3].mape_pct,
          x[0].mae, x[1].mae, x[0].sel_mape_pct, x[0].missed_saving_pct);
    }
  }
  for (std::size_t hi = 0; hi < o.horizons.size(); ++hi) {
    fmt::print("{:<14} {:>9}  {:>7.2f}% {:>7.2f}% {:>7.2f}% {:>7.2f}%  (mean MAPE of {} zones)\n",
               "mean", o.horizons[hi], mean[hi][0], mean[hi][1], mean[hi][2], mean[hi][3],
               o.zones.size());
  }
  static constexpr report::ColumnKey kKey[] = {
      {"zone", "zone", "the zone"},
      {"horizon_h", "horizon_h", "hours ahead of each 00:00 UTC issue, all scored"},
      {"learned", "mape_pct", "MAPE of the rows of model learned, %"},
      {"s-naive", "mape_pct", "MAPE of model seasonal-naive, %"},
      {"same-h", "mape_pct", "MAPE of model same-hour, %"},
      {"oracle", "mape_pct", "MAPE of model oracle (0: a check), %"},
      {"mae-lrn", "mae", "MAE of learned, in the series' unit"},
      {"mae-s-nv", "mae", "MAE of seasonal-naive"},
      {"sel-lrn", "sel_mape_pct", "learned's MAPE on the k lowest-forecast hours a day, %"},
      {"miss-lrn", "missed_saving_pct", "share of the k-best-hours saving learned missed, %"},
  };
  fmt::print("{}", report::column_key("forecast_eval.csv", kKey));
  return 0;
}

int run_forecast_train(ForecastCliOptions o) {
  if (auto rc = check_choices(o)) return *rc;
  auto until = parse_utc_time(o.until);
  if (!until.ok()) return fail(fmt::format("--until: {}", until.error()), kExitUsage);
  auto train = train_options(o);
  if (!train.ok()) return fail(train.status().message(), kExitUsage);
  train.value().until_s = until.value();
  auto zones = load_zones(o);
  if (!zones.ok()) return fail(zones);
  std::vector<forecast::ZoneSeries> inputs;
  for (const auto& z : zones.value()) {
    inputs.push_back({&z.series, z.exog.size() > 0 ? &z.exog : nullptr});
  }
  auto model = forecast::LearnedModel::train(inputs, train.value());
  if (!model.ok()) return fail(model);
  const std::string name = (o.info == "past" ? o.series : o.series + "-" + o.info) + ".ubj";
  auto file = create_out_file(o.out, name, ".ubj");
  if (!file.ok()) return fail(file.status());
  if (Status s = model.value().save(file.value().path); !s.ok()) return fail(s);
  if (!o.quiet) {
    fmt::print("wrote {}: {} trees of depth {} on {} rows from {} zones, data before {}\n",
               file.value().path, o.trees, o.depth, model.value().training_rows(), o.zones.size(),
               format_utc_time(until.value()));
    const forecast::LearnedModel& m = model.value();
    std::string held;
    for (std::size_t z = 0; z < m.zones().size(); ++z) {
      if (m.correction_weights()[z] < 1.0) {
        held += fmt::format("{}{} {}", held.empty() ? "" : ", ", m.zones()[z],
                            m.correction_weights()[z]);
      }
    }
    if (!m.guarded()) {
      fmt::print("zone guard: off or skipped (every zone keeps the trees' whole correction)\n");
    } else if (!held.empty()) {
      fmt::print("zone guard: share of the trees' correction kept: {}; the others all of it\n",
                 held);
    }
  }
  return 0;
}

int run_forecast_serve(ForecastCliOptions o) {
  std::string host;
  int port = 0;
  if (int code =
          check_listen(o.listen, "127.0.0.1:8095", o.security, "docs/FORECAST.md", host, port);
      code != 0)
    return code;
  if (!(o.timeout_s > 0)) return fail("--timeout: must be > 0", kExitUsage);
  o.series = "carbon";
  o.info = "past";
  if (auto rc = check_choices(o)) return *rc;
  auto loaded = forecast::LearnedModel::load(o.model);
  if (!loaded.ok())
    return fail(fmt::format("--model {}: {}", o.model, loaded.status().message()),
                exit_code(loaded.status().code()));
  if (loaded.value().kind() != "carbon" || loaded.value().exog_columns() != 0) {
    return fail(fmt::format("--model {}: a model of '{}'; forecast serve needs a carbon model "
                            "trained with --info past (forecast train --series carbon)",
                            o.model, loaded.value().kind()),
                kExitUsage);
  }
  const int64_t wall_now = dispatch::wall_clock_s();
  dispatch::SignalClock clock;
  int64_t signal_start = wall_now;
  if (!o.clock_start.empty()) {
    auto start = parse_utc_time(o.clock_start);
    if (!start.ok()) return fail(fmt::format("--clock-start: {}", start.error()), kExitUsage);
    if (!(o.clock_speed > 0)) return fail("--clock-speed: must be > 0", kExitUsage);
    int64_t origin = wall_now;
    if (!o.clock_origin.empty()) {
      auto t = parse_utc_time(o.clock_origin);
      if (!t.ok()) return fail(fmt::format("--clock-origin: {}", t.error()), kExitUsage);
      origin = t.value();
    }
    clock = dispatch::SignalClock(start.value(), o.clock_speed, origin);
    signal_start = clock.signal_s(wall_now);
  } else if (!o.clock_origin.empty()) {
    return fail("--clock-origin: needs --clock-start", kExitUsage);
  }
  if (Status s = dispatch::check_no_look_ahead(loaded.value().trained_until_s(), signal_start);
      !s.ok()) {
    return fail(fmt::format("--model {}: {}", o.model, s.message()), kExitUsage);
  }
  auto zones = load_zones(o);
  if (!zones.ok()) return fail(zones);
  std::map<std::string, forecast::Series> series;
  for (auto& z : zones.value()) {
    if (signal_start >= z.series.end_s()) {
      return fail(fmt::format("--zones {}: its series ends at {}, before the signal time {}; "
                              "replay it with --clock-start (e.g. --clock-start 2023-04-03)",
                              z.series.name, format_utc_time(z.series.end_s()),
                              format_utc_time(signal_start)),
                  kExitUsage);
    }
    series.emplace(z.series.name, std::move(z.series));
  }
  auto model = std::make_shared<const forecast::LearnedModel>(std::move(loaded.value()));
  dispatch::ForecastService service(std::move(series), dispatch::learned_forecaster(model), clock);

  const sigset_t signals = block_stop_signals();
  dispatch::ForecastServer server(service, o.security, o.timeout_s);
  auto bound = server.start(host, port);
  if (!bound.ok()) return fail(bound);
  if (int code = write_port_file(o.port_file, bound.value()); code != 0) {
    server.stop();
    return code;
  }
  if (!o.quiet) {
    fmt::print(stderr,
               "greensched forecast serve: {}://{}:{} | zones: {} | model trained until {} | "
               "signal time {} (speed {})\n",
               o.security.tls() ? "https" : "http", host, bound.value(), fmt::join(o.zones, ","),
               format_utc_time(model->trained_until_s()),
               format_utc_time(service.signal_s(dispatch::wall_clock_s())), clock.speed());
  }
  wait_for_stop_signal(signals, "greensched forecast serve", o.quiet);
  server.stop();
  return 0;
}

void add_series_options(CLI::App* cmd, ForecastCliOptions& o) {
  cmd->add_option("--series", o.series,
                  "what to forecast: carbon (direct gCO2/kWh), carbon-lca (life-cycle), price "
                  "(USD/kWh), pv or wind (kWh per kW installed, from the zone's weather), "
                  "arrivals (work submitted per hour of a pod list's trace time; zones LS, BE, "
                  "all)")
      ->type_name("carbon|carbon-lca|price|pv|wind|arrivals")
      ->capture_default_str();
  cmd->add_option("--zones", o.zones, "comma list of zones (default: every zone the data has)")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("--info", o.info,
                  "what is known at issue time: past (the series' past only), weather (plus a "
                  "weather forecast: the weather with the generation forecasts' error model, 48 h "
                  "ahead), day-ahead (prices only: hours a day-ahead auction has published are "
                  "known)")
      ->type_name("past|weather|day-ahead")
      ->capture_default_str();
  cmd->add_option("--from", o.from, "earliest sample training reads (default: the series' start)")
      ->type_name("DATE");
  cmd->add_option("--trees", o.trees, "boosting rounds")->capture_default_str();
  cmd->add_option("--depth", o.depth, "maximum tree depth")->capture_default_str();
  cmd->add_option("--eta", o.eta, "learning rate")->capture_default_str();
  as_duration(cmd->add_option("--issue-every", o.issue_every_h,
                              "time between the issue times of training rows (each gives "
                              "horizons 1-96)")
                  ->capture_default_str(),
              {.bare_unit_s = 3600});
  cmd->add_option("--validation-days", o.validation_days,
                  "the zone guard: a first model trained without the last N days of the "
                  "training data forecasts them, and each zone keeps the share (0, 1/4, ... 1) of "
                  "the trees' correction to the seasonal-naive forecast that erred least there "
                  "(0: no guard)")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N")
      ->capture_default_str();
  add_seeds_option(cmd, o.seeds, "the trees' seed", true);
  add_data_dir_option(cmd, o.data_dir);
  cmd->add_option("--pods", o.pods,
                  "arrivals: the pod list (openb schema with times; default: "
                  "DATA/openb/openb_pod_list_default.csv)")
      ->type_name("FILE");
  cmd->add_option("--arrival-unit", o.arrival_unit,
                  "arrivals: gpu-hours (requested GPUs x run time of the jobs submitted in the "
                  "hour) or jobs")
      ->type_name("gpu-hours|jobs")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "print no table or progress");
}

}  // namespace

Action add_forecast_command(CLI::App& app) {
  auto opts = std::make_shared<ForecastCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "forecast", "Learned forecasts of carbon, prices and generation, measured by rolling origin");
  cmd->require_subcommand(1);
  cmd->footer(
      "Gradient-boosted trees (XGBoost) on features known at issue time (hour, weekday, lags, "
      "rolling\nmeans, each divided by the trailing week's mean), one model per series across "
      "zones.\nSee docs/FORECAST.md.\n\n"
      "Examples:\n"
      "  greensched forecast evaluate --series carbon --zones DE-LU,GB --start 2023-07-01 "
      "--days 184\n"
      "  greensched forecast train --series carbon --until 2024-01-01 --out models/forecast\n"
      "  greensched forecast serve --help   (a replay needs a model trained before its start)");

  CLI::App* evaluate = cmd->add_subcommand(
      "evaluate", "Rolling-origin errors of the learned forecast and the baselines");
  evaluate->footer(
      "Each day of the window a forecast is issued at 00:00 UTC (or at each of --issue-hours) for\n"
      "the next H hours by learned, seasonal-naive (the same hour of the latest complete day),\n"
      "same-hour (its mean over 7 days) and oracle (the actual values). The learned model is\n"
      "retrained every --retrain-days days on all data before that day (an expanding window), so\n"
      "no forecast comes from a model that saw its day. Errors: MAPE (hours below 1 % of the\n"
      "zone's mean |value| left out), MAE, sel = MAPE on the --k lowest-forecast hours of each\n"
      "day (those a scheduler picks), miss = share of the k-best-hours saving the forecast\n"
      "missed. --out writes forecast_eval.csv.\n\n"
      "Example:\n"
      "  greensched forecast evaluate --series carbon --zones DE-LU,GB --start 2023-07-01 "
      "--days 184 \\\n      --horizon 24,96 --out eval");
  add_series_options(evaluate, *opts);
  evaluate->add_option("--start", opts->start, "first issue day (00:00 UTC)")
      ->type_name("DATE")
      ->capture_default_str();
  evaluate->add_option("--days", opts->days, "issue days in the window")->capture_default_str();
  evaluate->add_option("--horizon", opts->horizons, "comma list of horizons in hours, 1-96")
      ->delimiter(',')
      ->type_name("LIST")
      ->default_str("24,96");
  evaluate
      ->add_option("--retrain-days", opts->retrain_days,
                   "days between retrainings on the expanding window (weekly by default: "
                   "the zone guard's choice is rechecked as often)")
      ->capture_default_str();
  evaluate
      ->add_option("--issue-hours", opts->issue_hours,
                   "UTC hours of each day at which forecasts are issued: 0 scores day-ahead "
                   "plans; all (every hour) scores them as a controller that plans again each "
                   "hour reads them")
      ->delimiter(',')
      ->type_name("LIST|all")
      ->default_str("0");
  evaluate
      ->add_option("--k", opts->k_lowest,
                   "how many hours of each day a scheduler picks (sel, miss)")
      ->capture_default_str();
  evaluate->add_option("--jobs,-j", opts->jobs, "retrainings in parallel (default: all cores)");
  evaluate->add_option("--out", opts->out, "folder to write forecast_eval.csv into")
      ->type_name("DIR");
  evaluate->add_flag("--json", opts->json,
                     "print {zone: {horizon_h: {model: {mape_pct, mae, ...}}}} as JSON");

  CLI::App* train = cmd->add_subcommand("train", "Train a series' model on data before a date");
  train->footer(
      "Writes OUT/<series>.ubj (OUT/<series>-<info>.ubj for --info weather or day-ahead): XGBoost\n"
      "UBJSON with the training's end and feature version stored in it. One thread and a fixed\n"
      "seed: the same data and options give the same bytes.\n\n"
      "Example:\n"
      "  greensched forecast train --series carbon --until 2024-01-01 --out models/forecast");
  add_series_options(train, *opts);
  train->add_option("--until", opts->until, "train only on samples that end before this time")
      ->type_name("DATE")
      ->required();
  train->add_option("--out", opts->out, "folder to write the model into")
      ->type_name("DIR")
      ->required();

  CLI::App* serve_cmd = cmd->add_subcommand(
      "serve", "Serve carbon forecasts over the Carbon Aware SDK WebAPI (dispatch reads them)");
  serve_cmd->footer(
      "Answers GET /emissions/forecasts/current?location=Z[&location=..][&dataStartAt=\n"
      "&dataEndAt=&windowSize=] and GET /emissions/bylocations/best?location=A&location=B\n"
      "[&time=&toTime=] as the Carbon Aware SDK's WebAPI does, from the learned model issued at\n"
      "the start of the signal clock's hour (seasonal-naive where the model cannot forecast:\n"
      "forecastMethod and the X-Greensched-Forecast-Method header say which); GET /metrics: \n"
      "requests, latency and the live forecast error as the truth arrives; GET /healthz.\n"
      "The model must be trained on data before the clock's start (no look-ahead), else exit "
      "2.\n\n" +
      listener_help("docs/FORECAST.md") +
      "\n\nExample: replay 2023 from April 3rd, an hour a second\n"
      "  greensched forecast train --series carbon --zones DE-LU,GB --until 2023-04-03 --out fc\n"
      "  greensched forecast serve --model fc/carbon.ubj --zones DE-LU,GB \\\n"
      "      --clock-start 2023-04-03T00:00:00Z --clock-speed 3600\n"
      "  curl -s 'localhost:8095/emissions/forecasts/current?location=DE-LU'");
  serve_cmd
      ->add_option("--model", opts->model, "carbon model file (forecast train --series carbon)")
      ->type_name("FILE")
      ->required();
  serve_cmd
      ->add_option("--zones", opts->zones,
                   "comma list of zones served (default: every zone the data has)")
      ->delimiter(',')
      ->type_name("LIST");
  add_data_dir_option(serve_cmd, opts->data_dir);
  serve_cmd->add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--clock-start", opts->clock_start,
                   "replay the series from this UTC time (default: now, live)")
      ->type_name("TIME");
  serve_cmd
      ->add_option("--clock-origin", opts->clock_origin,
                   "the UTC wall time at which the replay is at --clock-start (default: when "
                   "the service starts)")
      ->type_name("TIME");
  serve_cmd
      ->add_option("--clock-speed", opts->clock_speed,
                   "signal seconds per wall second with --clock-start (3600: an hour a "
                   "second)")
      ->capture_default_str();
  as_duration(
      serve_cmd
          ->add_option("--timeout", opts->timeout_s, "read and write deadline of every request")
          ->capture_default_str(),
      {.bare_unit_s = 1, .whole = false});
  add_port_file_option(serve_cmd, opts->port_file);
  serve_cmd->add_flag("-q,--quiet", opts->quiet, "no startup line on stderr");
  add_listener_options(serve_cmd, opts->security,
                       "file holding the bearer token every request but GET /healthz must carry "
                       "(re-read when it changes)");

  return [opts, evaluate, train, serve_cmd] {
    if (evaluate->parsed()) return run_forecast_evaluate(*opts);
    if (train->parsed()) return run_forecast_train(*opts);
    if (serve_cmd->parsed()) return run_forecast_serve(*opts);
    return fail("name a step: evaluate, train or serve", kExitUsage);
  };
}

}  // namespace greensched::app
