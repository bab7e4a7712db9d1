#include "greensched/learn/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "greensched/core/json_fields.hpp"
#include "greensched/core/parallel_for.hpp"
#include "greensched/core/text_file.hpp"
#include "greensched/learn/features.hpp"
#include "greensched/learn/learned_policy.hpp"
#include "greensched/policy/filter.hpp"
#include "greensched/policy/policies.hpp"
#include "greensched/policy/scheduler.hpp"
#include "greensched/sim/metrics.hpp"
#include "greensched/sim/simulator.hpp"
#include "greensched/trace/inflation.hpp"

namespace greensched::learn {
namespace {

constexpr std::string_view kCheckpointFormat = "greensched-train-checkpoint/1";

std::size_t param_index(bool load, int pod_class, int feature) {
  return (load ? std::size_t{kPodClassCount} * std::size_t{kFeatureCount} : 0) +
         static_cast<std::size_t>(pod_class) * kFeatureCount + static_cast<std::size_t>(feature);
}

// Which (class, feature) pairs ever differ between the feasible nodes of one pod, in one FGD
// run per training trace (every `every`-th arrival probed).
Result<std::array<std::array<bool, kFeatureCount>, kPodClassCount>> probe_variation(
    const std::vector<sim::Scenario>& scenarios, uint64_t seed, double tune, int every) {
  std::array<std::array<bool, kFeatureCount>, kPodClassCount> varies{};
  for (const sim::Scenario& scenario : scenarios) {
    const trace::Workload& w = *scenario.workload;
    Cluster cluster(w.nodes);
    Rng rng(seed);
    const std::vector<uint32_t> arrivals =
        trace::inflate(w.pods, tune, cluster.total_gpu_milli(), rng);
    auto model = std::make_shared<frag::FragmentationModel>(scenario.target);
    auto fgd = policy::make_fgd_policy(model, w.shape_count);
    policy::Scheduler scheduler(*fgd, policy::random_tie_rank(cluster.size(), rng));
    FeatureExtractor features(model, w.shape_count, scenario.power);
    PodId step = 0;
    for (const uint32_t index : arrivals) {
      const PodSpec& pod = w.pods[index];
      if (every > 0 && step % static_cast<PodId>(every) == 0) {
        features.begin(cluster, pod);
        FeatureVector low{}, high{};
        low.fill(1e300);
        high.fill(-1e300);
        for (NodeIndex n = 0; n < static_cast<NodeIndex>(cluster.size()); ++n) {
          if (policy::filter_node(cluster.spec(n), cluster.state(n), pod) !=
              policy::FilterReason::kFits)
            continue;
          const auto& o = features.options(cluster, n, pod);
          for (std::size_t i = 0; i < o.options.size(); ++i) {
            const FeatureVector x = o.features(i);
            for (int f = 0; f < kFeatureCount; ++f) {
              low[f] = std::min(low[f], x[f]);
              high[f] = std::max(high[f], x[f]);
            }
          }
        }
        const int c = pod_class(pod);
        for (int f = 0; f < kFeatureCount; ++f)
          varies[c][f] = varies[c][f] || high[f] > low[f] + 1e-12;
      }
      const policy::Decision d = scheduler.schedule(cluster, pod, rng);
      if (d.node >= 0) {
        if (Status s = cluster.allocate(step, pod, d.node, d.gpus); !s.ok())
          return Error{s.message()};
      }
      ++step;
    }
  }
  return varies;
}

// The runs of a generation: pairs of (trace index, seed), traces in turn.
std::vector<std::pair<std::size_t, uint64_t>> generation_pairs(const TrainOptions& o,
                                                               std::size_t traces, int generation) {
  Rng rng(o.seed * 0xD1B54A32D192ED03ULL + static_cast<uint64_t>(generation) * 104729U + 17U);
  std::vector<std::pair<std::size_t, uint64_t>> out;
  for (int j = 0; j < o.pairs; ++j) {
    const std::size_t t = (static_cast<std::size_t>(generation) * o.pairs + j) % traces;
    out.emplace_back(t, o.seed_low + rng.uniform(o.seed_high - o.seed_low + 1));
  }
  return out;
}

Result<PairScore> run_one(const sim::Scenario& scenario, const LinearModel* model, uint64_t seed,
                          double tune) {
  sim::RunSpec spec(model ? "learned" : "fgd", seed, tune);
  sim::PolicyMaker make;
  if (model != nullptr) {
    make = [model](const policy::PolicyContext& context) {
      return make_learned_policy(*model, "learned", context);
    };
  }
  auto r = sim::run_inflation(scenario, spec, make);
  if (!r.ok()) return Error{r.error()};
  const auto p = sim::point_at(r.value().curve, 100);
  if (!p) return Error{fmt::format("seed {}: no arrival fell in the 100 % bin", seed)};
  return PairScore{p->alloc_gpu_pct, p->power_watts};
}

nlohmann::json options_json(const TrainOptions& o) {
  return {{"traces", o.trace_names},
          {"pairs_per_generation", o.pairs},
          {"seed", o.seed},
          {"seed_pool", {o.seed_low, o.seed_high}},
          {"tune", o.tune},
          {"power_weight", o.power_weight},
          {"l2", o.l2},
          {"init_sigma", o.init_sigma},
          {"load_weights", o.load_weights},
          {"resolution", o.resolution},
          {"probe_every", o.probe_every},
          {"population", o.cem.population},
          {"elite", o.cem.elite},
          {"smoothing", o.cem.smoothing},
          {"min_sigma", o.cem.min_sigma}};
}

}  // namespace

nlohmann::json to_json(const TrainCheckpoint& c) {
  nlohmann::json history = nlohmann::json::array();
  for (const GenerationRecord& r : c.history) {
    history.push_back({{"generation", r.generation},
                       {"best", r.best},
                       {"elite_mean", r.elite_mean},
                       {"mean_model", r.mean_model},
                       {"mean_sigma", r.mean_sigma},
                       {"seconds", r.seconds}});
  }
  return {{"format", kCheckpointFormat},
          {"options", c.options},
          {"generation", c.state.generation},
          {"mean", c.state.mean},
          {"sigma", c.state.sigma},
          {"history", history},
          {"elapsed_seconds", c.elapsed_seconds}};
}

Result<TrainCheckpoint> parse_checkpoint(const nlohmann::json& j, const std::string& source) {
  auto format = string_member(j, "format", source, std::string());
  if (!j.is_object() || !format.ok() || format.value() != kCheckpointFormat) {
    return Error{fmt::format("{}: format: expected \"{}\"", source, kCheckpointFormat)};
  }
  TrainCheckpoint c;
  if (Status s = check_member(j, "options", JsonKind::kObject, source, true); !s.ok()) {
    return s.error();
  }
  c.options = *json_member(j, "options");
  auto generation = integer_member(j, "generation", source, 0, std::numeric_limits<int>::max());
  auto mean = numbers_member(j, "mean", source);
  auto sigma = numbers_member(j, "sigma", source);
  auto elapsed = number_member(j, "elapsed_seconds", source, 0.0);
  for (const Status& s : {generation.status(), mean.status(), sigma.status(), elapsed.status(),
                          check_member(j, "history", JsonKind::kArray, source, true),
                          check_elements(j, "history", JsonKind::kObject, source)}) {
    if (!s.ok()) return s.error();
  }
  c.state.generation = static_cast<int>(generation.value());
  c.state.mean = std::move(mean.value());
  c.state.sigma = std::move(sigma.value());
  c.elapsed_seconds = elapsed.value();
  if (c.state.mean.size() != LinearModel::kParameterCount ||
      c.state.sigma.size() != LinearModel::kParameterCount) {
    return Error{
        fmt::format("{}: mean, sigma: expected {} values", source, LinearModel::kParameterCount)};
  }
  const nlohmann::json& history = *json_member(j, "history");
  for (std::size_t i = 0; i < history.size(); ++i) {
    const nlohmann::json& r = history[i];
    const std::string where = fmt::format("{}: history[{}]", source, i);
    auto g = integer_member(r, "generation", where, 0, std::numeric_limits<int>::max());
    auto best = number_member(r, "best", where);
    auto elite_mean = number_member(r, "elite_mean", where);
    auto mean_model = number_member(r, "mean_model", where);
    auto mean_sigma = number_member(r, "mean_sigma", where);
    auto seconds = number_member(r, "seconds", where);
    for (const Status& s : {g.status(), best.status(), elite_mean.status(), mean_model.status(),
                            mean_sigma.status(), seconds.status()}) {
      if (!s.ok()) return s.error();
    }
    c.history.push_back(GenerationRecord{static_cast<int>(g.value()), best.value(),
                                         elite_mean.value(), mean_model.value(), mean_sigma.value(),
                                         seconds.value()});
  }
  return c;
}

Result<TrainCheckpoint> load_checkpoint(const std::string& path) {
  auto text = read_file(path);
  if (!text.ok()) return Error{fmt::format("{}: cannot open the checkpoint", path)};
  nlohmann::json j = parse_json_or_discarded(text.value());
  if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", path)};
  return parse_checkpoint(j, path);
}

Status save_checkpoint(const TrainCheckpoint& c, const std::string& path) {
  return write_text_file_atomic(path, to_json(c).dump(1) + "\n");
}

Result<PairScore> score_run(const trace::Workload& workload, const LinearModel* model,
                            uint64_t seed, double tune) {
  auto scenario = sim::make_scenario(workload, power::PowerModel::builtin());
  if (!scenario.ok()) return Error{scenario.error()};
  return run_one(scenario.value(), model, seed, tune);
}

Result<TrainResult> train(const std::vector<const trace::Workload*>& workloads,
                          const TrainOptions& options, const TrainCheckpoint* resume,
                          const std::string& checkpoint_path, const TrainProgressFn& progress) {
  if (workloads.empty()) return Error{"train: no training traces"};
  if (options.seed_high < options.seed_low) return Error{"train: empty seed pool"};
  if (options.seed_low <= 51 && options.seed_high >= 42) {
    return Error{fmt::format(
        "train: seed pool {}-{} meets 42-51, the evaluation seeds; pick seeds outside them",
        options.seed_low, options.seed_high)};
  }
  if (options.pairs <= 0 || options.cem.population < 2 || options.cem.elite < 1 ||
      options.cem.elite > options.cem.population) {
    return Error{"train: need pairs > 0, population >= 2 and 1 <= elite <= population"};
  }
  std::vector<sim::Scenario> scenarios;
  for (const trace::Workload* w : workloads) {
    auto s = sim::make_scenario(*w, power::PowerModel::builtin());
    if (!s.ok()) return Error{s.error()};
    scenarios.push_back(std::move(s.value()));
  }

  TrainResult result;
  TrainCheckpoint& ckpt = result.checkpoint;
  ckpt.options = options_json(options);
  const LinearModel start = LinearModel::fgd();
  if (resume != nullptr) {
    if (resume->options != ckpt.options) {
      return Error{fmt::format(
          "train: the checkpoint was made with other options ({}); resume with the same ones",
          resume->options.dump())};
    }
    ckpt.state = resume->state;
    ckpt.history = resume->history;
    ckpt.elapsed_seconds = resume->elapsed_seconds;
  } else {
    auto varies = probe_variation(scenarios, options.seed_low, options.tune, options.probe_every);
    if (!varies.ok()) return Error{varies.error()};
    ckpt.state.mean = start.parameters();
    ckpt.state.sigma.assign(LinearModel::kParameterCount, 0.0);
    for (int c = 0; c < kPodClassCount; ++c) {
      for (int f = 0; f < kFeatureCount; ++f) {
        if (!varies.value()[c][f]) continue;
        // fgd_score's own weight stays 1: it fixes the scale of the score.
        if (f != kFgdScore) ckpt.state.sigma[param_index(false, c, f)] = options.init_sigma;
        if (options.load_weights) ckpt.state.sigma[param_index(true, c, f)] = options.init_sigma;
      }
    }
  }
  for (double s : ckpt.state.sigma) result.trainable += s > 0 ? 1 : 0;
  const std::vector<double> start_params = start.parameters();

  // FGD's score per run, computed once.
  std::map<std::pair<std::size_t, uint64_t>, PairScore> fgd_cache;
  while (ckpt.state.generation < options.generations) {
    const auto t0 = std::chrono::steady_clock::now();
    const int g = ckpt.state.generation;
    const auto pairs = generation_pairs(options, scenarios.size(), g);
    std::vector<std::vector<double>> samples = cem_sample(ckpt.state, options.cem, options.seed);
    samples.push_back(ckpt.state.mean);  // the model so far, scored on the same runs
    std::vector<LinearModel> models;
    for (const auto& p : samples) {
      models.push_back(LinearModel::from_parameters(p).rounded());
      models.back().resolution = options.resolution;
    }

    std::vector<std::pair<std::size_t, uint64_t>> missing;
    for (const auto& p : pairs) {
      if (!fgd_cache.contains(p) && std::find(missing.begin(), missing.end(), p) == missing.end())
        missing.push_back(p);
    }
    const std::size_t runs = models.size() * pairs.size();
    std::vector<PairScore> scores(runs + missing.size());
    Status s = parallel_for(runs + missing.size(), options.jobs, [&](std::size_t i) -> Status {
      const bool baseline = i >= runs;
      const auto& pair = baseline ? missing[i - runs] : pairs[i % pairs.size()];
      auto r = run_one(scenarios[pair.first], baseline ? nullptr : &models[i / pairs.size()],
                       pair.second, options.tune);
      if (!r.ok()) return Error{r.error()};
      scores[i] = r.value();
      return Status::Ok();
    });
    if (!s.ok()) return Error{s.message()};
    for (std::size_t m = 0; m < missing.size(); ++m) fgd_cache[missing[m]] = scores[runs + m];

    std::vector<double> objective(models.size(), 0.0);
    for (std::size_t m = 0; m < models.size(); ++m) {
      double alloc = 0, power = 0;
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        const PairScore& mine = scores[m * pairs.size() + p];
        const PairScore& base = fgd_cache.at(pairs[p]);
        alloc += mine.alloc_pct - base.alloc_pct;
        power += std::max(0.0, (mine.power_watts / base.power_watts - 1.0) * 100.0);
      }
      objective[m] = (alloc - options.power_weight * power) / static_cast<double>(pairs.size());
      const std::vector<double>& w = samples[m];
      for (std::size_t i = 0; i < w.size(); ++i) {
        if (ckpt.state.sigma[i] > 0) {
          const double d = (w[i] - start_params[i]) / 0.01;
          objective[m] -= options.l2 * d * d;
        }
      }
    }
    GenerationRecord rec;
    rec.generation = g;
    rec.mean_model = objective.back();
    samples.pop_back();
    objective.pop_back();
    std::vector<double> sorted = objective;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    rec.best = sorted.front();
    const int k = std::min<int>(options.cem.elite, static_cast<int>(sorted.size()));
    for (int e = 0; e < k; ++e) rec.elite_mean += sorted[e] / k;
    cem_update(ckpt.state, options.cem, samples, objective);
    double sig = 0;
    int n = 0;
    for (double x : ckpt.state.sigma) {
      if (x > 0) {
        sig += x;
        ++n;
      }
    }
    rec.mean_sigma = n > 0 ? sig / n : 0.0;
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ckpt.elapsed_seconds += rec.seconds;
    ckpt.history.push_back(rec);
    if (!checkpoint_path.empty()) {
      if (Status cs = save_checkpoint(ckpt, checkpoint_path); !cs.ok()) return Error{cs.message()};
    }
    if (progress) progress(rec, options.generations);
  }

  result.model = LinearModel::from_parameters(ckpt.state.mean).rounded();
  result.model.resolution = options.resolution;
  nlohmann::json meta = ckpt.options;
  meta["method"] = "cross-entropy method over the linear weights (greensched train)";
  meta["generations"] = ckpt.state.generation;
  meta["trainable_weights"] = result.trainable;
  meta["train_seconds"] = std::round(ckpt.elapsed_seconds * 10) / 10;
  meta["objective"] =
      "mean over runs of alloc@100 - FGD's, minus power_weight x mean power increase over FGD "
      "in %, minus l2 x sum of ((w - w_FGD) / 0.01)^2";
  if (!ckpt.history.empty()) {
    nlohmann::json curve = nlohmann::json::array();
    for (const GenerationRecord& r : ckpt.history) {
      curve.push_back(std::round(r.mean_model * 1000) / 1000);
    }
    meta["mean_model_objective_by_generation"] = curve;
  }
  result.model.training = meta;
  return result;
}

}  // namespace greensched::learn
