#include "greensched/learn/fgd_online.hpp"

#include <charconv>

#include <fmt/format.h>

#include "greensched/frag/fragmentation.hpp"
#include "greensched/learn/online_target.hpp"
#include "greensched/policy/policies.hpp"

namespace greensched::learn {
namespace {

class FgdOnlinePolicy final : public policy::Policy {
 public:
  FgdOnlinePolicy(const FgdOnlineOptions& options, std::string name, uint32_t shape_count)
      : options_(options),
        name_(std::move(name)),
        shape_count_(shape_count),
        estimator_(options.window) {}

  std::string_view name() const override { return name_; }

  void score(const Cluster& cluster, const PodSpec& pod, std::span<policy::Candidate> candidates,
             Rng& rng) override {
    estimator_.observe(pod);
    const std::size_t seen = estimator_.observed();
    // Warm-up at 1, 2, 4, ... arrivals, then every `refresh`.
    const bool warming = seen < options_.refresh && (seen & (seen - 1)) == 0;
    if (!fgd_ || warming || seen - built_at_ >= options_.refresh) rebuild();
    fgd_->score(cluster, pod, candidates, rng);
  }

  GpuMask select_gpus(const Cluster& cluster, NodeIndex node, const PodSpec& pod,
                      Rng& rng) override {
    if (!fgd_) rebuild();
    return fgd_->select_gpus(cluster, node, pod, rng);
  }

 private:
  void rebuild() {
    // A new model: its node-state interning and FGD's (state, shape) score memo are both keyed
    // to the target, so neither survives a change of target.
    model_ = std::make_shared<frag::FragmentationModel>(estimator_.target());
    fgd_ = policy::make_fgd_policy(model_, shape_count_);
    built_at_ = estimator_.observed();
  }

  FgdOnlineOptions options_;
  std::string name_;
  uint32_t shape_count_;
  OnlineTargetEstimator estimator_;
  std::shared_ptr<frag::FragmentationModel> model_;
  std::unique_ptr<policy::Policy> fgd_;
  std::size_t built_at_ = 0;
};

Result<std::size_t> parse_count(std::string_view text, std::string_view what) {
  std::size_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Error{fmt::format("fgd-online: {} '{}' is not a whole number", what, text)};
  }
  return v;
}

}  // namespace

Result<FgdOnlineOptions> parse_fgd_online_options(std::string_view arg) {
  FgdOnlineOptions o;
  if (arg.empty()) return o;
  const std::size_t slash = arg.find('/');
  const std::string_view window = arg.substr(0, slash);
  if (window == "all") {
    o.window = 0;
  } else {
    auto w = parse_count(window, "window");
    if (!w.ok()) return Error{w.error()};
    if (w.value() == 0) return Error{"fgd-online: window must be > 0 (or 'all')"};
    o.window = w.value();
  }
  if (slash != std::string_view::npos) {
    auto k = parse_count(arg.substr(slash + 1), "refresh");
    if (!k.ok()) return Error{k.error()};
    if (k.value() == 0) return Error{"fgd-online: refresh must be > 0"};
    o.refresh = k.value();
  }
  return o;
}

std::unique_ptr<policy::Policy> make_fgd_online_policy(const FgdOnlineOptions& options,
                                                       std::string name,
                                                       const policy::PolicyContext& context) {
  return std::make_unique<FgdOnlinePolicy>(options, std::move(name), context.shape_count);
}

}  // namespace greensched::learn
