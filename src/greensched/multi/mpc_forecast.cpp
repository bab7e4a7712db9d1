#include "greensched/multi/mpc_forecast.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "greensched/core/utc_time.hpp"
#include "greensched/forecast/holidays.hpp"

namespace greensched::multi {
namespace {

constexpr std::array<std::string_view, 2> kMpcForecastNames = {"seasonal-naive", "learned"};

forecast::Series site_series(const SiteSpec& site, const TimeSeries& t) {
  forecast::Series s;
  s.name = site.name;
  if (t.step_s() != forecast::kHourS || t.empty()) return s;  // only hourly series: none
  s.start_s = t.start_s();
  s.utc_offset_s = site.energy ? site.energy->utc_offset_s : 0;
  s.values = t.values();
  if (!site.holidays.empty())
    forecast::attach_holidays(forecast::builtin_holidays(), site.holidays, s);
  return s;
}

// Trains one kind on the sites' series, or says why not.
Result<std::optional<forecast::LearnedModel>> train_kind(
    const std::vector<forecast::Series>& series, const std::string& kind, int64_t until_s,
    int max_horizon_h, const forecast::TreeParams& trees, std::vector<MissingModel>& missing) {
  std::vector<forecast::ZoneSeries> zones;
  std::size_t most_days = 0, most_known = 0;
  for (const forecast::Series& s : series) {
    if (s.values.empty()) continue;
    zones.push_back({&s, nullptr});
    const std::size_t known = forecast::known_count(s, until_s);
    most_known = std::max(most_known, known);
    if (known > forecast::kMinHistoryH) {
      most_days = std::max(most_days, (known - forecast::kMinHistoryH) / 24);
    }
  }
  if (zones.empty()) return std::optional<forecast::LearnedModel>{};
  if (most_days < static_cast<std::size_t>(kMinTrainingIssueDays)) {
    missing.push_back({kind, fmt::format("{}: {} h of history before {} leave {} days to "
                                         "learn from, fewer than {}",
                                         kind, most_known, format_utc_time(until_s), most_days,
                                         kMinTrainingIssueDays)});
    return std::optional<forecast::LearnedModel>{};
  }
  forecast::TrainOptions o;
  o.trees = trees;
  o.kind = kind;
  o.until_s = until_s;
  o.max_horizon_h = std::clamp(max_horizon_h, 1, forecast::kMaxHorizonH);
  // The controller's objective is linear in price and carbon, so what it needs of a forecast
  // is the expected value: squared error in the series' unit, not the relative error of the
  // MAPE (which pulls forecasts toward the common low hours and away from rare dear ones).
  o.relative_loss = false;
  o.validation_days = kMpcValidationDays;
  auto model = forecast::LearnedModel::train(zones, o);
  if (!model.ok()) return Error{fmt::format("{} forecast: {}", kind, model.error())};
  return std::optional<forecast::LearnedModel>{std::move(model.value())};
}

}  // namespace

Result<MpcForecastKind> parse_mpc_forecast(std::string_view text) {
  for (std::size_t i = 0; i < kMpcForecastNames.size(); ++i) {
    if (text == kMpcForecastNames[i]) return static_cast<MpcForecastKind>(i);
  }
  return Error{fmt::format("unknown forecast '{}' (seasonal-naive|learned)", text)};
}

std::string_view mpc_forecast_name(MpcForecastKind kind) {
  return kMpcForecastNames[static_cast<std::size_t>(kind)];
}

void fleet_forecast_series(const Fleet& fleet, std::vector<forecast::Series>& carbon,
                           std::vector<forecast::Series>& price) {
  carbon.clear();
  price.clear();
  for (const SiteSpec& site : fleet.sites) {
    carbon.push_back(site_series(site, site.carbon));
    forecast::Series none;
    none.name = site.name;
    price.push_back(site.price ? site_series(site, *site.price) : none);
  }
}

Status check_trained_before(const forecast::LearnedModel& model, int64_t window_start_s,
                            std::string_view what) {
  if (model.trained_until_s() > window_start_s) {
    return Error{fmt::format(
        "{}: the model was trained on data until {}, after the window's start {}: its "
        "forecasts would see the hours they forecast; train it on data before the window",
        what, format_utc_time(model.trained_until_s()), format_utc_time(window_start_s))};
  }
  return Status::Ok();
}

Result<MpcForecastModels> train_mpc_forecasts(const Fleet& fleet, int64_t window_start_s,
                                              int max_horizon_h,
                                              const forecast::TreeParams& trees) {
  MpcForecastModels m;
  m.window_start_s = window_start_s;
  fleet_forecast_series(fleet, m.carbon_series, m.price_series);
  auto carbon =
      train_kind(m.carbon_series, "carbon", window_start_s, max_horizon_h, trees, m.missing);
  if (!carbon.ok()) return Error{carbon.error()};
  m.carbon = std::move(carbon.value());
  auto price = train_kind(m.price_series, "price", window_start_s, max_horizon_h, trees, m.missing);
  if (!price.ok()) return Error{price.error()};
  m.price = std::move(price.value());
  return m;
}

Result<MpcForecastModels> load_mpc_forecasts(const Fleet& fleet, int64_t window_start_s,
                                             const std::string& dir) {
  MpcForecastModels m;
  m.window_start_s = window_start_s;
  fleet_forecast_series(fleet, m.carbon_series, m.price_series);
  for (const char* kind : {"carbon", "price"}) {
    const std::string path = fmt::format("{}/{}.ubj", dir, kind);
    if (!std::filesystem::exists(path)) {
      m.missing.push_back({kind, fmt::format("{}: no such file", path)});
      continue;
    }
    auto model = forecast::LearnedModel::load(path);
    if (!model.ok()) return Error{fmt::format("{}: {}", path, model.error())};
    if (Status s = check_trained_before(model.value(), window_start_s, path); !s.ok()) {
      return Error{s.message()};
    }
    (std::string_view(kind) == "carbon" ? m.carbon : m.price) = std::move(model.value());
  }
  return m;
}

}  // namespace greensched::multi
